// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The RDMA channel's waits on the lab's device (channel_impl.cc): a wait
// without a deadline sleeps in one blocking read of the completion channel,
// one with a deadline in epoll_wait beside a wake eventfd; Close, Abort and
// failures wake either, and an idle wait uses no CPU.

#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/src/abortable_channel.h"
#include "client/src/rdma/lab_channel_fixture.h"
#include "client/src/rdma/rdma_channel.h"
#include "gtest/gtest.h"
#include "rdmad/log.h"

namespace rdmad::internal {
namespace {

using namespace lab;

double ThreadCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// The descriptors this process holds (/proc/self/fd), or those of one
// kind (their link's target, as "anon_inode:[eventfd]").
int OpenFds(std::string_view kind = "") {
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    std::error_code link_ec;
    auto target = std::filesystem::read_symlink(e.path(), link_ec);
    if (kind.empty() || (!link_ec && target.string() == kind)) ++n;
  }
  return n;
}
int OpenEventFds() { return OpenFds("anon_inode:[eventfd]"); }

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + " ";
  return out;
}

// CPU of the calling thread and wall time over a call, in seconds.
template <typename F>
auto Timed(F f) {
  double cpu0 = ThreadCpuSeconds();
  auto t0 = Clock::now();
  auto result = f();
  double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  return std::make_tuple(std::move(result), ThreadCpuSeconds() - cpu0, wall);
}

// A Recv(timeout) on `channel`, blocked in another thread: Close wakes it
// (ready within `wait`) with CANCELLED, `within` after the Close.
void CloseWakesABlockedRecv(Channel& channel, std::chrono::milliseconds timeout,
                            std::chrono::seconds wait, std::chrono::seconds within) {
  auto blocked = std::async(std::launch::async, [&] { return channel.Recv(timeout).status(); });
  std::this_thread::sleep_for(300ms);  // past the spin: asleep
  auto t0 = Clock::now();
  channel.Close();
  ASSERT_EQ(blocked.wait_for(wait), std::future_status::ready) << "Recv still blocked";
  EXPECT_EQ(blocked.get().code(), StatusCode::kCancelled);
  EXPECT_LT(Clock::now() - t0, within);
}

TEST_F(DeviceLabRdmaChannelTest, AnIdleReceiverUsesNoCpu) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  auto blocked =
      std::async(std::launch::async, [&] { return Timed([&] { return b_->Recv(2000ms); }); });
  auto [got, cpu, wall] = blocked.get();
  EXPECT_EQ(got.status().code(), StatusCode::kDeadlineExceeded) << got.status().ToString();
  EXPECT_GE(wall, 1.9);
  std::cout << "[ rdma     ] idle Recv: " << cpu * 1e3 << " ms CPU in " << wall << " s ("
            << 100 * cpu / wall << "% of a core)\n";
  EXPECT_LT(cpu / wall, 0.05);
}

// Without a deadline a Recv sleeps in a read of the completion channel: no
// eventfd, no epoll set, no CPU, and the next message wakes it. (At debug
// level a long wait is reported every few seconds: it sleeps with a timer.)
TEST_F(DeviceLabRdmaChannelTest, ARecvWithoutADeadlineSleepsInOneReadOfTheCompletionChannel) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  ScopedClientLogLevel info(LogLevel::kInfo);
  const std::vector<std::string> fds = FdTargets();
  auto blocked =
      std::async(std::launch::async, [&] { return Timed([&] { return b_->Recv(kForever); }); });
  std::this_thread::sleep_for(1500ms);
  EXPECT_EQ(FdTargets(), fds) << "descriptors made for the sleep: before " << Joined(fds)
                              << "; during " << Joined(FdTargets());
  ASSERT_TRUE(a_->Send("wake", 4).ok());
  ASSERT_EQ(blocked.wait_for(5s), std::future_status::ready) << "Recv still blocked";
  auto [got, cpu, wall] = blocked.get();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::string(got->begin(), got->end()), "wake");
  EXPECT_GE(wall, 1.4);
  EXPECT_LT(cpu / wall, 0.05) << cpu * 1e3 << " ms CPU in " << wall << " s";
}

TEST_F(DeviceLabRdmaChannelTest, CloseWakesABlockedRecv) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  ASSERT_NO_FATAL_FAILURE(CloseWakesABlockedRecv(*b_, kForever, 5s, 2s));
  EXPECT_EQ(b_->Send("x", 1).code(), StatusCode::kCancelled);
}

