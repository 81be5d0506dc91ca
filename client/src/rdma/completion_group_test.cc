// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// A batch's shared CQ (completion_group.h) on the lab's device: channels
// of a group keep their own completions in order while other members' polls
// take them from the CQ, their sleepers wake whoever takes the event, a
// member that leaves takes nothing of the others with it, and a group full
// to its CQ's size sends the next channel to a CQ of its own.

#include "client/src/rdma/completion_group.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "client/src/rdma/lab_channel_fixture.h"
#include "client/src/rdma/rdma_channel.h"
#include "gtest/gtest.h"
#include "rdmad/log.h"

namespace rdmad::internal {
namespace {

using namespace lab;

class DeviceLabRdmaCompletionGroupTest : public DeviceLabRdmaChannelTest {
 protected:
  struct Pair {
    std::unique_ptr<Channel> a, b;  // initiator, acceptor
  };

  // n pairs: the initiators' ends in `initiators`, the acceptors' in
  // `acceptors` (as two hosts' batches), or all in one group if they are
  // the same.
  void ConnectPairs(size_t n, const std::shared_ptr<CompletionGroup>& initiators,
                    const std::shared_ptr<CompletionGroup>& acceptors) {
    for (size_t i = 0; i < n; ++i) {
      Pair& p = pairs_.emplace_back();
      ASSERT_NO_FATAL_FAILURE(ConnectInto(plan_, &p.a, &p.b, nullptr, initiators, acceptors));
    }
  }

  std::shared_ptr<CompletionGroup> Group(size_t channels) {
    auto g = CompletionGroup::ForBatch(plan_, channels);
    EXPECT_TRUE(g.ok()) << g.status().ToString();
    return g.ok() ? std::move(g).value() : nullptr;
  }

  // `rounds` round trips on pair p, without deadlines (each wait sleeps on
  // the shared completion channel and its doorbell): a message of a size
  // that varies with the round (eager and rendezvous), echoed back.
  Status Echo(Pair& p, int rounds, uint64_t seed) {
    auto echo = std::async(std::launch::async, [&]() -> Status {
      for (int r = 0; r < rounds; ++r) {
        auto got = p.b->Recv(kForever);
        if (!got.ok()) return got.status();
        RDMAD_RETURN_IF_ERROR(p.b->Send(got->data(), got->size()));
      }
      return Status::Ok();
    });
    Status result = Status::Ok();
    for (int r = 0; r < rounds && result.ok(); ++r) {
      std::vector<uint8_t> data = Pattern(64 + (r * 997) % 20000, seed * 1000 + r);
      result = p.a->Send(data.data(), data.size());
      if (!result.ok()) break;
      auto back = p.a->Recv(kForever);
      if (!back.ok()) {
        result = back.status();
      } else if (*back != data) {
        result = Status(StatusCode::kDataLoss, "round " + std::to_string(r) + ": the echo differs");
      }
    }
    if (!result.ok()) p.b->Close();  // the echo thread must not wait for us
    Status echoed = echo.get();
    return result.ok() ? echoed : result;
  }

  void TearDown() override { pairs_.clear(); }

