// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Conformance: Channel::TrySend (a send that never waits), on every
// transport the suite is instantiated for.

#include <cstring>
#include <string>
#include <vector>

#include "client/src/channel_suite.h"

namespace rdmad::internal {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr size_t kMessage = 4000;      // eager on every transport (under two slots)
constexpr int kMaxMessages = 1 << 16;  // 256 MB: more than any channel buffers

TEST_P(ChannelConformanceTest, TrySendSendsWhatFitsAndNeverWaits) {
  ASSERT_TRUE(a_->TrySend("hi", 2).ok());
  auto got = b_->Recv(kPatience);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::string(got->begin(), got->end()), "hi");

  // The peer does not read: the buffers fill, and TrySend then says so at
  // once, having sent nothing.
  auto started = Clock::now();
  int sent = 0;
  Status last;
  for (; sent < kMaxMessages; ++sent) {
    std::vector<uint8_t> message = Pattern(kMessage, sent);
    std::memcpy(message.data(), &sent, sizeof(sent));
    last = a_->TrySend(message.data(), message.size());
    if (!last.ok()) break;
  }
  EXPECT_EQ(last.code(), StatusCode::kDeadlineExceeded) << last.ToString();
  EXPECT_GT(sent, 0);
  EXPECT_LT(Clock::now() - started, 10s) << "TrySend waited";

  // What it sent arrives whole and in order, and then there is room again.
  for (int i = 0; i < sent; ++i) {
    auto message = b_->Recv(kPatience);
    ASSERT_TRUE(message.ok()) << "message " << i << " of " << sent << ": "
                              << message.status().ToString();
    ASSERT_EQ(message->size(), kMessage);
    int index = -1;
    std::memcpy(&index, message->data(), sizeof(index));
    ASSERT_EQ(index, i);
  }
  Status again;
  for (auto until = Clock::now() + kPatience; Clock::now() < until;) {
    again = a_->TrySend("again", 5);
    if (again.code() != StatusCode::kDeadlineExceeded) break;
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_TRUE(again.ok()) << again.ToString();
  got = b_->Recv(kPatience);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::string(got->begin(), got->end()), "again");
}

TEST_P(ChannelConformanceTest, TrySendOnAnEndedChannelSaysWhy) {
  b_->Close();
  a_->Close();
  Status s = a_->TrySend("x", 1);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.code(), StatusCode::kDeadlineExceeded) << s.ToString();
}

}  // namespace
}  // namespace rdmad::internal
