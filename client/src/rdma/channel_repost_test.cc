// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The repost of a taken message's slot, deferred past the answer at a side
// that answers what it takes (RdmaChannel::DeferRepost): the slot goes
// back to the ring at that side's next wait, TrySend or Arm; a side that
// only takes reposts at once, so a sender is never held up by a receiver
// that stopped taking. Needs an RDMA device (in the lab: rxe0,
// lab_channel_fixture.h).

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <thread>

#include "client/src/rdma/channel_impl.h"
#include "client/src/rdma/lab_channel_fixture.h"
#include "client/src/rdma/resources.h"
#include "gtest/gtest.h"

namespace rdmad::internal {
namespace {

using namespace lab;

class DeviceLabRdmaRepostTest : public DeviceLabRdmaChannelTest {
 protected:
  static RdmaChannel& Impl(Channel& c) { return dynamic_cast<RdmaChannel&>(c); }

  // Receives one 4-byte message on `to` and checks it is `want`.
  static void ExpectMessage(Channel& to, uint32_t want) {
    auto got = to.Recv(10s);
    ASSERT_TRUE(got.ok()) << want << ": " << got.status().ToString();
    ASSERT_EQ(got->size(), sizeof(want));
    uint32_t seen = 0;
    std::memcpy(&seen, got->data(), sizeof(seen));
    EXPECT_EQ(seen, want);
  }
};

// Requests and answers, b answering each of a's: b's taken slot waits
// until b next waits, sends with TrySend (which drains first) or arms its
// completion fd, and the ring never grows.
TEST_F(DeviceLabRdmaRepostTest, ATakenSlotGoesBackAtTheReceiversNextWaitTrySendOrArm) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  RdmaChannel& b = Impl(*b_);
  const uint32_t ring = b.PostedReceivesForTesting();
  ASSERT_EQ(ring, ChannelResources::kInitialRingSlots);
  uint32_t n = 0;
  ASSERT_TRUE(b_->Send(&n, sizeof(n)).ok());  // b speaks first: it answers from now on
  ASSERT_NO_FATAL_FAILURE(ExpectMessage(*a_, n++));
  for (const char* next : {"a wait", "TrySend", "Arm"}) {
    SCOPED_TRACE(next);
    ASSERT_TRUE(a_->Send(&n, sizeof(n)).ok());
    ASSERT_NO_FATAL_FAILURE(ExpectMessage(*b_, n++));
    EXPECT_EQ(b.PostedReceivesForTesting(), ring - 1) << "the taken slot waits";
    const std::string_view how = next;
    if (how == "a wait") {
      auto none = b_->Recv(20ms);
      EXPECT_EQ(none.status().code(), StatusCode::kDeadlineExceeded) << none.status().ToString();
    } else if (how == "TrySend") {
      Status s = b_->TrySend(&n, sizeof(n));
      ASSERT_TRUE(s.ok()) << s.ToString();
    } else {
      auto fd = b_->CompletionFd();
      ASSERT_TRUE(fd.ok()) << fd.status().ToString();
      EXPECT_TRUE(b_->Arm()) << "nothing pending";
    }
    EXPECT_EQ(b.PostedReceivesForTesting(), ring) << "reposted";
    if (how != "TrySend") {
      ASSERT_TRUE(b_->Send(&n, sizeof(n)).ok());  // the answer
    }
    ASSERT_NO_FATAL_FAILURE(ExpectMessage(*a_, n++));
  }
  EXPECT_EQ(b.PostedReceivesForTesting(), ring) << "the ring grew";
}

// A ring that cannot grow (recv_depth at the first ring's 4 slots): the
// sender may send 3 messages (a credit stays in reserve). b, which only
// takes, reposts each slot at once, and the third's credit makes its
// CREDIT message due. b then waits for nothing: the sender must still get
// its credits.
TEST_F(DeviceLabRdmaRepostTest, AReceiverThatOnlyTakesReturnsItsCreditsAtOnce) {
  RdmaPlan plan = plan_;
  plan.qp.recv_depth = ChannelResources::kInitialRingSlots;
  ASSERT_NO_FATAL_FAILURE(Connect(plan));
  uint32_t sent = 0;
  while (sent < 16 && a_->TrySend(&sent, sizeof(sent)).ok()) ++sent;
  ASSERT_EQ(sent, ChannelResources::kInitialRingSlots - 1) << "the sender's credits";
  const uint64_t credit_messages = Impl(*b_).CreditMessagesForTesting();
  for (uint32_t i = 0; i < sent; ++i) ASSERT_NO_FATAL_FAILURE(ExpectMessage(*b_, i));
  EXPECT_EQ(Impl(*b_).PostedReceivesForTesting(), ChannelResources::kInitialRingSlots)
      << "every slot b took is back";
  EXPECT_EQ(Impl(*b_).CreditMessagesForTesting(), credit_messages + 1);
  Status s;
  for (auto deadline = Clock::now() + 10s; Clock::now() < deadline;) {
    if ((s = a_->TrySend(&sent, sizeof(sent))).ok()) break;
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_TRUE(s.ok()) << "the sender never got b's credits back: " << s.ToString();
  ASSERT_NO_FATAL_FAILURE(ExpectMessage(*b_, sent));
}

}  // namespace
}  // namespace rdmad::internal