  std::vector<Pair> pairs_;
};

TEST_F(DeviceLabRdmaCompletionGroupTest, ABatchSharesOneCqAndEachChannelKeepsItsCompletions) {
  constexpr size_t kPairs = 6;
  auto initiators = Group(kPairs), acceptors = Group(kPairs);
  ASSERT_NE(initiators, nullptr);
  ASSERT_NO_FATAL_FAILURE(ConnectPairs(kPairs, initiators, acceptors));
  EXPECT_EQ(initiators->members(), kPairs);
  EXPECT_EQ(acceptors->members(), kPairs);
  std::vector<std::future<Status>> runs;
  for (size_t i = 0; i < kPairs; ++i) {
    runs.push_back(std::async(std::launch::async, [&, i] { return Echo(pairs_[i], 60, i); }));
  }
  for (size_t i = 0; i < kPairs; ++i) {
    Status s = runs[i].get();
    EXPECT_TRUE(s.ok()) << "pair " << i << ": " << s.ToString();
  }
  // Six pairs busy at once: polls took other members' completions.
  EXPECT_GT(initiators->routed(), 0u);
  EXPECT_GT(acceptors->routed(), 0u);
  std::cout << "[ rdma     ] completions set aside for another member: initiators "
            << initiators->routed() << ", acceptors " << acceptors->routed() << "\n";
}

TEST_F(DeviceLabRdmaCompletionGroupTest, BothEndsInOneGroupWithWaitsOfBothKinds) {
  auto group = Group(4);
  ASSERT_NE(group, nullptr);
  ASSERT_NO_FATAL_FAILURE(ConnectPairs(2, group, group));
  EXPECT_EQ(group->members(), 4u);
  auto other = std::async(std::launch::async, [&] { return Echo(pairs_[1], 80, 7); });
  // Pair 0 with deadlines (each wait in epoll_wait with its timer).
  for (int r = 0; r < 80; ++r) {
    std::vector<uint8_t> data = Pattern(100 + r * 131, r);
    ASSERT_TRUE(pairs_[0].a->Send(data.data(), data.size()).ok());
    auto got = pairs_[0].b->Recv(30s);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(*got, data) << "round " << r;
  }
  Status s = other.get();
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_GT(group->routed(), 0u);
}

TEST_F(DeviceLabRdmaCompletionGroupTest, AMemberThatLeavesTakesNothingOfTheOthers) {
  auto initiators = Group(3), acceptors = Group(3);
  ASSERT_NE(initiators, nullptr);
  ASSERT_NO_FATAL_FAILURE(ConnectPairs(3, initiators, acceptors));
  // Pair 0 leaves with messages in flight and unread; pairs 1 and 2 go on.
  std::vector<uint8_t> data = Pattern(3000, 1);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(pairs_[0].a->Send(data.data(), data.size()).ok());
  auto busy = std::async(std::launch::async, [&] { return Echo(pairs_[1], 100, 11); });
  pairs_[0].b.reset();
  pairs_[0].a.reset();
  EXPECT_EQ(initiators->members(), 2u);
  EXPECT_EQ(acceptors->members(), 2u);
  Status s = busy.get();
  EXPECT_TRUE(s.ok()) << s.ToString();
  s = Echo(pairs_[2], 20, 12);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_F(DeviceLabRdmaCompletionGroupTest, CloseWakesAMembersRecvWhileAnotherMemberSleeps) {
  auto initiators = Group(2), acceptors = Group(2);
  ASSERT_NE(initiators, nullptr);
  ASSERT_NO_FATAL_FAILURE(ConnectPairs(2, initiators, acceptors));
  auto first = std::async(std::launch::async, [&] { return pairs_[0].b->Recv(kForever).status(); });
  auto second = std::async(std::launch::async, [&] { return pairs_[1].b->Recv(kForever); });
  std::this_thread::sleep_for(300ms);  // both asleep on the shared completion channel
  auto t0 = Clock::now();
  pairs_[0].b->Close();
  ASSERT_EQ(first.wait_for(10s), std::future_status::ready) << "Recv still blocked";
  EXPECT_EQ(first.get().code(), StatusCode::kCancelled);
  EXPECT_LT(Clock::now() - t0, 2s);
  // The other member's sleeper still hears its message.
  std::vector<uint8_t> data = Pattern(500, 3);
  ASSERT_TRUE(pairs_[1].a->Send(data.data(), data.size()).ok());
  ASSERT_EQ(second.wait_for(10s), std::future_status::ready) << "the other Recv never woke";
  auto got = second.get();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, data);
}

// One application thread in epoll_wait over two members' CompletionFds:
// each fd wakes for its own channel's messages, whichever member's Arm
// took the shared completion channel's event.
TEST_F(DeviceLabRdmaCompletionGroupTest, CompletionFdsOfTwoMembersInOneEpoll) {
  auto initiators = Group(2), acceptors = Group(2);
  ASSERT_NE(initiators, nullptr);
  ASSERT_NO_FATAL_FAILURE(ConnectPairs(2, initiators, acceptors));
  int ep = epoll_create1(EPOLL_CLOEXEC);
  ASSERT_GE(ep, 0);
  for (uint64_t i = 0; i < 2; ++i) {
    auto fd = pairs_[i].b->CompletionFd();
    ASSERT_TRUE(fd.ok()) << fd.status().ToString();
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, *fd, &ev), 0);
  }
  constexpr int kEach = 30;
  auto senders = std::async(std::launch::async, [&]() -> Status {
    for (int r = 0; r < kEach; ++r) {
      for (int i : {1, 0}) {
        std::vector<uint8_t> data = Pattern(200 + r, i * 100 + r);
        RDMAD_RETURN_IF_ERROR(pairs_[i].a->Send(data.data(), data.size()));
      }
    }
    return Status::Ok();
  });
  int received[2] = {0, 0};
  const auto deadline = Clock::now() + 60s;
  while ((received[0] < kEach || received[1] < kEach) && Clock::now() < deadline) {
    for (int i = 0; i < 2; ++i) {  // take what is there; arm when nothing is
      while (!pairs_[i].b->Arm()) {
        auto got = pairs_[i].b->Recv(0ms);
        if (!got.ok()) break;  // Arm saw no whole message (a notification, ...)
        ASSERT_EQ(*got, Pattern(200 + received[i], i * 100 + received[i])) << "member " << i;
        ++received[i];
      }
    }
    epoll_event events[2];
    epoll_wait(ep, events, 2, 1000);
  }
  close(ep);
  Status s = senders.get();
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(received[0], kEach);
  EXPECT_EQ(received[1], kEach);
}

