// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RDMA channel tests. RdmaChannelTest runs anywhere (no device needed).
// DeviceLabRdmaChannelTest needs an RDMA device and skips without one; in
// the lab (tests/lab) it runs on rxe0 (lab_channel_fixture.h).

#include "client/src/rdma/rdma_channel.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <iostream>
#include <set>
#include <thread>
#include <vector>

#include "client/src/abortable_channel.h"
#include "client/src/rdma/channel_impl.h"
#include "client/src/rdma/device.h"
#include "client/src/rdma/lab_channel_fixture.h"
#include "gtest/gtest.h"

namespace rdmad::internal {
namespace {

using namespace lab;

uint64_t ReadCounter(const std::string& device, const char* name) {
  std::ifstream in("/sys/class/infiniband/" + device + "/ports/1/hw_counters/" + name);
  uint64_t v = 0;
  if (!(in >> v)) return UINT64_MAX;
  return v;
}

TEST(RdmaChannelTest, AWaitSpinsOnlyWhereAnotherCpuCanAnswer) {
  EXPECT_EQ(SpinTimeFor(50, 2), 50us);
  EXPECT_EQ(SpinTimeFor(50, 64), 50us);
  EXPECT_EQ(SpinTimeFor(50, 0), 50us) << "CPUs unknown: as configured";
  EXPECT_EQ(SpinTimeFor(50, 1), 0us) << "one CPU: the peer process cannot run while we spin";
  EXPECT_EQ(SpinTimeFor(0, 8), 0us);
}

TEST(RdmaChannelTest, ASpinningWaitReadsTheClockOncePerLooksPerClockSteps) {
  uint32_t steps = 0;
  std::vector<uint32_t> clocks;
  for (int i = 0; i < 4 * int(kLooksPerClock); ++i) {
    if (SpinStep(&steps)) clocks.push_back(steps);
  }
  EXPECT_EQ(steps, 4 * kLooksPerClock);
  EXPECT_EQ(clocks, (std::vector<uint32_t>{kLooksPerClock, 2 * kLooksPerClock, 3 * kLooksPerClock,
                                           4 * kLooksPerClock}));
}

TEST(RdmaChannelTest, CreateOnAMissingDeviceFailsCleanly) {
  RdmaPlan plan = LabPlan();
  plan.device = "no_such_rdma_device9";
  auto pending = PendingRdmaChannel::Create(plan);
  ASSERT_FALSE(pending.ok());
  StatusCode code = pending.status().code();
  EXPECT_TRUE(code == StatusCode::kNotFound || code == StatusCode::kUnavailable)
      << pending.status().ToString();
  EXPECT_NE(pending.status().message().find("no_such_rdma_device9"), std::string::npos)
      << pending.status().ToString();
  std::cout << "[ rdma     ] " << pending.status().ToString() << "\n";
}

TEST_F(DeviceLabRdmaChannelTest, ConnectsAndDescribesTheChannel) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  const ChannelInfo& info = a_->info();
  EXPECT_EQ(info.transport, ChannelTransport::kRdma);
  EXPECT_EQ(info.local_device, plan_.device);
  EXPECT_EQ(info.peer_qpn, b_->info().local_qpn);
  EXPECT_EQ(info.local_qpn, b_->info().peer_qpn);
  EXPECT_EQ(info.mtu, std::min(info.local_active_mtu, info.peer_active_mtu));
  EXPECT_EQ(info.gid_type, "RoCE v2");
  EXPECT_EQ(info.slot_size, plan_.slot_size);
  EXPECT_TRUE(a_->status().ok());
}

TEST_F(DeviceLabRdmaChannelTest, MessagesOfEverySizeBothWays) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  // Up to two slots eagerly, then by rendezvous in 64 KiB pieces.
  std::vector<size_t> sizes = {0, 1, 100, 4096, 8192, 8193, 65536, 65537, 1u << 20, 16u << 20};
  if (Env("RDMA_TEST_SKIP_64M").empty()) sizes.push_back(64u << 20);
  uint64_t seed = 1;
  for (size_t size : sizes) {
    ASSERT_NO_FATAL_FAILURE(Transfer(*a_, *b_, size, seed++));
    ASSERT_NO_FATAL_FAILURE(Transfer(*b_, *a_, size, seed++));
  }
  // Every rendezvous chunk goes back to the process's pool (a sender's
  // when it next hears from the peer, the rest when the channels end).
  auto device = RdmaDevice::Open(plan_.device);
  ASSERT_TRUE(device.ok());
  a_.reset();
  b_.reset();
  EXPECT_EQ((*device)->rndv_pool().free_chunks(), (*device)->rndv_pool().chunks());
}

