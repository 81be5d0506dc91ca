// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// A peer reaches only the rendezvous pieces it was sent, only until it
// reports them read (channel_windows.cc), tried as a peer that keeps the
// descriptors it was given and READs with them through the public API.
// Needs an RDMA device (in the lab: rxe0, lab_channel_fixture.h).

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

class DeviceLabRdmaWindowsTest : public DeviceLabRdmaChannelTest {
 protected:
  void SetUp() override {
    DeviceLabRdmaChannelTest::SetUp();
    if (IsSkipped()) return;
    auto device = RdmaDevice::Open(plan_.device);
    ASSERT_TRUE(device.ok()) << device.status().ToString();
    device_ = *device;
    if (!device_->memory_windows()) GTEST_SKIP() << plan_.device << " has no type 2 windows";
  }

  static RdmaChannel& Impl(Channel& c) { return dynamic_cast<RdmaChannel&>(c); }

  // Sends `bytes` from `from` (returns once the pieces are described: they
  // wait in pool chunks) and waits until `to` holds a descriptor it has not
  // read.
  RndvDescriptor Describe(Channel& from, Channel& to, const std::vector<uint8_t>& bytes) {
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
  // offset from its address, with its rkey, into memory of its own.
  Status Steal(Channel& thief, const RndvDescriptor& d, int64_t offset, uint32_t len,
               std::vector<uint8_t>* loot) {
    loot->assign(len, 0);
    auto region = thief.RegisterMemory(loot->data(), loot->size());
    if (!region.ok()) return region.status();
    RegionDescriptor remote;
    remote.address = d.addr + offset;
    remote.length = len;
    remote.rkey = d.rkey;
    Status s = thief.Read(**region, 0, remote, 0, len);
    std::cout << "[ rdma     ] READ at " << offset << " (+" << len << "): " << s.ToString() << "\n";
    return s;
  }

  // Waits until every chunk is back in the pool: the sender has taken the
  // peer's done report and invalidated the windows.
  void WaitForThePool(Channel& sender) {
    RndvPool& pool = device_->rndv_pool();
    auto deadline = Clock::now() + 10s;
    while (pool.free_chunks() != pool.chunks() && Clock::now() < deadline) {
      Impl(sender).DrainForTesting();
      std::this_thread::sleep_for(1ms);
    }
    ASSERT_EQ(pool.free_chunks(), pool.chunks());
  }

  static void ExpectRefused(const Status& s) {
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("remote access error"), std::string::npos) << s.ToString();
  }

  std::shared_ptr<RdmaDevice> device_;
};

TEST_F(DeviceLabRdmaWindowsTest, APeerReadsThePieceItWasSentAndNothingAroundIt) {
  // In the piece: what the peer was sent (the READ path itself works).
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  std::vector<uint8_t> message = Pattern(RndvPool::kChunkSize, 11);  // one piece
  RndvDescriptor d = Describe(*a_, *b_, message);
  ASSERT_EQ(d.len, RndvPool::kChunkSize);
  std::vector<uint8_t> loot;
  ASSERT_TRUE(Steal(*b_, d, 0, d.len, &loot).ok());
  EXPECT_TRUE(std::equal(loot.begin(), loot.end(), message.begin()));

  // Past its end, and before its start: other chunks of the pool.
  for (int64_t offset : {int64_t(d.len), int64_t(d.len) + 4096, int64_t(-4096), -int64_t(d.len)}) {
    SCOPED_TRACE(offset);
    ASSERT_NO_FATAL_FAILURE(Connect(plan_));
    RndvDescriptor piece = Describe(*a_, *b_, message);
    ExpectRefused(Steal(*b_, piece, offset, 4096, &loot));
  }
  // One byte too many.
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  RndvDescriptor piece = Describe(*a_, *b_, message);
  ExpectRefused(Steal(*b_, piece, 0, piece.len + 1, &loot));

  // A short piece in a chunk that held another peer's longer one: past the
  // piece the chunk is zeroed (where a device checks a window's range
  // against its registration only, the peer reaches the whole chunk).
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  std::vector<uint8_t> longer = Pattern(RndvPool::kChunkSize, 12);
  RndvDescriptor first = Describe(*a_, *b_, longer);
  auto got = b_->Recv(10s);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_NO_FATAL_FAILURE(WaitForThePool(*a_));
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  std::vector<uint8_t> shorter = Pattern(RndvPool::kChunkSize / 2, 13);  // one piece
  RndvDescriptor second = Describe(*a_, *b_, shorter);
  ASSERT_EQ(second.addr, first.addr) << "the pool hands out the chunk given back last";
  ASSERT_EQ(second.len, shorter.size());
  Status past = Steal(*b_, second, second.len, RndvPool::kChunkSize - second.len, &loot);
  if (past.ok()) {
    EXPECT_EQ(std::count(loot.begin(), loot.end(), 0), ptrdiff_t(loot.size()))
        << "the chunk kept the other peer's bytes";
  } else {
    ExpectRefused(past);
  }
}