TEST_F(DeviceLabRdmaCompletionGroupTest, AFullGroupSendsTheNextChannelToItsOwnCq) {
  auto initiators = Group(2), acceptors = Group(2);
  ASSERT_NE(initiators, nullptr);
  EXPECT_EQ(initiators->capacity(), 2 * CompletionGroup::EntriesFor(plan_));
  ASSERT_NO_FATAL_FAILURE(ConnectPairs(3, initiators, acceptors));
  EXPECT_EQ(initiators->members(), 2u);
  EXPECT_EQ(acceptors->members(), 2u);
  for (size_t i = 0; i < 3; ++i) {
    Status s = Echo(pairs_[i], 10, 20 + i);
    EXPECT_TRUE(s.ok()) << "pair " << i << ": " << s.ToString();
  }
}

// The process's eventfds now.
size_t EventFds() {
  const std::vector<std::string> fds = FdTargets();
  return size_t(std::count(fds.begin(), fds.end(), "anon_inode:[eventfd]"));
}

// A member holds no descriptor of its own until it sleeps: then its
// doorbell and its wake eventfd, and the message that comes wakes it.
TEST_F(DeviceLabRdmaCompletionGroupTest, AMemberMakesItsDoorbellOnlyWhenItFirstSleeps) {
  auto initiators = Group(3), acceptors = Group(3);
  ASSERT_NE(initiators, nullptr);
  ASSERT_NE(acceptors, nullptr);
  const size_t before = EventFds();
  ASSERT_NO_FATAL_FAILURE(ConnectPairs(3, initiators, acceptors));
  EXPECT_EQ(EventFds(), before) << "six members, none asleep yet";
  auto blocked = std::async(std::launch::async, [&] { return pairs_[1].b->Recv(kForever); });
  std::this_thread::sleep_for(1500ms);  // past the spin: asleep
  EXPECT_EQ(EventFds(), before + 2) << "the sleeper's doorbell and wake eventfd";
  ASSERT_TRUE(pairs_[1].a->Send("wake", 4).ok());
  ASSERT_EQ(blocked.wait_for(10s), std::future_status::ready) << "Recv still blocked";
  auto got = blocked.get();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::string(got->begin(), got->end()), "wake");
  for (size_t i = 0; i < 3; ++i) {
    Status s = Echo(pairs_[i], 5, 40 + i);
    EXPECT_TRUE(s.ok()) << "pair " << i << ": " << s.ToString();
  }
  pairs_.clear();
  EXPECT_EQ(EventFds(), before) << "closed channels leave no eventfd behind";
}

}  // namespace
}  // namespace rdmad::internal
