// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The Channel conformance tests of the completion fd (CompletionFd and
// Arm, see channel.h): an event loop that sleeps on the fd is woken for
// messages, notifications, finished transfers and the peer's close, on
// every transport, and stays asleep while nothing happens.

#include <poll.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "client/src/channel_suite.h"

namespace rdmad::internal {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

bool Readable(int fd, milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, static_cast<int>(timeout.count())) == 1;
}

// The loop of channel.h: take() what is there, Arm, sleep on the fd.
// Fails after kPatience without take() succeeding.
::testing::AssertionResult RunLoop(Channel& channel, int fd, const std::function<bool()>& take,
                                   int* sleeps = nullptr) {
  auto end = Clock::now() + kPatience;
  while (Clock::now() < end) {
    if (take()) return ::testing::AssertionSuccess();
    if (channel.Arm()) {
      Readable(fd, std::chrono::duration_cast<milliseconds>(end - Clock::now()));
      if (sleeps != nullptr) ++*sleeps;
    }
  }
  return ::testing::AssertionFailure()
         << "the event loop got nothing in " << kPatience.count() << " ms";
}

// True once Arm succeeds (a few tries: what was pending is taken first).
bool ArmsSoon(Channel& channel) {
  for (int i = 0; i < 3; ++i) {
    if (channel.Arm()) return true;
  }
  return false;
}

std::string Text(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

TEST_P(ChannelConformanceTest, TheCompletionFdWakesALoopForEachKindOfNews) {
  auto fd = a_->CompletionFd();
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  auto again = a_->CompletionFd();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *fd) << "one fd per channel";

  // Idle: armed, and the fd stays quiet.
  ASSERT_TRUE(ArmsSoon(*a_));
  EXPECT_FALSE(Readable(*fd, milliseconds(100)));

  // A message.
  ASSERT_TRUE(b_->Send("hello", 5).ok());
  EXPECT_TRUE(Readable(*fd, kPatience)) << "a message did not wake the armed fd";
  std::string got;
  ASSERT_TRUE(RunLoop(*a_, *fd, [&] {
    auto m = a_->Recv(milliseconds(0));
    if (m.ok()) got = Text(*m);
    return m.ok();
  }));
  EXPECT_EQ(got, "hello");
  ASSERT_TRUE(ArmsSoon(*a_)) << "nothing is left, so Arm must succeed";
  EXPECT_FALSE(Readable(*fd, milliseconds(100)));

  // A notification.
  ASSERT_TRUE(b_->Submit({}, "ready").ok());
  ASSERT_TRUE(RunLoop(*a_, *fd, [&] {
    auto n = a_->RecvNotification(milliseconds(0));
    if (n.ok()) got = Text(*n);
    return n.ok();
  }));
  EXPECT_EQ(got, "ready");

  // A transfer of a's own finishing.
  std::vector<uint8_t> remote_bytes(65536), local_bytes = Pattern(65536, 5);
  auto remote = b_->RegisterMemory(remote_bytes.data(), remote_bytes.size());
  ASSERT_TRUE(remote.ok());
  auto desc = ExchangeDescriptor(*b_, *a_, **remote);
  ASSERT_TRUE(desc.ok());
  auto local = a_->RegisterMemory(local_bytes.data(), local_bytes.size());
  ASSERT_TRUE(local.ok());
  ASSERT_TRUE(ArmsSoon(*a_));
  auto transfer = a_->Submit(
      {TransferOp{TransferOp::Kind::kWrite, local->get(), 0, *desc, 0, local_bytes.size()}});
  ASSERT_TRUE(transfer.ok()) << transfer.status().ToString();
  Status done = Status::Unavailable("not polled");
  ASSERT_TRUE(RunLoop(*a_, *fd, [&] { return (*transfer)->Poll(&done); }));
  EXPECT_TRUE(done.ok()) << done.ToString();
  EXPECT_EQ(remote_bytes, local_bytes);

  // Many messages: every one arrives through the loop, in order.
  constexpr int kMessages = 200;
  InBackground([&] {
    for (int i = 0; i < kMessages; ++i) {
      std::string m = "m" + std::to_string(i);
      ASSERT_TRUE(b_->Send(m.data(), m.size()).ok());
    }
  });
  int next = 0, sleeps = 0;
  ASSERT_TRUE(RunLoop(
      *a_, *fd,
      [&] {
        for (auto m = a_->Recv(milliseconds(0)); m.ok(); m = a_->Recv(milliseconds(0))) {
          EXPECT_EQ(Text(*m), "m" + std::to_string(next));
          ++next;
        }
        return next == kMessages;
      },
      &sleeps));
  JoinBackground();
  EXPECT_LE(sleeps, kMessages) << "at most one sleep per message";

  // The peer's close: the fd wakes, Arm stays false, Recv says why.
  ASSERT_TRUE(ArmsSoon(*a_));
  b_->Close();
  EXPECT_TRUE(Readable(*fd, kPatience)) << "the peer's close did not wake the armed fd";
  Status closed;
  ASSERT_TRUE(RunLoop(*a_, *fd, [&] {
    auto m = a_->Recv(milliseconds(0));
    closed = m.status();
    return m.status().code() != StatusCode::kDeadlineExceeded;
  }));
  EXPECT_EQ(closed.code(), StatusCode::kUnavailable) << closed.ToString();
  EXPECT_FALSE(a_->Arm()) << "a closed channel never arms";
}

// A blocking call on one thread and an event loop on another share the
// channel: neither steals what the other waits for.
TEST_P(ChannelConformanceTest, TheCompletionFdAndABlockingRecvShareAChannel) {
  auto fd = a_->CompletionFd();
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  constexpr int kRounds = 50;
  std::atomic<int> received{0};
  InBackground([&] {
    for (int i = 0; i < kRounds; ++i) {
      auto m = a_->Recv(kPatience);
      ASSERT_TRUE(m.ok()) << "round " << i << ": " << m.status().ToString();
      EXPECT_EQ(Text(*m), "m" + std::to_string(i));
      received.fetch_add(1);
    }
  });
  for (int i = 0; i < kRounds; ++i) {
    std::string note = "n" + std::to_string(i), message = "m" + std::to_string(i);
    ASSERT_TRUE(b_->Submit({}, note).ok());
    ASSERT_TRUE(b_->Send(message.data(), message.size()).ok());
    std::string got;
    ASSERT_TRUE(RunLoop(*a_, *fd,
                        [&] {
                          auto n = a_->RecvNotification(milliseconds(0));
                          if (n.ok()) got = Text(*n);
                          return n.ok();
                        }))
        << "round " << i;
    EXPECT_EQ(got, note);
  }
  JoinBackground();
  EXPECT_EQ(received.load(), kRounds);
}

}  // namespace
}  // namespace rdmad::internal
