// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/channel_pool.h"

#include <atomic>
#include <thread>

#include "gtest/gtest.h"

namespace rdmad::internal {
namespace {

using namespace std::chrono_literals;

// What a test can see of and do to a fake channel after handing it over.
struct FakeState {
  std::mutex mu;
  Status status;                             // guarded by mu
  std::vector<std::vector<uint8_t>> unread;  // guarded by mu
  bool closed = false;                       // guarded by mu
  int sends = 0;                             // guarded by mu
  std::vector<uint32_t> exposed;             // rkeys not revoked; guarded by mu
};

class FakeChannel final : public Channel {
 public:
  explicit FakeChannel(std::shared_ptr<FakeState> state, uint64_t id) : state_(std::move(state)) {
    info_.id = id;
  }
  const ChannelInfo& info() const override { return info_; }
  Status Send(const void*, size_t) override {
    std::lock_guard lock(state_->mu);
    if (state_->closed) return Status::Cancelled("closed");
    ++state_->sends;
    return state_->status;
  }
  Status Send(const MemoryRegion&, size_t, size_t) override { return Status::Unimplemented("x"); }
  StatusOr<std::vector<uint8_t>> Recv(std::chrono::milliseconds) override {
    std::lock_guard lock(state_->mu);
    if (state_->unread.empty()) return Status::DeadlineExceeded("nothing");
    auto m = state_->unread.front();
    state_->unread.erase(state_->unread.begin());
    return m;
  }
  StatusOr<std::unique_ptr<MemoryRegion>> RegisterMemory(void*, size_t, MemoryAccess) override {
    return Status::Unimplemented("x");
  }
  StatusOr<std::unique_ptr<MemoryRegion>> RegisterDmabuf(int, uint64_t, size_t) override {
    return Status::Unimplemented("x");
  }
  Status Write(const MemoryRegion&, size_t, const RegionDescriptor&, uint64_t, size_t) override {
    return Status::Unimplemented("x");
  }
  StatusOr<RegionDescriptor> Expose(const MemoryRegion&, MemoryAccess) override {
    std::lock_guard lock(state_->mu);
    RegionDescriptor d;
    d.rkey = uint32_t(state_->exposed.size()) + 100;
    state_->exposed.push_back(d.rkey);
    return d;
  }
  Status Revoke(const RegionDescriptor& d) override {
    std::lock_guard lock(state_->mu);
    if (std::erase(state_->exposed, d.rkey) == 0) return Status::NotFound("not exposed");
    return Status::Ok();
  }
  Status Read(const MemoryRegion&, size_t, const RegionDescriptor&, uint64_t, size_t) override {
    return Status::Unimplemented("x");
  }
  Status status() const override {
    std::lock_guard lock(state_->mu);
    return state_->closed ? Status::Cancelled("closed") : state_->status;
  }
  void Close() override {
    std::lock_guard lock(state_->mu);
    state_->closed = true;
  }

 private:
  std::shared_ptr<FakeState> state_;
  ChannelInfo info_;
};

// Makes fake channels (or fails, while fail is set) and keeps their state.
struct Factory {
  std::mutex mu;
  std::vector<std::shared_ptr<FakeState>> made;  // guarded by mu
  std::atomic<int> calls{0};
  std::atomic<bool> fail{false};

