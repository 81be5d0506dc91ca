// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Recv and RecvInto on the lab's device, in their own wait for a message
// (RdmaChannel::RecvAtWake): the streaming receiver's, which copies a lone
// whole message from its slot at the wake-up and leaves everything else
// (rendezvous pieces, notifications, a message too long, the peer's CLOSE,
// a second receiving thread, the deadline) to the general path without
// losing or reordering anything. Without a deadline and with one; on one
// vCPU (lab.rdma_channel: no spin) and on two (the spin before the sleep,
// as on any multi-core host).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "client/src/rdma/channel_impl.h"
#include "client/src/rdma/lab_channel_fixture.h"
#include "gtest/gtest.h"

namespace rdmad::internal {
namespace {

using namespace lab;

// Each test without a deadline (a sleep in one read) and with one (a
// sleep with a timer).
class DeviceLabRdmaRecvAtWakeTest
    : public DeviceLabRdmaChannelTest,
      public ::testing::WithParamInterface<std::chrono::milliseconds> {
 protected:
  static RdmaChannel& Impl(Channel& c) { return dynamic_cast<RdmaChannel&>(c); }

  // Connects with plan and registers the receiver's region.
  void Start(const RdmaPlan& plan) {
    ASSERT_NO_FATAL_FAILURE(Connect(plan));
    buf_.assign(1 << 20, 0);
    auto region = b_->RegisterMemory(buf_.data(), buf_.size());
    ASSERT_TRUE(region.ok()) << region.status().ToString();
    region_ = std::move(region).value();
  }
  void TearDown() override {
    // Ends every blocked call before the region goes.
    if (a_) a_->Close();
    if (b_) b_->Close();
  }

  StatusOr<size_t> Take(size_t max_len) { return b_->RecvInto(*region_, 0, max_len, GetParam()); }
  // The next message by Recv, copied to buf_ as RecvInto would.
  StatusOr<size_t> TakeByRecv() {
    auto got = b_->Recv(GetParam());
    if (!got.ok()) return got.status();
    std::copy(got->begin(), got->end(), buf_.begin());
    return got->size();
  }
  // Recv for odd i, RecvInto for even.
  StatusOr<size_t> TakeEitherWay(size_t i) { return i % 2 ? TakeByRecv() : Take(buf_.size()); }

  // At debug level every wait takes the general path (WaitFor reports a
  // long one): these tests run at info.
  ScopedClientLogLevel info_{LogLevel::kInfo};
  std::vector<uint8_t> buf_;
  std::unique_ptr<MemoryRegion> region_;
};

// A receiver asleep for every message (a sender that waits until it took
// the one before) takes (nearly) each at its wake-up, straight from the slot: per
// message one sleep (without a deadline, one read of the completion
// channel), one arming and two looks at the CQ (before it sleeps and
// after; a sleep with a timer looks once more).
TEST_P(DeviceLabRdmaRecvAtWakeTest, ASleepingReceiverTakesEachMessageAtItsWakeUp) {
  RdmaPlan plan = plan_;
  plan.spin_us = 0;  // a spin looks at the CQ as often as it can
  ASSERT_NO_FATAL_FAILURE(Start(plan));
  constexpr uint32_t kMessages = 60;
  std::atomic<uint32_t> received{0};
  auto sender = std::async(std::launch::async, [&] {
    for (uint32_t i = 0; i < kMessages; ++i) {
      for (auto until = Clock::now() + 10s; received.load() < i && Clock::now() < until;) {
        std::this_thread::sleep_for(1ms);
      }
      std::this_thread::sleep_for(3ms);  // the receiver is asleep again
      if (Status s = a_->Send(&i, sizeof(i)); !s.ok()) return s;
    }
    return Status::Ok();
  });
  RdmaChannel& receiver = Impl(*b_);
  const RdmaChannel::WaitCounts before = receiver.WaitCountsForTesting();
  for (uint32_t i = 0; i < kMessages; ++i) {
    StatusOr<size_t> got = TakeEitherWay(i);
    ASSERT_TRUE(got.ok()) << "message " << i << ": " << got.status().ToString();
    uint32_t seen = 0;
    std::memcpy(&seen, buf_.data(), sizeof(seen));
    ASSERT_EQ(seen, i);
    received = i + 1;
  }
  const RdmaChannel::WaitCounts after = receiver.WaitCountsForTesting();
  ASSERT_TRUE(sender.get().ok());
  // Nearly all: on two CPUs a message can land between the look before the
  // sleep and the arming, and a timed sleep's own look after arming files
  // it for the general path (as WaitFor's would).
  EXPECT_GE(after.taken_at_wake - before.taken_at_wake, kMessages * 9 / 10);
  EXPECT_LE(after.reads - before.reads, GetParam() == kForever ? kMessages : 0);
  if (GetParam() == kForever) {
    EXPECT_GE(after.reads - before.reads, kMessages * 9 / 10);
  }
  EXPECT_LE(after.arms - before.arms, kMessages + 1);
  // A sleep with a timer looks once more, after arming (Sleep).
  const uint32_t looks = GetParam() == kForever ? 2 : 3;
  EXPECT_LE(after.drains - before.drains, looks * kMessages + 2);
}

// Eager messages of every size up to a slot, rendezvous ones, a message
// in two fragments, and notifications in between: each in order, intact.
TEST_P(DeviceLabRdmaRecvAtWakeTest, TakesEveryKindOfMessageInOrder) {
  ASSERT_NO_FATAL_FAILURE(Start(plan_));
  const std::vector<size_t> sizes = {0,    1,     8,    48,     49,   256, 257, 4095,
                                     4096, 4097,  8192, 300000, 8,    0,   1,   70000,
                                     3,    65536, 4096, 1,      1000, 2,   100, 4096};
  std::atomic<bool> failed = false;
  auto sender = std::async(std::launch::async, [&] {
    for (size_t i = 0; i < sizes.size() && !failed; ++i) {
      std::vector<uint8_t> m = Pattern(sizes[i], 100 + i);
      if (Status s = a_->Send(m.data(), m.size()); !s.ok()) return s;
      if (i % 5 == 2) {
        auto note = a_->Submit({}, "note " + std::to_string(i));
        if (!note.ok()) return note.status();
      }
      if (i % 3 == 0) std::this_thread::sleep_for(2ms);  // some land on a sleeping receiver
    }
    return Status::Ok();
  });
  for (size_t i = 0; i < sizes.size(); ++i) {
    StatusOr<size_t> got = TakeEitherWay(i);
    if (!got.ok() || *got != sizes[i]) failed = true;
    ASSERT_TRUE(got.ok()) << "message " << i << ": " << got.status().ToString();
    ASSERT_EQ(*got, sizes[i]) << "message " << i;
    std::vector<uint8_t> want = Pattern(sizes[i], 100 + i);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), buf_.begin())) << "message " << i;
  }
  Status sent = sender.get();
  ASSERT_TRUE(sent.ok()) << sent.ToString();
  for (size_t i = 2; i < sizes.size(); i += 5) {
    auto note = b_->RecvNotification(5s);
    ASSERT_TRUE(note.ok()) << note.status().ToString();
    EXPECT_EQ(std::string(note->begin(), note->end()), "note " + std::to_string(i));
  }
}