TEST_F(DeviceLabRdmaChannelTest, AnIdleChannelRegistersAtMost256KiBWithTheDefaults) {
  RdmaPlan plan = plan_;
  RdmaPlan defaults;
  plan.qp.send_depth = 127;  // qp.send_depth's default
  plan.qp.recv_depth = 31;   // qp.recv_depth's default
  plan.slot_size = defaults.slot_size;
  auto pending = PendingRdmaChannel::Create(plan);
  ASSERT_TRUE(pending.ok()) << pending.status().ToString();
  std::cout << "[ rdma     ] an idle channel registers " << (*pending)->registered_bytes()
            << " bytes (slot " << plan.slot_size << " B)\n";
  // Its first 4 ring slots (no staging chunk before a staged send); grown
  // by traffic, the ring's 31 slots and 16 chunks are 188 KiB
  // (channel_growth_test.cc).
  EXPECT_EQ((*pending)->registered_bytes(), size_t(4) * plan.slot_size);
  EXPECT_LE(size_t(31 + 16) * plan.slot_size, 256u << 10);
}

// The first slots of many channel ends come from a few shared
// registrations (channel_slab.h), and channels made from them carry data.
TEST_F(DeviceLabRdmaChannelTest, TwentyChannelEndsShareAFewRegistrationsAndGiveThemBack) {
  auto device = RdmaDevice::Open(plan_.device);
  ASSERT_TRUE(device.ok());
  ChannelSlab& slab = (*device)->channel_slab();
  const size_t runs_before = slab.runs(), out_before = slab.pieces_out();
  std::vector<std::unique_ptr<PendingRdmaChannel>> ends;
  std::set<uint64_t> rings;
  for (int i = 0; i < 20; ++i) {
    auto pending = PendingRdmaChannel::Create(plan_);
    ASSERT_TRUE(pending.ok()) << pending.status().ToString();
    EXPECT_TRUE(rings.insert((*pending)->local().ring_address).second);
    ends.push_back(std::move(pending).value());
  }
  EXPECT_EQ(slab.pieces_out(), out_before + 20);
  // Runs of 1, 2, 4, 8 and 16 pieces hold 31: at most five new ones.
  EXPECT_LE(slab.runs(), runs_before + 5);
  std::cout << "[ rdma     ] 20 channel ends: " << slab.runs() - runs_before
            << " new registrations, " << (slab.registered_bytes() >> 10) << " KiB\n";
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));  // two more ends, in runs the 20 share
  ASSERT_NO_FATAL_FAILURE(Transfer(*a_, *b_, 100000, 3));
  ASSERT_NO_FATAL_FAILURE(Transfer(*b_, *a_, 3000, 4));
  a_.reset();
  b_.reset();
  ends.clear();
  EXPECT_EQ(slab.pieces_out(), out_before);
  // Whole runs let go, but one per size: the rings' and the first staging
  // chunks' (the two Transfers staged).
  EXPECT_LE(slab.runs(), runs_before + 2);
}

TEST_F(DeviceLabRdmaChannelTest, LargeSlotsCarryMediumMessagesEagerly) {
  plan_.slot_size = 64 * 1024;
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  uint64_t seed = 50;
  for (size_t size : {size_t(65537), size_t(131072), size_t(131073), size_t(1) << 20}) {
    ASSERT_NO_FATAL_FAILURE(Transfer(*a_, *b_, size, seed++));
    ASSERT_NO_FATAL_FAILURE(Transfer(*b_, *a_, size, seed++));
  }
}

