// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// A peer reaches only what its channel sent it (channel_rndv.cc,
// send_chunks.h, channel_send_window.cc), tried as a peer that keeps the rendezvous descriptors it
// was given and READs with them through the public API: at other offsets,
// at another channel's chunks, at the process's landing pool, and after it
// reported its pieces read. Needs an RDMA device (in the lab: rxe0,
// lab_channel_fixture.h); every refused READ ends the thief's channel, so
// each attack connects a fresh pair.

#include <infiniband/verbs.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <iostream>
#include <thread>
#include <vector>

#include "client/src/rdma/channel_impl.h"
#include "client/src/rdma/device.h"
#include "client/src/rdma/lab_channel_fixture.h"
#include "gtest/gtest.h"

namespace rdmad::internal {
namespace {

using namespace lab;

constexpr int64_t kSegment = int64_t(SendChunks::kSegmentChunks) * RndvPool::kChunkSize;

class DeviceLabRdmaRendezvousTest : public DeviceLabRdmaChannelTest {
 protected:
  static RdmaChannel& Impl(Channel& c) { return dynamic_cast<RdmaChannel&>(c); }

  // Sends `bytes` from `from` (Send returns once the pieces are described:
  // they wait in from's chunks) and waits until `to` holds a descriptor.
  static RndvDescriptor Describe(Channel& from, Channel& to, const std::vector<uint8_t>& bytes) {
    EXPECT_TRUE(from.Send(bytes.data(), bytes.size()).ok());
    auto deadline = Clock::now() + 10s;
    while (Clock::now() < deadline) {
      Impl(to).DrainForTesting();
      if (auto d = Impl(to).LastRndvDescriptorForTesting()) return *d;
      std::this_thread::sleep_for(1ms);
    }
    ADD_FAILURE() << "no rendezvous descriptor arrived";
    return {};
  }

  // What the peer would do with a descriptor it kept: READ len bytes at
  // addr with its rkey into memory of its own.
  static Status Steal(Channel& thief, uint32_t rkey, uint64_t addr, uint32_t len,
                      std::vector<uint8_t>* loot) {
    loot->assign(len, 0);
    auto region = thief.RegisterMemory(loot->data(), loot->size());
    if (!region.ok()) return region.status();
    RegionDescriptor remote;
    remote.address = addr;
    remote.length = len;
    remote.rkey = rkey;
    Status s = thief.Read(**region, 0, remote, 0, len);
    std::cout << "[ rdma     ] READ at " << std::hex << addr << std::dec << " (+" << len
              << "): " << s.ToString() << "\n";
    return s;
  }

  // Waits until the peer reported every piece of `sender` read.
  static void WaitUntilRead(Channel& sender) {
    auto deadline = Clock::now() + 10s;
    while (Impl(sender).SendChunksTakenForTesting() > 0 && Clock::now() < deadline) {
      Impl(sender).DrainForTesting();
      std::this_thread::sleep_for(1ms);
    }
    ASSERT_EQ(Impl(sender).SendChunksTakenForTesting(), 0u);
  }

  static void ExpectRefused(const Status& s) {
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("remote access error"), std::string::npos) << s.ToString();
  }
};

TEST_F(DeviceLabRdmaRendezvousTest, APeerReadsItsPieceAndNothingOutsideItsChannelsChunks) {
  // In the piece: what the peer was sent (the READ itself works).
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  std::vector<uint8_t> message = Pattern(RndvPool::kChunkSize, 11);  // one piece
  RndvDescriptor d = Describe(*a_, *b_, message);
  ASSERT_EQ(d.len, RndvPool::kChunkSize);
  std::vector<uint8_t> loot;
  ASSERT_TRUE(Steal(*b_, d.rkey, d.addr, d.len, &loot).ok());
  EXPECT_TRUE(loot == message);

  // Past the channel's segment of chunks and before it.
  for (int64_t offset : {kSegment, -kSegment, int64_t(16) << 20, -(int64_t(16) << 20)}) {
    SCOPED_TRACE(offset);
    ASSERT_NO_FATAL_FAILURE(Connect(plan_));
    RndvDescriptor piece = Describe(*a_, *b_, message);
    ExpectRefused(Steal(*b_, piece.rkey, piece.addr + offset, 4096, &loot));
  }

  // The process's landing pool, where it READs what its peers send it.
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  auto device = RdmaDevice::Open(plan_.device);  // the one the channels use
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  RndvPool& pool = (*device)->rndv_pool();
  std::optional<uint32_t> landing = pool.Take();
  ASSERT_TRUE(landing.has_value()) << "the landing pool registers on first use";
  pool.Give(*landing);
  RndvDescriptor piece = Describe(*a_, *b_, message);
  ExpectRefused(
      Steal(*b_, piece.rkey, reinterpret_cast<uintptr_t>(pool.chunk(*landing)), 4096, &loot));
}

TEST_F(DeviceLabRdmaRendezvousTest, AnotherChannelsMessagesAreOutOfReachBeforeAndAfterDone) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  std::unique_ptr<Channel> victim = std::move(a_), thief_end = std::move(b_);
  std::vector<uint8_t> message = Pattern(RndvPool::kChunkSize, 21);
  RndvDescriptor d = Describe(*victim, *thief_end, message);
  auto got = thief_end->Recv(10s);  // reads every piece and reports them done
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(*got == message);
  ASSERT_NO_FATAL_FAILURE(WaitUntilRead(*victim));

