// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Batches that go unsignaled while many are in flight (SignalSegment,
// channel_batch.cc): a deep pipeline takes few completions and every batch
// still finishes, whether it is waited for in order, alone, by polling, at
// Close, or when an op among them fails. A receiver's own cost per
// message: its CREDIT messages' completions, its CQ's armings and looks.
// Needs an RDMA device (in the lab: rxe0, lab_channel_fixture.h).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <iostream>
#include <memory>
#include <thread>
#include <vector>

#include "client/src/rdma/channel_impl.h"
#include "client/src/rdma/lab_channel_fixture.h"
#include "gtest/gtest.h"

namespace rdmad::internal {
namespace {

using namespace lab;

// Closes `channel` unless `done` is set within a minute: a lost wake-up
// then fails the receiver's Recv instead of hanging the test.
std::thread CloseUnlessDone(Channel& channel, const std::atomic<bool>& done) {
  return std::thread([&channel, &done] {
    for (auto until = Clock::now() + 60s; !done && Clock::now() < until;) {
      std::this_thread::sleep_for(10ms);
    }
    if (!done) channel.Close();
  });
}

class DeviceLabRdmaModerationTest : public DeviceLabRdmaChannelTest {
 protected:
  static constexpr size_t kLen = 1024;
  static constexpr size_t kSlots = 64;

  static RdmaChannel& Impl(Channel& c) { return dynamic_cast<RdmaChannel&>(c); }

  // Connects, and gives a_ a region of kSlots * kLen bytes to write from
  // and the descriptor of one as large on b_.
  void SetUpRegions() {
    ASSERT_NO_FATAL_FAILURE(Connect(plan_));
    remote_bytes_.assign(kSlots * kLen, 0);
    auto target = b_->RegisterMemory(remote_bytes_.data(), remote_bytes_.size());
    ASSERT_TRUE(target.ok()) << target.status().ToString();
    target_ = std::move(target).value();
    remote_ = target_->descriptor();
    local_bytes_ = Pattern(kSlots * kLen, 17);
    auto source = a_->RegisterMemory(local_bytes_.data(), local_bytes_.size());
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    source_ = std::move(source).value();
  }

  TransferOp WriteOp(size_t slot, const RegionDescriptor& to) const {
    return TransferOp{TransferOp::Kind::kWrite, source_.get(), slot * kLen, to, slot * kLen, kLen};
  }

  // Submits one single-op write per slot, in order.
  std::vector<std::unique_ptr<rdmad::Transfer>> SubmitAll(size_t n) {
    std::vector<std::unique_ptr<rdmad::Transfer>> out;
    for (size_t i = 0; i < n; ++i) {
      auto t = a_->Submit({WriteOp(i % kSlots, remote_)});
      EXPECT_TRUE(t.ok()) << i << ": " << t.status().ToString();
      if (!t.ok()) break;
      out.push_back(std::move(t).value());
    }
    return out;
  }

  // One prepared single-op write per slot, op `bad` (if any) to `wrong`.
  std::vector<std::unique_ptr<PreparedTransfer>> PrepareRing(
      size_t bad = kSlots, const RegionDescriptor* wrong = nullptr) {
    std::vector<std::unique_ptr<PreparedTransfer>> ring;
    for (size_t i = 0; i < kSlots; ++i) {
      auto p = a_->Prepare({WriteOp(i, i == bad ? *wrong : remote_)});
      EXPECT_TRUE(p.ok()) << i << ": " << p.status().ToString();
      if (!p.ok()) break;
      ring.push_back(std::move(p).value());
    }
    return ring;
  }

  bool Landed() const { return remote_bytes_ == local_bytes_; }