  ChannelPool::Connector Connector() {
    return [this](const std::string& peer,
                  const std::string& service) -> StatusOr<std::unique_ptr<Channel>> {
      ++calls;
      if (fail) return Status::Unavailable("peer " + peer + " is down");
      std::lock_guard lock(mu);
      made.push_back(std::make_shared<FakeState>());
      return std::unique_ptr<Channel>(new FakeChannel(made.back(), made.size()));
    };
  }
  std::shared_ptr<FakeState> State(uint64_t id) {
    std::lock_guard lock(mu);
    return made.at(id - 1);
  }
  int Closed() {
    std::lock_guard lock(mu);
    int n = 0;
    for (auto& s : made) {
      std::lock_guard l(s->mu);
      n += s->closed;
    }
    return n;
  }
};

PoolCount CountOf(ChannelPool& pool, const std::string& peer, const std::string& service) {
  for (const PoolCount& c : pool.Counts()) {
    if (c.peer == peer && c.service == service) return c;
  }
  return PoolCount{};
}

// Waits up to 5 s for pred.
template <typename Pred>
bool Eventually(Pred pred) {
  auto until = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return pred();
}

TEST(ChannelPoolTest, KeepsTheTargetWarmAndRefillsBehindAnAcquire) {
  Factory f;
  auto pool = ChannelPool::Create(f.Connector(), nullptr);
  EXPECT_EQ(pool->Acquire("node2", "kv"), nullptr);  // no target
  pool->SetTargets({{"node2", "kv", 2}}, 60s);
  ASSERT_TRUE(Eventually([&] { return CountOf(*pool, "node2", "kv").warm == 2; }));
  std::unique_ptr<Channel> c = pool->Acquire("node2", "kv");
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->Send("x", 1).ok());
  ASSERT_TRUE(Eventually([&] { return CountOf(*pool, "node2", "kv").warm == 2; }));
  EXPECT_EQ(CountOf(*pool, "node2", "kv").in_use, 1);
  EXPECT_EQ(f.calls.load(), 3);
  EXPECT_EQ(pool->Acquire("node2", "other"), nullptr);
}

TEST(ChannelPoolTest, CloseGivesAHealthyChannelBackAndExtrasGoWhenIdle) {
  Factory f;
  auto pool = ChannelPool::Create(f.Connector(), nullptr);
  pool->SetTargets({{"node2", "kv", 1}}, 60s);
  ASSERT_TRUE(Eventually([&] { return CountOf(*pool, "node2", "kv").warm == 1; }));
  std::unique_ptr<Channel> c = pool->Acquire("node2", "kv");
  uint64_t id = c->info().id;
  ASSERT_TRUE(Eventually([&] { return CountOf(*pool, "node2", "kv").warm == 1; }));
  c->Close();
  EXPECT_EQ(c->Send("x", 1).code(), StatusCode::kCancelled);  // ours no more
  EXPECT_EQ(CountOf(*pool, "node2", "kv").warm, 2);           // beyond the target, idle < 60 s
  EXPECT_EQ(CountOf(*pool, "node2", "kv").in_use, 0);
  EXPECT_FALSE(f.State(id)->closed);
  pool->SetTargets({{"node2", "kv", 1}}, 0s);  // extras go at once now
  ASSERT_TRUE(Eventually([&] { return CountOf(*pool, "node2", "kv").warm == 1; }));
  EXPECT_EQ(f.Closed(), 1);
  pool->SetTargets({}, 0s);  // the target went: every warm channel closes
  ASSERT_TRUE(Eventually([&] { return f.Closed() == 2; }));
  EXPECT_EQ(f.calls.load(), 2);
}

// A warm channel goes back to the pool with nothing of its last user's
// exposed: the next user inherits no exposure.
TEST(ChannelPoolTest, WhatALeaseExposedIsRevokedWhenItGoesBack) {
  Factory f;
  auto pool = ChannelPool::Create(f.Connector(), nullptr);
  pool->SetTargets({{"node2", "kv", 1}}, 60s);
  ASSERT_TRUE(Eventually([&] { return CountOf(*pool, "node2", "kv").warm == 1; }));
  std::unique_ptr<Channel> c = pool->Acquire("node2", "kv");
  ASSERT_NE(c, nullptr);
  uint64_t id = c->info().id;
  struct AnyRegion final : MemoryRegion {  // the fake channel does not look at it
    uint8_t* data() const override { return nullptr; }
    size_t size() const override { return 0; }
    RegionDescriptor descriptor() const override { return {}; }
    MemoryAccess access() const override { return MemoryAccess::kLocal; }
  } region;
  auto kept = c->Expose(region);
  ASSERT_TRUE(kept.ok());
  auto revoked = c->Expose(region);
  ASSERT_TRUE(revoked.ok());
  ASSERT_TRUE(c->Revoke(*revoked).ok());
  EXPECT_EQ(f.State(id)->exposed, std::vector<uint32_t>{kept->rkey});
  c.reset();  // back to the pool
  EXPECT_FALSE(f.State(id)->closed);
  EXPECT_TRUE(f.State(id)->exposed.empty());
}

TEST(ChannelPoolTest, AChannelWithUnreadDataOrAFailureIsClosedNotKept) {
  Factory f;
  auto pool = ChannelPool::Create(f.Connector(), nullptr);
  pool->SetTargets({{"node2", "kv", 1}}, 60s);
  ASSERT_TRUE(Eventually([&] { return CountOf(*pool, "node2", "kv").warm == 1; }));
  std::unique_ptr<Channel> dirty = pool->Acquire("node2", "kv");
  f.State(dirty->info().id)->unread.push_back({1, 2, 3});
  uint64_t dirty_id = dirty->info().id;
  dirty.reset();  // the destructor gives it back too
  EXPECT_TRUE(f.State(dirty_id)->closed);
  ASSERT_TRUE(Eventually([&] { return CountOf(*pool, "node2", "kv").warm == 1; }));
  std::unique_ptr<Channel> broken = pool->Acquire("node2", "kv");
  f.State(broken->info().id)->status = Status::Unavailable("closed by peer");
  broken->Close();
  EXPECT_TRUE(f.State(broken->info().id)->closed);
  EXPECT_EQ(CountOf(*pool, "node2", "kv").in_use, 0);
}

TEST(ChannelPoolTest, AWarmChannelThatFailsIsReplaced) {
  Factory f;
  auto pool = ChannelPool::Create(f.Connector(), nullptr);
  pool->SetTargets({{"node2", "kv", 1}}, 60s);
  ASSERT_TRUE(Eventually([&] { return CountOf(*pool, "node2", "kv").warm == 1; }));
  f.State(1)->status = Status::Unavailable("peer daemon node2 lost");
  ASSERT_TRUE(Eventually([&] { return f.calls.load() == 2; }));
  EXPECT_TRUE(f.State(1)->closed);
  std::unique_ptr<Channel> c = pool->Acquire("node2", "kv");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->info().id, 2u);
}