// Many small messages one way, the receiver answering every 64th: every
// credit comes back (no sender is left waiting) and nothing is lost.
TEST_P(DeviceLabRdmaRecvAtWakeTest, AStreamOfSmallMessagesKeepsItsCreditsFlowing) {
  ASSERT_NO_FATAL_FAILURE(Start(plan_));
  constexpr uint32_t kMessages = 20000;
  auto sender = std::async(std::launch::async, [&] {
    for (uint32_t i = 0; i < kMessages; ++i) {
      if (Status s = a_->Send(&i, sizeof(i)); !s.ok()) return s;
      if (i % 64 == 63) {
        auto answer = a_->Recv(30s);
        if (!answer.ok()) return answer.status();
        uint32_t echoed = 0;
        std::memcpy(&echoed, answer->data(), std::min(answer->size(), sizeof(echoed)));
        if (echoed != i) return Status::Internal("answer " + std::to_string(echoed));
      }
    }
    return Status::Ok();
  });
  for (uint32_t i = 0; i < kMessages; ++i) {
    StatusOr<size_t> got = TakeEitherWay(i);
    ASSERT_TRUE(got.ok()) << "message " << i << ": " << got.status().ToString();
    ASSERT_EQ(*got, sizeof(i));
    uint32_t value = 0;
    std::memcpy(&value, buf_.data(), sizeof(value));
    ASSERT_EQ(value, i);
    if (i % 64 == 63) {
      Status answered = b_->Send(&value, sizeof(value));
      ASSERT_TRUE(answered.ok()) << answered.ToString();
    }
  }
  ASSERT_EQ(sender.wait_for(30s), std::future_status::ready) << "the sender is stuck";
  Status sent = sender.get();
  EXPECT_TRUE(sent.ok()) << sent.ToString();
}

// A message longer than max_len: OUT_OF_RANGE with its head kept, and the
// next one is received whole.
TEST_P(DeviceLabRdmaRecvAtWakeTest, AMessageTooLongIsCutAndTheNextOneArrives) {
  ASSERT_NO_FATAL_FAILURE(Start(plan_));
  std::vector<uint8_t> longer = Pattern(3000, 7), next = Pattern(500, 8);
  auto sender = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(200ms);  // the receiver is asleep
    Status s = a_->Send(longer.data(), longer.size());
    return s.ok() ? a_->Send(next.data(), next.size()) : s;
  });
  StatusOr<size_t> cut = Take(1000);
  EXPECT_EQ(cut.status().code(), StatusCode::kOutOfRange) << cut.status().ToString();
  EXPECT_TRUE(std::equal(longer.begin(), longer.begin() + 1000, buf_.begin()));
  StatusOr<size_t> got = Take(1000);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, next.size());
  EXPECT_TRUE(std::equal(next.begin(), next.end(), buf_.begin()));
  EXPECT_TRUE(sender.get().ok());
}