  // The same process sends a secret to another peer, and it waits there.
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  std::vector<uint8_t> secret = Pattern(RndvPool::kChunkSize, 22);
  RndvDescriptor other = Describe(*a_, *b_, secret);
  EXPECT_NE(other.rkey, d.rkey) << "two channels share a registration";

  // Its chunk through the thief's key: refused.
  std::vector<uint8_t> loot;
  ExpectRefused(Steal(*thief_end, d.rkey, other.addr, 4096, &loot));
  EXPECT_FALSE(std::equal(loot.begin(), loot.end(), secret.begin()));
  // The other peer still gets its message whole.
  auto at_b = b_->Recv(10s);
  ASSERT_TRUE(at_b.ok()) << at_b.status().ToString();
  EXPECT_TRUE(*at_b == secret);

  // The thief's own chunk after done: only what the thief was sent.
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  std::unique_ptr<Channel> victim2 = std::move(a_), thief2 = std::move(b_);
  RndvDescriptor mine = Describe(*victim2, *thief2, message);
  got = thief2->Recv(10s);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_NO_FATAL_FAILURE(WaitUntilRead(*victim2));
  ASSERT_TRUE(Steal(*thief2, mine.rkey, mine.addr, mine.len, &loot).ok());
  EXPECT_TRUE(loot == message) << "the chunk holds something this peer was not sent";
}

TEST_F(DeviceLabRdmaRendezvousTest, ARegionForPeersIsShownThroughAWindowUntilSendReturns) {
  // A region with other bytes before and after the message (more pieces
  // than the channel's share of chunks): the message goes in place, under
  // a window's rkey, never the region's.
  constexpr size_t kEdge = RndvPool::kChunkSize;
  size_t size = size_t(RndvPool::kChannelShare + 4) * RndvPool::kChunkSize;
  std::vector<uint8_t> buf = Pattern(kEdge + size + kEdge, 41);
  uint64_t begin = reinterpret_cast<uintptr_t>(buf.data()) + kEdge;
  std::vector<uint8_t> message(buf.begin() + kEdge, buf.begin() + kEdge + size);
  std::vector<uint8_t> other = Pattern(4096, 42);  // another region of the sender's
  std::vector<uint8_t> loot;

  // While the peer has not read it: the message is readable through the
  // window; another region is not; past the region's end is not; the
  // region around the message is not where the device enforces a window's
  // bounds (not rxe: it checks the registration's).
  for (uint64_t attack :
       {reinterpret_cast<uintptr_t>(other.data()), begin + size + kEdge, begin - 4096}) {
    SCOPED_TRACE(attack - begin);
    ASSERT_NO_FATAL_FAILURE(Connect(plan_));
    ASSERT_TRUE(Impl(*a_).device()->memory_windows()) << "the lab's rxe0 has type 2 windows";
    auto region = a_->RegisterMemory(buf.data(), buf.size());
    auto other_region = a_->RegisterMemory(other.data(), other.size());
    ASSERT_TRUE(region.ok() && other_region.ok());
    uint32_t region_rkey = (*region)->descriptor().rkey;
    auto sent = std::async(std::launch::async, [&] { return a_->Send(**region, kEdge, size); });
    std::optional<RndvDescriptor> d;
    for (auto deadline = Clock::now() + 10s; !d && Clock::now() < deadline;) {
      Impl(*b_).DrainForTesting();
      d = Impl(*b_).LastRndvDescriptorForTesting();
      if (!d) std::this_thread::sleep_for(1ms);
    }
    ASSERT_TRUE(d.has_value()) << "no rendezvous descriptor arrived";
    EXPECT_NE(d->rkey, region_rkey) << "the region's own key was shown";
    EXPECT_TRUE(d->addr >= begin && d->addr < begin + size) << "not in place";
    ASSERT_TRUE(Steal(*b_, d->rkey, begin, 4096, &loot).ok());
    EXPECT_TRUE(std::equal(loot.begin(), loot.end(), message.begin()));
    Status stolen = Steal(*b_, d->rkey, attack, 4096, &loot);
    if (attack == begin - 4096 && plan_.device.rfind("rxe", 0) == 0) {
      std::cout << "[ rdma     ] " << plan_.device
                << " does not enforce a window's bounds, only its registration's\n";
      auto got = b_->Recv(30s);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      EXPECT_TRUE(*got == message);
      EXPECT_TRUE(sent.get().ok());
    } else {
      ExpectRefused(stolen);
      // The thief's channel ended; the Send ends with it, or with Close.
      if (sent.wait_for(5s) != std::future_status::ready) a_->Close();
      EXPECT_FALSE(sent.get().ok());
    }
  }

  // Sent whole; once Send has returned the window is closed.
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  auto region = a_->RegisterMemory(buf.data(), buf.size());
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  auto sent = std::async(std::launch::async, [&] { return a_->Send(**region, kEdge, size); });
  auto got = b_->Recv(30s);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == message);
  ASSERT_TRUE(sent.get().ok());
  auto last = Impl(*b_).LastRndvDescriptorForTesting();
  ASSERT_TRUE(last.has_value());
  ExpectRefused(Steal(*b_, last->rkey, last->addr, 4096, &loot));
}