  std::vector<uint8_t> remote_bytes_, local_bytes_;
  std::unique_ptr<MemoryRegion> target_, source_;
  RegionDescriptor remote_;
};

TEST_F(DeviceLabRdmaModerationTest, ADeepPipelineTakesFewCompletionsAndEveryBatchFinishes) {
  ASSERT_NO_FATAL_FAILURE(SetUpRegions());
  auto ring = PrepareRing();
  ASSERT_EQ(ring.size(), kSlots);
  constexpr size_t kPosts = 20 * kSlots;
  for (size_t n = 0; n < kPosts; ++n) {  // as perftest keeps its queue full
    PreparedTransfer& t = *ring[n % kSlots];
    if (n >= kSlots) {
      ASSERT_TRUE(t.Wait(10s).ok()) << "post " << n;
    }
    ASSERT_TRUE(t.Post().ok()) << "post " << n;
  }
  for (auto& t : ring) ASSERT_TRUE(t->Wait(10s).ok());
  EXPECT_TRUE(Landed());
  uint64_t completions = Impl(*a_).BatchCompletionsForTesting();
  std::cout << "[ rdma     ] " << kPosts << " batches, " << completions
            << " signaled completions\n";
  EXPECT_GT(completions, 0u);
  EXPECT_LT(completions, kPosts / 4) << "one in about signal_every_ is signaled";
  EXPECT_EQ(Impl(*a_).QuickOpsForTesting(), kPosts) << "each Post a quick op, without a batch";
}

// Prepared single ops (quick ops, done by sequence number) with one that
// the peer refuses among many in flight: the ones before it complete, it
// fails and names itself, the ones after it fail with the channel, and
// every answer stays as first given, to Wait and to Poll.
TEST_F(DeviceLabRdmaModerationTest, AFailedQuickOpFailsItselfAndTheOnesAfterItOnly) {
  ASSERT_NO_FATAL_FAILURE(SetUpRegions());
  constexpr size_t kBad = 40;
  RegionDescriptor wrong = remote_;
  wrong.rkey ^= 0x5a5a00;  // no region of b_'s has it
  auto ring = PrepareRing(kBad, &wrong);
  ASSERT_EQ(ring.size(), kSlots);
  std::vector<Status> posted;
  for (auto& t : ring) posted.push_back(t->Post());  // later ones may find the channel failed
  for (size_t i = 0; i <= kBad; ++i)
    ASSERT_TRUE(posted[i].ok()) << i << ": " << posted[i].ToString();
  EXPECT_GT(Impl(*a_).QuickOpsForTesting(), kBad) << "each Post a quick op until the failure";
  std::vector<Status> first(kSlots);
  for (size_t i = 0; i < kSlots; ++i) {
    first[i] = ring[i]->Wait(10s);
    if (i < kBad) {
      EXPECT_TRUE(first[i].ok()) << "op " << i
                                 << " completed before the bad one: " << first[i].ToString();
    } else {
      EXPECT_FALSE(first[i].ok()) << "op " << i;
      EXPECT_NE(first[i].code(), StatusCode::kDeadlineExceeded)
          << "op " << i << ": " << first[i].ToString();
    }
    EXPECT_EQ(ring[i]->failed_op(), i == kBad ? 0 : -1)
        << "op " << i << ": " << first[i].ToString();
    if (i > kBad && !posted[i].ok()) {
      EXPECT_EQ(first[i], posted[i]) << "op " << i;
    }
  }
  for (size_t i = 0; i < kSlots; ++i) {
    EXPECT_EQ(ring[i]->Wait(10s), first[i]) << "op " << i << ": Wait answers as it did";
    Status polled = Status::Internal("not set");
    EXPECT_TRUE(ring[i]->Poll(&polled)) << "op " << i;
    EXPECT_EQ(polled, first[i]) << "op " << i << ": Poll answers as Wait did";
  }
  EXPECT_TRUE(std::equal(remote_bytes_.begin(), remote_bytes_.begin() + long(kBad * kLen),
                         local_bytes_.begin()));
}

// Quick ops in flight when the channel closes here finish as they did,
// polled or waited for, and a Post after the Close is refused with the
// reason Wait then gives.
TEST_F(DeviceLabRdmaModerationTest, QuickOpsInFlightAtCloseFinishAsTheyDid) {
  ASSERT_NO_FATAL_FAILURE(SetUpRegions());
  auto ring = PrepareRing();
  ASSERT_EQ(ring.size(), kSlots);
  for (size_t i = 0; i < kSlots; ++i) ASSERT_TRUE(ring[i]->Post().ok()) << i;
  auto start = Clock::now();
  a_->Close();
  EXPECT_LT(Clock::now() - start, 900ms) << "Close waited for completions that do not come";
  for (size_t i = 0; i < kSlots; ++i) {
    Status polled = Status::Internal("not set");
    if (i % 2 == 0) {
      EXPECT_TRUE(ring[i]->Poll(&polled)) << i;
    }
    Status s = ring[i]->Wait(1s);
    EXPECT_TRUE(s.ok()) << i << ": " << s.ToString();
    if (i % 2 == 0) {
      EXPECT_EQ(polled, s) << i;
    }
  }
  EXPECT_TRUE(Landed());
  Status again = ring[0]->Post();
  EXPECT_FALSE(again.ok());
  EXPECT_EQ(ring[0]->Wait(1s), again);
}

TEST_F(DeviceLabRdmaModerationTest, TheNewestOfManyBatchesFinishesWhenWaitedForAlone) {
  ASSERT_NO_FATAL_FAILURE(SetUpRegions());
  auto batches = SubmitAll(kSlots);
  ASSERT_EQ(batches.size(), kSlots);
  auto start = Clock::now();
  Status last = batches.back()->Wait(10s);  // nothing is posted after it
  ASSERT_TRUE(last.ok()) << last.ToString();
  EXPECT_LT(Clock::now() - start, 5s);
  for (size_t i = 0; i < batches.size(); ++i) {
    Status s = Status::Unavailable("not set");
    EXPECT_TRUE(batches[i]->Poll(&s)) << i;
    EXPECT_TRUE(s.ok()) << i << ": " << s.ToString();
  }
  EXPECT_TRUE(Landed());
  // Polled only, never waited for: Poll finishes it too.
  batches = SubmitAll(kSlots);
  ASSERT_EQ(batches.size(), kSlots);
  Status polled = Status::Unavailable("not set");
  auto deadline = Clock::now() + 10s;
  while (!batches.back()->Poll(&polled) && Clock::now() < deadline) {
  }
  EXPECT_TRUE(polled.ok()) << polled.ToString();
  for (auto& b : batches) EXPECT_TRUE(b->Wait(10s).ok());
}

TEST_F(DeviceLabRdmaModerationTest, BatchesInFlightAtCloseFinishAsTheyDid) {
  ASSERT_NO_FATAL_FAILURE(SetUpRegions());
  auto batches = SubmitAll(kSlots);
  ASSERT_EQ(batches.size(), kSlots);
  auto start = Clock::now();
  a_->Close();
  auto took = Clock::now() - start;
  EXPECT_LT(took, 900ms) << "Close waited for completions that do not come";
  for (size_t i = 0; i < batches.size(); ++i) {
    Status s = batches[i]->Wait(1s);
    EXPECT_TRUE(s.ok()) << i << ": " << s.ToString();
  }
  EXPECT_TRUE(Landed());
}

TEST_F(DeviceLabRdmaModerationTest, AFailedOpInAPipelineFailsItsBatchAndNotTheOnesBefore) {
  ASSERT_NO_FATAL_FAILURE(SetUpRegions());
  constexpr size_t kBad = 50;
  RegionDescriptor wrong = remote_;
  wrong.rkey ^= 0x5a5a00;  // no region of b_'s has it
  std::vector<std::unique_ptr<rdmad::Transfer>> batches;
  for (size_t i = 0; i < kSlots; ++i) {
    auto t = a_->Submit({WriteOp(i, i == kBad ? wrong : remote_)});
    if (!t.ok()) break;  // the channel failed meanwhile
    batches.push_back(std::move(t).value());
  }
  ASSERT_GT(batches.size(), kBad);
  for (size_t i = 0; i < batches.size(); ++i) {
    Status s = batches[i]->Wait(10s);
    if (i < kBad) {
      EXPECT_TRUE(s.ok()) << "batch " << i << " completed before the bad one: " << s.ToString();
    } else {
      EXPECT_FALSE(s.ok()) << "batch " << i;
    }
    if (i == kBad) {
      EXPECT_EQ(batches[i]->failed_op(), 0) << s.ToString();
    }
  }
  EXPECT_TRUE(std::equal(remote_bytes_.begin(), remote_bytes_.begin() + long(kBad * kLen),
                         local_bytes_.begin()));
}

// A receiver that only takes messages returns its credits in CREDIT
// messages; they go unsignaled as inline SENDs do (a completion of its own
// would wake a receiver asleep for the next message), so it takes fewer
// completions than it sends CREDIT messages. The stream arrives whole and in
// order, and the receiver's Close still completes.
TEST_F(DeviceLabRdmaModerationTest, AReceiversCreditMessagesTakeFewCompletions) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  constexpr uint32_t kMessages = 300;
  for (uint32_t i = 0; i < kMessages; ++i) {
    ASSERT_TRUE(a_->Send(&i, sizeof(i)).ok()) << "message " << i;
    auto got = b_->Recv(10s);
    ASSERT_TRUE(got.ok()) << "message " << i << ": " << got.status().ToString();
    uint32_t seen = 0;
    ASSERT_EQ(got->size(), sizeof(seen));
    std::memcpy(&seen, got->data(), sizeof(seen));
    ASSERT_EQ(seen, i);
  }
  RdmaChannel& receiver = Impl(*b_);
  receiver.DrainForTesting();
  uint64_t credits = receiver.CreditMessagesForTesting();
  uint64_t completions = receiver.ControlCompletionsForTesting();
  std::cout << "[ rdma     ] " << kMessages << " messages, " << credits << " CREDIT messages, "
            << completions << " of their completions\n";
  EXPECT_GE(credits, 4u) << "the receiver returned its credits in CREDIT messages";
  EXPECT_LT(completions, credits) << "a CREDIT message is signaled only as every "
                                     "signal_every_-th SEND is";
  b_->Close();
  EXPECT_FALSE(a_->Recv(10s).ok()) << "the sender sees the receiver's CLOSE";
}

// A receiver that sleeps for every message (a blocking Recv without a
// deadline, as SINK's) re-arms its CQ as it takes the event: per message
// one arming and two looks at the CQ (one before it sleeps, one after),
// not three. Every message still wakes it (a watchdog closes the channel
// if one does not, which fails the Recv instead of hanging).
TEST_F(DeviceLabRdmaModerationTest, ASleepingReceiverArmsOnceAndLooksTwicePerMessage) {
  RdmaPlan plan = plan_;
  plan.spin_us = 0;  // a wait that spins looks at the CQ as often as it can
  ASSERT_NO_FATAL_FAILURE(Connect(plan));
  ScopedClientLogLevel info(LogLevel::kInfo);  // one that reports has a deadline
  constexpr uint32_t kMessages = 60;
  std::atomic<uint32_t> received{0};
  std::atomic<bool> done{false};
  std::thread sender([&] {
    for (uint32_t i = 0; i < kMessages && !done; ++i) {
      // Until the receiver has taken the one before, and a little more:
      // it is asleep again when the next arrives.
      for (auto until = Clock::now() + 10s; received.load() < i && Clock::now() < until;) {
        std::this_thread::sleep_for(1ms);
      }
      std::this_thread::sleep_for(3ms);
      if (!a_->Send(&i, sizeof(i)).ok()) return;
    }
  });
  std::thread watchdog = CloseUnlessDone(*b_, done);
  RdmaChannel& receiver = Impl(*b_);
  const RdmaChannel::WaitCounts before = receiver.WaitCountsForTesting();
  for (uint32_t i = 0; i < kMessages; ++i) {
    auto got = b_->Recv(kForever);
    if (!got.ok()) {
      ADD_FAILURE() << "message " << i << ": " << got.status().ToString();
      break;
    }
    uint32_t seen = 0;
    EXPECT_EQ(got->size(), sizeof(seen));
    std::memcpy(&seen, got->data(), std::min(got->size(), sizeof(seen)));
    EXPECT_EQ(seen, i);
    received = i + 1;
  }
  const RdmaChannel::WaitCounts after = receiver.WaitCountsForTesting();
  done = true;
  sender.join();
  watchdog.join();
  const uint64_t arms = after.arms - before.arms, drains = after.drains - before.drains;
  std::cout << "[ rdma     ] " << kMessages << " messages: the CQ armed " << arms
            << " times, drained " << drains << " times\n";
  ASSERT_EQ(received.load(), kMessages);
  // A few more for the CREDIT messages' completions and a wait that found
  // its message at once.
  EXPECT_LE(arms, kMessages + 4);
  EXPECT_LE(drains, 2 * kMessages + 8) << "three looks per message: the sleep looked again";
}

// A CQ event runs the callback of every epoll set its completion channel
// is in, in the sending thread's time. The channel is in the set of timed
// sleeps from the first one on; a sleep in a read takes it out, and the
// next timed sleep puts it back and is woken through it.
TEST_F(DeviceLabRdmaModerationTest, ASleepInAReadLeavesTheSetOfTimedSleeps) {
  RdmaPlan plan = plan_;
  plan.spin_us = 0;  // every wait below sleeps
  ASSERT_NO_FATAL_FAILURE(Connect(plan));
  ScopedClientLogLevel info(LogLevel::kInfo);  // one that reports has a deadline
  RdmaChannel& receiver = Impl(*b_);
  EXPECT_EQ(b_->Recv(20ms).status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(receiver.CompletionChannelInSleepSetForTesting()) << "a timed sleep made the set";

  std::atomic<bool> done{false};
  std::thread watchdog = CloseUnlessDone(*b_, done);
  // Sends one byte once the receiver sleeps in a read (or after 10 s).
  auto send_when_asleep = [&](uint64_t reads_before) {
    for (auto until = Clock::now() + 10s;
         receiver.WaitCountsForTesting().reads == reads_before && Clock::now() < until;) {
      std::this_thread::sleep_for(1ms);
    }
    std::this_thread::sleep_for(5ms);
    uint8_t byte = 7;
    EXPECT_TRUE(a_->Send(&byte, 1).ok());
  };
  std::thread first(send_when_asleep, receiver.WaitCountsForTesting().reads);
  auto got = b_->Recv(kForever);
  first.join();
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_FALSE(receiver.CompletionChannelInSleepSetForTesting())
      << "the sleep in a read left the set";

  // A timed sleep: back in the set, and the message wakes it.
  std::thread second([&] {
    std::this_thread::sleep_for(50ms);
    uint8_t byte = 8;
    EXPECT_TRUE(a_->Send(&byte, 1).ok());
  });
  const auto start = Clock::now();
  got = b_->Recv(30s);
  const auto took = Clock::now() - start;
  second.join();
  done = true;
  watchdog.join();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, std::vector<uint8_t>{8});
  EXPECT_LT(took, 20s) << "the message woke the timed sleep";
  EXPECT_TRUE(receiver.CompletionChannelInSleepSetForTesting());
}

}  // namespace
}  // namespace rdmad::internal
