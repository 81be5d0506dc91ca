// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/lifecycle/builtin_starter.h"

#include <deque>

#include "gtest/gtest.h"

namespace rdmad {
namespace {

using namespace std::chrono_literals;
using Clock = BuiltinStarter::Clock;

class FakeService : public BuiltinService {
 public:
  explicit FakeService(int* stops) : stops_(stops) {}
  void Stop() override { ++*stops_; }

 private:
  int* stops_;
};

// A factory answering from a script of statuses (OK: a service).
struct Script final : BuiltinServiceFactory {
  mutable std::deque<Status> answers;
  mutable int calls = 0;
  mutable int stops = 0;
  StatusOr<std::unique_ptr<BuiltinService>> Make(const std::string& socket) const override {
    EXPECT_EQ(socket, "rdmad.sock");
    ++calls;
    Status next = answers.empty() ? Status::Ok() : answers.front();
    if (!answers.empty()) answers.pop_front();
    if (!next.ok()) return next;
    return std::unique_ptr<BuiltinService>(new FakeService(&stops));
  }
};

TEST(BuiltinStarterTest, ASlowSocketIsTriedAgainWithBackoffUntilItStarts) {
  Script script;
  script.answers = {Status::Unavailable("no answer within 2000 ms"),
                    Status::DeadlineExceeded("deadline"), Status::Ok()};
  BuiltinStarter starter("echo service", &script, "rdmad.sock");
  Clock::time_point t0{};
  starter.Update(true, "", t0);
  EXPECT_FALSE(starter.running());
  ASSERT_TRUE(starter.next_try().has_value());
  EXPECT_EQ(*starter.next_try(), t0 + 1s);
  starter.Poll(t0 + 500ms);  // not yet
  EXPECT_EQ(script.calls, 1);
  starter.Poll(t0 + 1s);
  EXPECT_EQ(script.calls, 2);
  EXPECT_EQ(*starter.next_try(), t0 + 3s);  // 2 s after the second try
  starter.Poll(t0 + 3s);
  EXPECT_TRUE(starter.running());
  EXPECT_FALSE(starter.next_try().has_value());
  starter.Update(true, "", t0 + 4s);  // running: nothing to do
  EXPECT_EQ(script.calls, 3);
  starter.Update(false, "echo.enabled = false", t0 + 5s);
  EXPECT_FALSE(starter.running());
  EXPECT_EQ(script.stops, 1);
}

TEST(BuiltinStarterTest, ANameHeldElsewhereIsNotRetriedAndDisablingStopsRetries) {
  Script script;
  script.answers = {Status::AlreadyExists("service rdmad.echo already has a listener")};
  BuiltinStarter starter("echo service", &script, "rdmad.sock");
  starter.Update(true, "", Clock::time_point{});
  EXPECT_FALSE(starter.running());
  EXPECT_FALSE(starter.next_try().has_value());

  Script slow;
  slow.answers = {Status::Unavailable("slow")};
  BuiltinStarter retrying("echo service", &slow, "rdmad.sock");
  retrying.Update(true, "", Clock::time_point{});
  ASSERT_TRUE(retrying.next_try().has_value());
  retrying.Update(false, "echo.enabled = false", Clock::time_point{} + 100ms);
  EXPECT_FALSE(retrying.next_try().has_value());
  retrying.Poll(Clock::time_point{} + 10s);
  EXPECT_EQ(slow.calls, 1);

  BuiltinStarter none("echo service", nullptr, "rdmad.sock");  // a daemon without one
  none.Update(true, "", Clock::time_point{});
  EXPECT_FALSE(none.running());
}

}  // namespace
}  // namespace rdmad