// A peer's malformed rendezvous ends the channel with a clear status; the
// process goes on and the next channel works.
TEST_F(DeviceLabRdmaChannelTest, AMalformedRendezvousFromThePeerEndsOnlyThatChannel) {
  struct Case {
    const char* name;
    Imm imm;
    std::vector<uint8_t> payload;
    StatusCode code;
    const char* says;
  };
  auto descriptor = [](uint64_t addr, uint32_t rkey, uint32_t len) {
    std::vector<uint8_t> raw(kRndvDescriptorBytes);
    EncodeRndv(RndvDescriptor{addr, rkey, len}, raw.data());
    return raw;
  };
  std::vector<uint8_t> target(4096);
  Imm rndv{MessageType::kRndv, true, true, 0, 0};
  Imm too_many_done{MessageType::kData, true, true, 0, 200};
  std::vector<Case> cases = {
      {"short descriptor", rndv, std::vector<uint8_t>(8), StatusCode::kDataLoss, "descriptor of 8"},
      {"length 0", rndv, descriptor(1, 2, 0), StatusCode::kDataLoss, "descriptor of 0 bytes"},
      {"length 1 MiB", rndv, descriptor(1, 2, 1u << 20), StatusCode::kDataLoss, "at most 65536"},
      {"bad rkey", rndv, descriptor(reinterpret_cast<uintptr_t>(target.data()), 0xdead, 4096),
       StatusCode::kUnavailable, "READ (rendezvous)"},
      {"done never sent", too_many_done, {1, 2, 3}, StatusCode::kDataLoss, "reported 200"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ASSERT_NO_FATAL_FAILURE(Connect(plan_));
    auto* evil = dynamic_cast<RdmaChannel*>(a_.get());
    ASSERT_NE(evil, nullptr);
    ASSERT_TRUE(evil->PostRawForTesting(c.imm, c.payload.data(), uint32_t(c.payload.size())).ok());
    auto got = b_->Recv(10s);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), c.code) << got.status().ToString();
    EXPECT_NE(got.status().message().find(c.says), std::string::npos) << got.status().ToString();
    std::cout << "[ rdma     ] " << c.name << ": " << got.status().ToString() << "\n";
  }
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  ASSERT_NO_FATAL_FAILURE(Transfer(*a_, *b_, 300000, 77));
}

// A landing pool too small for the channels' share, and channels that may
// register as few send chunks: with none, senders fall back to slots;
// receivers read into a buffer registered for the piece; nothing waits on
// another channel's chunks, and every byte arrives.
TEST_F(DeviceLabRdmaChannelTest, AStarvedRendezvousPoolFallsBackAndLosesNothing) {
  auto device = RdmaDevice::Open(plan_.device);
  ASSERT_TRUE(device.ok());
  for (uint32_t chunks : {0u, 1u, 3u}) {
    SCOPED_TRACE(std::to_string(chunks) + " chunks");
    a_.reset();
    b_.reset();
    (*device)->ReplaceRndvPoolForTesting(chunks);
    ASSERT_NO_FATAL_FAILURE(Connect(plan_));
    uint64_t seed = 100 + chunks * 10;
    for (size_t size : {size_t(100000), size_t(1) << 20}) {
      ASSERT_NO_FATAL_FAILURE(Transfer(*a_, *b_, size, seed++));
      ASSERT_NO_FATAL_FAILURE(Transfer(*b_, *a_, size, seed++));
    }
    // Both ways at once on the tiny pool.
    std::vector<uint8_t> x = Pattern(600000, seed), y = Pattern(700000, seed + 1);
    auto ab = std::async(std::launch::async, [&] { return a_->Send(x.data(), x.size()); });
    auto ba = std::async(std::launch::async, [&] { return b_->Send(y.data(), y.size()); });
    auto at_b = b_->Recv(60s);
    auto at_a = a_->Recv(60s);
    ASSERT_TRUE(ab.get().ok());
    ASSERT_TRUE(ba.get().ok());
    ASSERT_TRUE(at_b.ok()) << at_b.status().ToString();
    ASSERT_TRUE(at_a.ok()) << at_a.status().ToString();
    EXPECT_TRUE(*at_b == x);
    EXPECT_TRUE(*at_a == y);
    a_.reset();
    b_.reset();
    EXPECT_EQ((*device)->rndv_pool().free_chunks(), chunks);
  }
  (*device)->ReplaceRndvPoolForTesting(RndvPool::kDefaultChunks);
}