TEST_F(DeviceLabRdmaRendezvousTest, ALocalRegionIsSentThroughChunksNeverShown) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  // More than the channel's share of chunks: every piece still goes
  // through a chunk, never under the region's own rkey or a window.
  size_t size = size_t(RndvPool::kChannelShare + 4) * RndvPool::kChunkSize;
  std::vector<uint8_t> buf = Pattern(size, 43);
  auto region = a_->RegisterMemory(buf.data(), buf.size(), MemoryAccess::kLocal);
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  auto sent = std::async(std::launch::async, [&] { return a_->Send(**region, 0, size); });
  auto got = b_->Recv(30s);
  ASSERT_TRUE(sent.get().ok());
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == buf);
  auto last = Impl(*b_).LastRndvDescriptorForTesting();
  ASSERT_TRUE(last.has_value());
  uint64_t begin = reinterpret_cast<uintptr_t>(buf.data());
  EXPECT_FALSE(last->addr >= begin && last->addr < begin + size) << "described in place";
}

TEST_F(DeviceLabRdmaRendezvousTest, RegionSendsOneAfterAnotherEachGetANewWindow) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  std::vector<uint8_t> buf = Pattern(4 * RndvPool::kChunkSize, 51);
  auto region = a_->RegisterMemory(buf.data(), buf.size());
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  std::vector<uint32_t> rkeys;
  for (size_t len : {buf.size(), size_t(RndvPool::kChunkSize) + 1, buf.size() / 2}) {
    auto sent = std::async(std::launch::async, [&] { return a_->Send(**region, 0, len); });
    auto got = b_->Recv(30s);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_TRUE(sent.get().ok());
    EXPECT_TRUE(std::equal(got->begin(), got->end(), buf.begin()) && got->size() == len);
    rkeys.push_back(Impl(*b_).LastRndvDescriptorForTesting()->rkey);
  }
  EXPECT_NE(rkeys[0], rkeys[1]);
  EXPECT_NE(rkeys[1], rkeys[2]);
}

TEST_F(DeviceLabRdmaRendezvousTest, AChannelThatCanRegisterNoChunkSendsEagerlyAndLosesNothing) {
  auto device = RdmaDevice::Open(plan_.device);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  (*device)->ReplaceRndvPoolForTesting(0);
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  for (size_t size : {size_t(100000), size_t(1) << 20}) {
    ASSERT_NO_FATAL_FAILURE(Transfer(*a_, *b_, size, size));
  }
  EXPECT_FALSE(Impl(*b_).LastRndvDescriptorForTesting()) << "a descriptor without chunks";
  a_.reset();
  b_.reset();
  (*device)->ReplaceRndvPoolForTesting(RndvPool::kDefaultChunks);
}

}  // namespace
}  // namespace rdmad::internal