// Two threads waiting at once: one sleeps on the completion channel, the
// other on the channel's condition variable; each gets one message.
TEST_P(DeviceLabRdmaRecvAtWakeTest, TwoWaitingThreadsEachGetAMessage) {
  ASSERT_NO_FATAL_FAILURE(Start(plan_));
  std::vector<uint8_t> second(1 << 20);
  auto second_region = b_->RegisterMemory(second.data(), second.size());
  ASSERT_TRUE(second_region.ok()) << second_region.status().ToString();
  auto one = std::async(std::launch::async, [&] { return Take(buf_.size()); });
  auto two = std::async(std::launch::async, [&] {
    return b_->RecvInto(**second_region, 0, second.size(), GetParam());
  });
  std::this_thread::sleep_for(300ms);  // both asleep
  ASSERT_TRUE(a_->Send("first", 5).ok());
  ASSERT_TRUE(a_->Send("second!", 7).ok());
  ASSERT_EQ(one.wait_for(10s), std::future_status::ready);
  ASSERT_EQ(two.wait_for(10s), std::future_status::ready);
  StatusOr<size_t> got_one = one.get(), got_two = two.get();
  ASSERT_TRUE(got_one.ok()) << got_one.status().ToString();
  ASSERT_TRUE(got_two.ok()) << got_two.status().ToString();
  std::vector<size_t> lengths = {*got_one, *got_two};
  std::sort(lengths.begin(), lengths.end());
  EXPECT_EQ(lengths, (std::vector<size_t>{5, 7}));
}

// The peer's close ends a RecvInto asleep without a deadline (UNAVAILABLE),
// after the message sent before it.
TEST_P(DeviceLabRdmaRecvAtWakeTest, ThePeersCloseEndsASleepingRecvInto) {
  ASSERT_NO_FATAL_FAILURE(Start(plan_));
  ASSERT_TRUE(a_->Send("last", 4).ok());
  auto peer_closed = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(300ms);
    a_->Close();
  });
  StatusOr<size_t> last = Take(buf_.size());
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_EQ(*last, 4u);
  StatusOr<size_t> after = Take(buf_.size());
  EXPECT_EQ(after.status().code(), StatusCode::kUnavailable) << after.status().ToString();
  peer_closed.get();
}

// Close wakes this side's RecvInto asleep without a deadline: CANCELLED.
TEST_P(DeviceLabRdmaRecvAtWakeTest, CloseEndsASleepingRecvInto) {
  ASSERT_NO_FATAL_FAILURE(Start(plan_));
  auto blocked = std::async(std::launch::async, [&] { return Take(buf_.size()); });
  std::this_thread::sleep_for(300ms);
  b_->Close();
  ASSERT_EQ(blocked.wait_for(5s), std::future_status::ready) << "RecvInto still blocked";
  EXPECT_EQ(blocked.get().status().code(), StatusCode::kCancelled);
}

// A deadline that passes (200 ms): DEADLINE_EXCEEDED, not before it;
// nothing is lost, and the message sent after is taken at its wake-up.
TEST_P(DeviceLabRdmaRecvAtWakeTest, ADeadlineEndsTheWaitAndTheNextMessageArrives) {
  ASSERT_NO_FATAL_FAILURE(Start(plan_));
  auto t0 = Clock::now();
  StatusOr<size_t> none = b_->RecvInto(*region_, 0, buf_.size(), 200ms);
  auto waited = Clock::now() - t0;
  EXPECT_EQ(none.status().code(), StatusCode::kDeadlineExceeded) << none.status().ToString();
  EXPECT_GE(waited, 200ms);
  EXPECT_LT(waited, 2s);
  const RdmaChannel::WaitCounts before = Impl(*b_).WaitCountsForTesting();
  auto sender = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(100ms);
    return a_->Send("after", 5);
  });
  StatusOr<size_t> got = Take(buf_.size());
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::string(buf_.begin(), buf_.begin() + 5), "after");
  EXPECT_TRUE(sender.get().ok());
  EXPECT_EQ(Impl(*b_).WaitCountsForTesting().taken_at_wake - before.taken_at_wake, 1u);
}

INSTANTIATE_TEST_SUITE_P(DeviceLabRdmaWaits, DeviceLabRdmaRecvAtWakeTest,
                         ::testing::Values(kForever, std::chrono::milliseconds(30000)),
                         [](const auto& info) {
                           return info.param == kForever ? "Forever" : "WithADeadline";
                         });

}  // namespace
}  // namespace rdmad::internal