TEST_F(DeviceLabRdmaWindowsTest, AfterReportingAPieceReadThePeerReadsNothingThere) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  std::unique_ptr<Channel> thief_end = std::move(b_), victim = std::move(a_);
  std::vector<uint8_t> message = Pattern(RndvPool::kChunkSize, 21);
  RndvDescriptor d = Describe(*victim, *thief_end, message);
  auto got = thief_end->Recv(10s);  // reads every piece and reports them done
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(*got == message);
  ASSERT_NO_FATAL_FAILURE(WaitForThePool(*victim));

  // The same process sends a secret to another peer: its pieces take the
  // chunks the thief's message left (the pool hands out the last given).
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  std::vector<uint8_t> secret = Pattern(RndvPool::kChunkSize, 22);
  RndvDescriptor other = Describe(*a_, *b_, secret);
  EXPECT_EQ(other.addr, d.addr) << "the secret's first piece is in the thief's old chunk";

  std::vector<uint8_t> loot;
  ExpectRefused(Steal(*thief_end, d, 0, d.len, &loot));
  EXPECT_FALSE(std::equal(loot.begin(), loot.end(), secret.begin()));
  // The other peer still gets its message whole.
  auto at_b = b_->Recv(10s);
  ASSERT_TRUE(at_b.ok()) << at_b.status().ToString();
  EXPECT_TRUE(*at_b == secret);
}

TEST_F(DeviceLabRdmaWindowsTest, AnotherPeerOfTheSenderCannotUseTheDescriptor) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  std::unique_ptr<Channel> sender = std::move(a_), peer = std::move(b_);
  std::vector<uint8_t> message = Pattern(RndvPool::kChunkSize, 31);
  RndvDescriptor d = Describe(*sender, *peer, message);
  // The sender's channel to a second peer: that peer has the descriptor
  // (leaked to it), but the window answers the first peer's QP alone.
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  std::vector<uint8_t> loot;
  ExpectRefused(Steal(*b_, d, 0, 4096, &loot));
  // The first peer still reads it.
  auto got = peer->Recv(10s);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == message);
}

TEST_F(DeviceLabRdmaWindowsTest, ARegisteredRegionIsSentThroughChunksNotShown) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  // More than the channel's share of chunks: every piece still goes
  // through a chunk and a window, never under the region's own rkey.
  size_t size = size_t(RndvPool::kChannelShare + 4) * RndvPool::kChunkSize;
  std::vector<uint8_t> buf = Pattern(size, 41);
  auto region = a_->RegisterMemory(buf.data(), buf.size());
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  uint32_t region_rkey = (*region)->descriptor().rkey;
  auto sent = std::async(std::launch::async, [&] { return a_->Send(**region, 0, size); });
  auto got = b_->Recv(30s);
  ASSERT_TRUE(sent.get().ok());
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == buf);
  auto last = Impl(*b_).LastRndvDescriptorForTesting();
  ASSERT_TRUE(last.has_value());
  EXPECT_NE(last->rkey, region_rkey);
  uint64_t begin = reinterpret_cast<uintptr_t>(buf.data());
  EXPECT_FALSE(last->addr >= begin && last->addr < begin + size) << "described in place";
  // The region's rkey itself was never sent; with it, the region is the
  // peer's (that is what registering it for the peer means).
}

TEST_F(DeviceLabRdmaWindowsTest, WithoutWindowsThePoolIsNeverShownAndEveryByteArrives) {
  device_->ReplaceRndvPoolForTesting(RndvPool::kDefaultChunks, /*memory_windows=*/false);
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  for (size_t size : {size_t(100000), size_t(1) << 20}) {
    ASSERT_NO_FATAL_FAILURE(Transfer(*a_, *b_, size, size));
  }
  EXPECT_FALSE(Impl(*b_).LastRndvDescriptorForTesting())
      << "an unregistered buffer went through the slots";
  a_.reset();
  b_.reset();
  device_->ReplaceRndvPoolForTesting(RndvPool::kDefaultChunks);
}

}  // namespace
}  // namespace rdmad::internal