// A Send waiting for credits the peer never returns (it reads nothing):
// Close wakes it.
TEST_F(DeviceLabRdmaChannelTest, CloseWakesASendWaitingForCredits) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  std::atomic<int> sent{0};
  auto sender = std::async(std::launch::async, [&] {
    for (;;) {
      Status s = a_->Send("x", 1);
      if (!s.ok()) return s;
      ++sent;
    }
  });
  int before = -1;
  for (auto until = Clock::now() + 10s; Clock::now() < until && sent != before;) {
    before = sent;
    std::this_thread::sleep_for(300ms);
  }
  ASSERT_EQ(sent, before) << "the sender never ran out of credits";
  ASSERT_EQ(sender.wait_for(0s), std::future_status::timeout) << sender.get().ToString();
  auto t0 = Clock::now();
  a_->Close();
  ASSERT_EQ(sender.wait_for(5s), std::future_status::ready) << "Send still blocked";
  EXPECT_EQ(sender.get().code(), StatusCode::kCancelled);
  EXPECT_LT(Clock::now() - t0, 3s);
  std::cout << "[ rdma     ] the sender waited for credits after " << before << " messages\n";
}

// A peer that does not answer (its QP in ERR): the WRITE that would wake
// the sleeper is retried and the CLOSE cannot complete; Close still wakes
// it, moving the QP to ERR at its end.
TEST_F(DeviceLabRdmaChannelTest, CloseWakesABlockedRecvWhenThePeerDoesNotAnswer) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  dynamic_cast<AbortableChannel&>(*a_).Abort(Status::Unavailable("gone"));
  ASSERT_NO_FATAL_FAILURE(CloseWakesABlockedRecv(*b_, kForever, 10s, 4s));
}

// The completion fd opened while another thread sleeps in a read of the
// completion channel: the event stays the sleeper's, and the fd works from
// then on.
TEST_F(DeviceLabRdmaChannelTest, ACompletionFdOpenedDuringASleepInAReadLeavesItItsEvent) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  auto blocked = std::async(std::launch::async, [&] { return b_->Recv(kForever); });
  std::this_thread::sleep_for(300ms);
  auto fd = b_->CompletionFd();
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  EXPECT_TRUE(b_->Arm());
  ASSERT_TRUE(a_->Send("one", 3).ok());
  ASSERT_EQ(blocked.wait_for(5s), std::future_status::ready) << "Recv still blocked";
  auto got = blocked.get();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::string(got->begin(), got->end()), "one");
  while (!b_->Arm()) {  // the event the sleeper took may have left news
  }
  ASSERT_TRUE(a_->Send("two", 3).ok());
  pollfd p{*fd, POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 5000), 1) << "the completion fd did not wake";
  got = b_->Recv(1s);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::string(got->begin(), got->end()), "two");
  // A wait without a deadline still works on the now non-blocking channel.
  auto third = std::async(std::launch::async, [&] { return b_->Recv(kForever); });
  std::this_thread::sleep_for(300ms);
  ASSERT_TRUE(a_->Send("three", 5).ok());
  ASSERT_EQ(third.wait_for(5s), std::future_status::ready) << "Recv still blocked";
  got = third.get();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::string(got->begin(), got->end()), "three");
}