TEST_F(DeviceLabRdmaChannelTest, SendsFromARegisteredRegion) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  std::vector<uint8_t> buf = Pattern((1u << 20) + 64, 7);
  auto region = a_->RegisterMemory(buf.data(), buf.size());
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  for (auto [offset, len] :
       {std::pair<size_t, size_t>{3, 1u << 20}, {0, 10}, {5, 0}, {64, 200000}}) {
    auto sent = std::async(std::launch::async, [&] { return a_->Send(**region, offset, len); });
    auto got = b_->Recv(30s);
    ASSERT_TRUE(sent.get().ok());
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got->size(), len);
    EXPECT_TRUE(std::equal(got->begin(), got->end(), buf.begin() + offset)) << offset << "+" << len;
  }
  EXPECT_EQ(a_->Send(**region, buf.size() - 1, 2).code(), StatusCode::kOutOfRange);
  // 16 MiB: through the channel's chunks, not shown in place.
  std::vector<uint8_t> big = Pattern(16u << 20, 8);
  auto big_region = a_->RegisterMemory(big.data(), big.size());
  ASSERT_TRUE(big_region.ok()) << big_region.status().ToString();
  auto start = Clock::now();
  auto sent = std::async(std::launch::async, [&] { return a_->Send(**big_region, 0, big.size()); });
  auto received = b_->Recv(60s);
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  ASSERT_TRUE(sent.get().ok());
  ASSERT_TRUE(received.ok()) << received.status().ToString();
  EXPECT_EQ(Checksum(received->data(), received->size()), Checksum(big.data(), big.size()));
  std::cout << "[ rdma     ] " << big.size() << " B from a registered region in " << secs * 1e3
            << " ms: " << big.size() / secs / 1e6 << " MB/s\n";
  // A region registered through one channel works on another on the device.
  auto back = std::async(std::launch::async, [&] { return b_->Send(**region, 0, 4096); });
  auto got = a_->Recv(30s);
  ASSERT_TRUE(back.get().ok());
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(std::equal(got->begin(), got->end(), buf.begin()));
}

TEST_F(DeviceLabRdmaChannelTest, SlowReceiverNeverCausesRnrRetries) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  uint64_t rnr_rcvd = ReadCounter(plan_.device, "rcvd_rnr_err");
  uint64_t rnr_sent = ReadCounter(plan_.device, "send_rnr_err");
  constexpr int kMessages = 10000;
  auto start = Clock::now();
  auto receiver = std::async(std::launch::async, [&]() -> std::string {
    for (int i = 0; i < kMessages; ++i) {
      if (i % 1000 == 500) std::this_thread::sleep_for(50ms);  // slow now and then
      if (i % 100 == 7) std::this_thread::sleep_for(1ms);
      auto got = b_->Recv(30s);
      if (!got.ok()) return "message " + std::to_string(i) + ": " + got.status().ToString();
      size_t want = 8 + i % 200;
      if (got->size() != want) return "message " + std::to_string(i) + ": wrong size";
      int seq = 0;
      std::memcpy(&seq, got->data(), sizeof(seq));
      if (seq != i) return "message " + std::to_string(i) + " arrived as " + std::to_string(seq);
    }
    return "";
  });
  std::vector<uint8_t> msg(300, 0xab);
  for (int i = 0; i < kMessages; ++i) {
    std::memcpy(msg.data(), &i, sizeof(i));
    Status s = a_->Send(msg.data(), 8 + i % 200);
    ASSERT_TRUE(s.ok()) << "message " << i << ": " << s.ToString();
  }
  EXPECT_EQ(receiver.get(), "");
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  std::cout << "[ rdma     ] " << kMessages << " small messages in " << secs * 1e3 << " ms ("
            << kMessages / secs << " msg/s, slow receiver)\n";
  if (rnr_rcvd == UINT64_MAX || rnr_sent == UINT64_MAX) {
    GTEST_SKIP() << plan_.device << " has no rcvd_rnr_err/send_rnr_err counters";
  }
  EXPECT_EQ(ReadCounter(plan_.device, "rcvd_rnr_err"), rnr_rcvd);
  EXPECT_EQ(ReadCounter(plan_.device, "send_rnr_err"), rnr_sent);
}