TEST(ChannelPoolTest, FailedRefillsBackOffAndReportTheError) {
  Factory f;
  f.fail = true;
  std::mutex mu;
  std::vector<PoolCount> reports;
  auto pool = ChannelPool::Create(f.Connector(), [&](const PoolCount& c) {
    std::lock_guard lock(mu);
    reports.push_back(c);
  });
  pool->SetTargets({{"node2", "kv", 4}}, 60s);
  std::this_thread::sleep_for(1s);
  // 100, 200, 400 ms (+ up to half again): at most 4 tries in a second.
  EXPECT_GE(f.calls.load(), 2);
  EXPECT_LE(f.calls.load(), 4);
  EXPECT_NE(CountOf(*pool, "node2", "kv").last_error.find("peer node2 is down"), std::string::npos);
  {
    std::lock_guard lock(mu);
    ASSERT_FALSE(reports.empty());
    EXPECT_EQ(reports.back().target, 4);
    EXPECT_NE(reports.back().last_error.find("UNAVAILABLE"), std::string::npos);
  }
  f.fail = false;  // the peer is back: the pool fills (within the backoff)
  ASSERT_TRUE(Eventually([&] { return CountOf(*pool, "node2", "kv").warm == 4; }));
  EXPECT_EQ(CountOf(*pool, "node2", "kv").last_error, "");
}