// A channel makes the eventfd that wakes a waiter with a deadline when it
// first sleeps so, not when it connects: a thousand channels that never
// wait hold a thousand descriptors fewer. Made, it wakes the sleeper on
// Close.
TEST_F(DeviceLabRdmaChannelTest, AChannelMakesItsWakeEventFdWhenItFirstSleeps) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  const int connected = OpenEventFds();  // the device's own among them
  EXPECT_EQ(b_->Recv(50ms).status().code(), StatusCode::kDeadlineExceeded);  // sleeps
  EXPECT_EQ(OpenEventFds(), connected + 1) << "b's first sleep";
  EXPECT_EQ(b_->Recv(50ms).status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(OpenEventFds(), connected + 1) << "b's second sleep made another";
  EXPECT_EQ(a_->Recv(50ms).status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(OpenEventFds(), connected + 2) << "a's first sleep";
  ASSERT_TRUE(a_->Send("x", 1).ok());
  ASSERT_TRUE(b_->Recv(5s).ok());
  ASSERT_NO_FATAL_FAILURE(CloseWakesABlockedRecv(*b_, 60s, 5s, 2s));
}

// A process out of descriptors when a channel first sleeps with a deadline:
// it sleeps in short naps on the completion channel alone, and still sees
// Close. A sleep without a deadline needs no descriptor.
TEST_F(DeviceLabRdmaChannelTest, WithNoDescriptorLeftASleepingRecvStillSeesClose) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  const int open_now = OpenFds();
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  rlimit low = old;
  low.rlim_cur = std::min<rlim_t>(old.rlim_cur, rlim_t(open_now) + 8);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::mutex mu;
  std::string warnings;
  SetClientLogSink([&](LogLevel level, std::string_view message) {
    std::lock_guard lock(mu);
    if (level == LogLevel::kWarn) warnings.append(message).append("\n");
  });
  std::vector<int> filler;
  for (int fd; (fd = dup(STDERR_FILENO)) >= 0;) filler.push_back(fd);
  auto later = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(300ms);
    return a_->Send("x", 1);
  });
  auto forever = b_->Recv(kForever);  // asleep in a read: no descriptor needed
  EXPECT_TRUE(later.get().ok());
  auto blocked = std::async(std::launch::async, [&] { return b_->Recv(60s).status(); });
  std::this_thread::sleep_for(300ms);
  auto t0 = Clock::now();
  b_->Close();
  bool ready = blocked.wait_for(5s) == std::future_status::ready;
  for (int fd : filler) close(fd);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
  SetClientLogSink(nullptr);
  ASSERT_TRUE(forever.ok()) << forever.status().ToString();
  ASSERT_TRUE(ready) << "Recv still blocked";
  EXPECT_EQ(blocked.get().code(), StatusCode::kCancelled);
  EXPECT_LT(Clock::now() - t0, 2s);
  EXPECT_NE(warnings.find("eventfd: Too many open files; sleeping at most 50 ms"),
            std::string::npos)
      << warnings;
}

TEST_F(DeviceLabRdmaChannelTest, PeerCloseEndsTheOtherSide) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  auto blocked = std::async(std::launch::async, [&] {
    std::vector<Status> seen;
    for (int i = 0; i < 3; ++i) seen.push_back(b_->Recv(10s).status());
    return seen;
  });
  ASSERT_TRUE(a_->Send("one", 3).ok());
  ASSERT_TRUE(a_->Send("two", 3).ok());
  a_->Close();
  std::vector<Status> seen = blocked.get();
  EXPECT_TRUE(seen[0].ok()) << seen[0].ToString();
  EXPECT_TRUE(seen[1].ok()) << seen[1].ToString();  // data before the close arrives
  EXPECT_EQ(seen[2].code(), StatusCode::kUnavailable) << seen[2].ToString();
  EXPECT_NE(seen[2].message().find("closed by peer"), std::string::npos);
  EXPECT_NE(b_->Recv(1s).status().message().find("closed by peer"), std::string::npos);
  Status s = b_->Send("x", 1);
  EXPECT_NE(s.message().find("closed by peer"), std::string::npos) << s.ToString();
  EXPECT_NE(b_->status().message().find("closed by peer"), std::string::npos);
}

// The daemon's word that the peer closed or was lost (the HoldChannel
// event): the QP goes to ERR, and a Recv blocked on the CQ wakes with it.
TEST_F(DeviceLabRdmaChannelTest, AbortByTheDaemonWakesABlockedRecv) {
  ASSERT_NO_FATAL_FAILURE(Connect(plan_));
  const Status why = Status::Unavailable("closed by peer hostA: the application went away");
  auto blocked = std::async(std::launch::async, [&] { return b_->Recv(kForever).status(); });
  std::this_thread::sleep_for(300ms);  // past the spin: asleep on the completion channel
  auto t0 = Clock::now();
  dynamic_cast<AbortableChannel&>(*b_).Abort(why);
  ASSERT_EQ(blocked.wait_for(5s), std::future_status::ready) << "Recv still blocked";
  EXPECT_EQ(blocked.get(), why);
  EXPECT_LT(Clock::now() - t0, 1s);
  EXPECT_EQ(b_->Send("x", 1), why);
  EXPECT_EQ(b_->status(), why);
  b_->Close();
}

}  // namespace
}  // namespace rdmad::internal