TEST_F(DeviceLabRdmaChannelTest, PingPongLatency) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  constexpr int kRounds = 500;
  auto echo = std::async(std::launch::async, [&] {
    for (int i = 0; i < kRounds; ++i) {
      auto got = b_->Recv(30s);
      if (!got.ok() || !b_->Send(got->data(), got->size()).ok()) return false;
    }
    return true;
  });
  std::vector<double> us;
  std::vector<uint8_t> msg(64, 1);
  for (int i = 0; i < kRounds; ++i) {
    auto t0 = Clock::now();
    ASSERT_TRUE(a_->Send(msg.data(), msg.size()).ok());
    auto got = a_->Recv(30s);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  EXPECT_TRUE(echo.get());
  std::sort(us.begin(), us.end());
  std::cout << "[ rdma     ] 64 B round trip: min " << us.front() << " us, p50 "
            << us[us.size() / 2] << " us, p99 " << us[us.size() * 99 / 100] << " us\n";
}

TEST_F(DeviceLabRdmaChannelTest, WritesAndReadsARemoteRegion) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  // The acceptor exposes a region and sends its descriptor as a message.
  std::vector<uint8_t> exposed(1u << 20, 0);
  auto target = b_->RegisterMemory(exposed.data(), exposed.size());
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  std::vector<uint8_t> desc = (*target)->descriptor().Serialize();
  ASSERT_TRUE(b_->Send(desc.data(), desc.size()).ok());
  auto got = a_->Recv(10s);
  ASSERT_TRUE(got.ok());
  auto remote = RegionDescriptor::Parse(got->data(), got->size());
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  EXPECT_EQ(remote->length, exposed.size());

  std::vector<uint8_t> local = Pattern(512 * 1024, 99);
  auto source = a_->RegisterMemory(local.data(), local.size());
  ASSERT_TRUE(source.ok());
  Status s = a_->Write(**source, 0, *remote, 4096, local.size());
  ASSERT_TRUE(s.ok()) << s.ToString();
  // Tell the acceptor; RC ordering puts the data there before the message.
  ASSERT_TRUE(a_->Send("done", 4).ok());
  ASSERT_TRUE(b_->Recv(10s).ok());
  EXPECT_TRUE(std::equal(local.begin(), local.end(), exposed.begin() + 4096));
  EXPECT_EQ(exposed[4095], 0);

  std::vector<uint8_t> back(local.size(), 0);
  auto sink = a_->RegisterMemory(back.data(), back.size());
  ASSERT_TRUE(sink.ok());
  s = a_->Read(**sink, 0, *remote, 4096, back.size());
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Checksum(back.data(), back.size()), Checksum(local.data(), local.size()));

  // Out of range, on either side: refused before anything is posted.
  EXPECT_EQ(a_->Write(**source, 0, *remote, exposed.size() - 10, 11).code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(a_->Write(**source, 1, *remote, 0, local.size()).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(a_->Read(**sink, 0, *remote, exposed.size() + 1, 0).code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(a_->status().ok()) << a_->status().ToString();
  // Still usable afterwards.
  ASSERT_TRUE(a_->Send("x", 1).ok());
  EXPECT_TRUE(b_->Recv(10s).ok());
}

// Memory is registered once per process and device: the same range and
// access from two channels is one MR; a read-only registration is its own.
TEST_F(DeviceLabRdmaChannelTest, TheSameRangeIsOneRegistrationPerDevice) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  std::vector<uint8_t> cache(1u << 20, 0);
  auto by_a = a_->RegisterMemory(cache.data(), cache.size());
  auto by_b = b_->RegisterMemory(cache.data(), cache.size());
  auto read_only = b_->RegisterMemory(cache.data(), cache.size(), MemoryAccess::kRemoteRead);
  auto half = b_->RegisterMemory(cache.data(), cache.size() / 2);
  ASSERT_TRUE(by_a.ok() && by_b.ok() && read_only.ok() && half.ok());
  EXPECT_EQ((*by_a)->descriptor().rkey, (*by_b)->descriptor().rkey);
  EXPECT_NE((*read_only)->descriptor().rkey, (*by_b)->descriptor().rkey);
  EXPECT_NE((*half)->descriptor().rkey, (*by_b)->descriptor().rkey);
  EXPECT_EQ((*read_only)->access(), MemoryAccess::kRemoteRead);

  // The first user gone, the registration serves the other.
  RegionDescriptor exposed = (*by_b)->descriptor();
  by_a->reset();
  std::vector<uint8_t> local = Pattern(64 * 1024, 7);
  auto source = a_->RegisterMemory(local.data(), local.size());
  ASSERT_TRUE(source.ok());
  Status s = a_->Write(**source, 0, exposed, 4096, local.size());
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(std::equal(local.begin(), local.end(), cache.begin() + 4096));
}

TEST_F(DeviceLabRdmaChannelTest, AbortAfterThePeersCloseKeepsItsMessages) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  ASSERT_TRUE(a_->Send("one", 3).ok());
  a_->Close();  // the CLOSE has completed: it is in b's CQ
  dynamic_cast<AbortableChannel&>(*b_).Abort(Status::Unavailable("closed by peer hostA"));
  auto got = b_->Recv(5s);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::string(got->begin(), got->end()), "one");
  Status closed = b_->Recv(5s).status();
  EXPECT_EQ(closed.code(), StatusCode::kUnavailable);
  EXPECT_NE(closed.message().find("closed by peer"), std::string::npos) << closed.ToString();
}