// An application taking and giving back pooled channels in a tight loop
// costs rdmad one report per 250 ms, not an RPC per Acquire and Close, and
// the last report holds the newest counts.
TEST(ChannelPoolTest, ABurstOfAcquiresIsReportedAtMostEveryQuarterSecond) {
  Factory f;
  std::mutex mu;
  std::vector<std::pair<std::chrono::steady_clock::time_point, PoolCount>> reports;
  auto pool = ChannelPool::Create(f.Connector(), [&](const PoolCount& c) {
    std::lock_guard lock(mu);
    reports.emplace_back(std::chrono::steady_clock::now(), c);
  });
  pool->SetTargets({{"node2", "kv", 1}}, 60s);
  ASSERT_TRUE(Eventually([&] { return CountOf(*pool, "node2", "kv").warm == 1; }));
  for (int i = 0; i < 200; ++i) {
    std::unique_ptr<Channel> c = pool->Acquire("node2", "kv");
    ASSERT_NE(c, nullptr) << "cycle " << i;
    c->Close();
  }
  PoolCount now = CountOf(*pool, "node2", "kv");
  EXPECT_EQ(now.in_use, 0);
  auto reported = [&] {
    std::lock_guard lock(mu);
    return !reports.empty() && reports.back().second == now;
  };
  ASSERT_TRUE(Eventually(reported));
  std::lock_guard lock(mu);
  for (size_t i = 1; i < reports.size(); ++i) {
    EXPECT_GE(reports[i].first - reports[i - 1].first, 200ms) << "report " << i;
  }
  // Before, 400 (two per cycle).
  EXPECT_LT(reports.size(), 20u);
}

// A channel given back within the grace (50 ms) refills the pool without
// a connect; one kept out longer is replaced.
TEST(ChannelPoolTest, AChannelBackWithinTheGraceCostsNoConnect) {
  Factory f;
  auto pool = ChannelPool::Create(f.Connector(), nullptr);
  pool->SetTargets({{"node2", "kv", 1}}, 60s);
  ASSERT_TRUE(Eventually([&] { return CountOf(*pool, "node2", "kv").warm == 1; }));
  const int filled = f.calls.load();
  int quick = 0;
  for (int i = 0; i < 20; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    std::unique_ptr<Channel> c = pool->Acquire("node2", "kv");
    ASSERT_NE(c, nullptr) << "cycle " << i;
    c->Close();
    // A cycle that a loaded machine stretched past the grace may refill.
    if (std::chrono::steady_clock::now() - t0 < 30ms) ++quick;
    if (quick == i + 1) {
      EXPECT_EQ(f.calls.load(), filled) << "cycle " << i;
    }
  }
  ASSERT_GT(quick, 0) << "no cycle took less than 30 ms";
  std::this_thread::sleep_for(200ms);
  if (quick == 20) {
    EXPECT_EQ(f.calls.load(), filled);
  }
  EXPECT_EQ(CountOf(*pool, "node2", "kv").warm, f.calls.load() - filled + 1);

  std::unique_ptr<Channel> held = pool->Acquire("node2", "kv");
  ASSERT_NE(held, nullptr);
  const int before = f.calls.load();
  ASSERT_TRUE(Eventually([&] { return CountOf(*pool, "node2", "kv").warm >= 1; }));
  EXPECT_EQ(f.calls.load(), before + (before == filled ? 1 : 0));
}

TEST(ChannelPoolTest, StopClosesWarmChannelsAndOutstandingOnesCloseLater) {
  Factory f;
  auto pool = ChannelPool::Create(f.Connector(), nullptr);
  pool->SetTargets({{"node2", "kv", 2}}, 60s);
  ASSERT_TRUE(Eventually([&] { return CountOf(*pool, "node2", "kv").warm == 2; }));
  std::unique_ptr<Channel> out = pool->Acquire("node2", "kv");
  pool->Stop();
  int closed = f.Closed();
  EXPECT_GE(closed, 1);
  EXPECT_EQ(pool->Acquire("node2", "kv"), nullptr);
  pool.reset();  // the pool is gone: Close closes the channel itself
  out->Close();
  EXPECT_EQ(f.Closed(), int(f.made.size()));
}

}  // namespace
}  // namespace rdmad::internal