TEST_F(DeviceLabRdmaChannelTest, AWrongPeerQpnFailsTheChannelInsteadOfHanging) {
  plan_.qp.timeout = 12;  // ~17 ms
  plan_.qp.retry_cnt = 1;
  ASSERT_NO_FATAL_FAILURE(
      Connect(plan_, [](RdmaEndpoint& e) { e.qpn = (e.qpn + 0x1000) & 0xFFFFFF; }));
  std::vector<uint8_t> buf(4096, 1);
  auto region = a_->RegisterMemory(buf.data(), buf.size());
  ASSERT_TRUE(region.ok());
  auto t0 = Clock::now();
  // A small message, even from a region, is copied and posted: Send does
  // not wait for the peer's ACK. The failure comes with the SEND's
  // completion, and the next call that waits sees it.
  EXPECT_TRUE(a_->Send(**region, 0, buf.size()).ok());
  Status s = a_->Recv(30s).status();
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("retry"), std::string::npos) << s.ToString();
  EXPECT_LT(Clock::now() - t0, 30s);
  std::cout << "[ rdma     ] wrong QPN: " << s.ToString() << "\n";
  EXPECT_EQ(a_->status(), s);
  EXPECT_EQ(a_->Send("x", 1), s);
  EXPECT_EQ(a_->Recv(1s).status(), s);
}

TEST_F(DeviceLabRdmaChannelTest, AnUnreachableGidFailsWithAClearStatus) {
  plan_.qp.timeout = 12;
  plan_.qp.retry_cnt = 1;
  auto initiator = PendingRdmaChannel::Create(plan_);
  ASSERT_TRUE(initiator.ok()) << initiator.status().ToString();
  auto acceptor = PendingRdmaChannel::Create(plan_);
  ASSERT_TRUE(acceptor.ok());
  RdmaEndpoint bad = (*acceptor)->local();
  bad.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 77};  // nobody
  Status s = (*initiator)->ReadyToReceive(bad);
  if (!s.ok()) {  // some providers resolve the route at RTR
    std::cout << "[ rdma     ] unreachable GID at RTR: " << s.ToString() << "\n";
    return;
  }
  auto channel = (*initiator)->ReadyToSend(ChannelInfo{});
  ASSERT_TRUE(channel.ok()) << channel.status().ToString();
  ASSERT_TRUE((*channel)->Send("hello", 5).ok());  // inline: returns at once
  auto got = (*channel)->Recv(30s);                // the failure surfaces here
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable) << got.status().ToString();
  std::cout << "[ rdma     ] unreachable GID: " << got.status().ToString() << "\n";
}

TEST_F(DeviceLabRdmaChannelTest, DmabufIsUnimplementedWhereTheDeviceCannot) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  int fd = memfd_create("not-a-dmabuf", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 4096), 0);
  auto region = a_->RegisterDmabuf(fd, 0, 4096);
  close(fd);
  ASSERT_FALSE(region.ok());  // a memfd is not a dmabuf, whatever the device
  std::cout << "[ rdma     ] RegisterDmabuf: " << region.status().ToString() << "\n";
  if (plan_.device.rfind("rxe", 0) == 0) {  // Soft-RoCE has no dmabuf support
    EXPECT_EQ(region.status().code(), StatusCode::kUnimplemented) << region.status().ToString();
  }
  EXPECT_EQ(a_->RegisterDmabuf(-1, 0, 4096).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(a_->RegisterMemory(nullptr, 10).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(a_->status().ok());
}

// A region the channel did not register (here one of the application's
// own MemoryRegion classes) is refused by every call that takes one, and
// the channel goes on.
TEST_F(DeviceLabRdmaChannelTest, RefusesARegionItDidNotRegister) {
  class ForeignRegion final : public MemoryRegion {
   public:
    uint8_t* data() const override { return bytes_; }
    size_t size() const override { return sizeof(bytes_); }
    RegionDescriptor descriptor() const override {
      RegionDescriptor d;
      d.address = uint64_t(bytes_);
      d.length = sizeof(bytes_);
      d.rkey = 1;
      return d;
    }
    MemoryAccess access() const override { return MemoryAccess::kLocal; }

   private:
    mutable uint8_t bytes_[64] = {};
  } foreign;
  Connect(plan_);
  std::vector<uint8_t> far(64);
  auto remote = b_->RegisterMemory(far.data(), far.size());
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  const RegionDescriptor there = (*remote)->descriptor();
  Status wrote = a_->Write(foreign, 0, there, 0, 8);
  EXPECT_EQ(wrote.code(), StatusCode::kInvalidArgument) << wrote.ToString();
  EXPECT_NE(wrote.message().find("not registered by an RDMA channel"), std::string::npos)
      << wrote.ToString();
  EXPECT_EQ(a_->Read(foreign, 0, there, 0, 8).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(a_->Send(foreign, 0, 8).code(), StatusCode::kInvalidArgument);
  auto submitted = a_->Submit({{TransferOp::Kind::kWrite, &foreign, 0, there, 0, 8}});
  EXPECT_EQ(submitted.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(a_->Prepare({{TransferOp::Kind::kWrite, &foreign, 0, there, 0, 8}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(a_->status().ok()) << a_->status().ToString();
  std::vector<uint8_t> near(64, 0x5a);
  auto own = a_->RegisterMemory(near.data(), near.size());
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  ASSERT_TRUE(a_->Write(**own, 0, there, 0, near.size()).ok());
  EXPECT_EQ(far, near);
}

TEST_F(DeviceLabRdmaChannelTest, RejectsABadEndpointAndMisuse) {
  auto pending = PendingRdmaChannel::Create(plan_);
  ASSERT_TRUE(pending.ok()) << pending.status().ToString();
  const RdmaEndpoint& local = (*pending)->local();
  EXPECT_LE(local.qpn, 0xFFFFFFu);
  EXPECT_LE(local.psn, 0xFFFFFFu);
  EXPECT_EQ(local.ring_slots, plan_.qp.recv_depth);
  EXPECT_TRUE(ValidateRdmaEndpoint(local).ok()) << ValidateRdmaEndpoint(local).ToString();
  EXPECT_EQ((*pending)->ReadyToSend(ChannelInfo{}).status().code(),
            StatusCode::kFailedPrecondition);
  RdmaEndpoint bad = local;
  bad.psn = 1u << 24;
  Status s = (*pending)->ReadyToReceive(bad);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("psn"), std::string::npos) << s.ToString();

  RdmaPlan no_gid = plan_;
  no_gid.gid_index = 200;
  EXPECT_FALSE(PendingRdmaChannel::Create(no_gid).ok());
}

}  // namespace
}  // namespace rdmad::internal
