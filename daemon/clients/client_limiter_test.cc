// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/clients/client_limiter.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace rdmad {
namespace {

ClientLimiter MakeLimiter() {
  return ClientLimiter({"Connect handshakes in flight", "limits.max_connects_per_client",
                        "limits.max_connects", ""});
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ClientLimiterTest, RefusesOneClientBeyondItsLimitAndNamesIt) {
  ClientLimiter limiter = MakeLimiter();
  std::vector<ClientLimiter::Lease> leases;
  for (int i = 0; i < 3; ++i) {
    auto lease = limiter.Acquire("pid 10", 3, 0);
    ASSERT_TRUE(lease.ok()) << lease.status().ToString();
    leases.push_back(std::move(lease).value());
  }
  auto refused = limiter.Acquire("pid 10", 3, 0);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.status().message(),
            "client pid 10 has 3 Connect handshakes in flight, its limit "
            "(limits.max_connects_per_client = 3)");
  EXPECT_TRUE(limiter.Acquire("pid 11", 3, 0).ok()) << "another client is not limited";
  EXPECT_EQ(limiter.held("pid 10"), 3u);
  EXPECT_EQ(limiter.refused(), 1u);
}

TEST(ClientLimiterTest, ALeaseGivesItsUnitBack) {
  ClientLimiter limiter = MakeLimiter();
  {
    auto lease = limiter.Acquire("pid 10", 1, 0);
    ASSERT_TRUE(lease.ok());
    EXPECT_FALSE(limiter.Acquire("pid 10", 1, 0).ok());
    ClientLimiter::Lease moved = std::move(lease).value();  // still one unit
    EXPECT_EQ(limiter.held("pid 10"), 1u);
    EXPECT_EQ(limiter.total(), 1u);
  }
  EXPECT_EQ(limiter.held("pid 10"), 0u);
  EXPECT_EQ(limiter.total(), 0u);
  auto again = limiter.Acquire("pid 10", 1, 0);
  ASSERT_TRUE(again.ok());
  again.value().Reset();
  EXPECT_FALSE(again.value().held());
  EXPECT_EQ(limiter.total(), 0u);
}

TEST(ClientLimiterTest, RefusesEveryClientBeyondTheTotal) {
  ClientLimiter limiter = MakeLimiter();
  auto a = limiter.Acquire("pid 1", 5, 2);
  auto b = limiter.Acquire("pid 2", 5, 2);
  ASSERT_TRUE(a.ok() && b.ok());
  auto c = limiter.Acquire("pid 3", 5, 2);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(c.status().message(),
            "rdmad has 2 Connect handshakes in flight from all clients, its limit "
            "(limits.max_connects = 2)");
  a.value().Reset();
  EXPECT_TRUE(limiter.Acquire("pid 3", 5, 2).ok());
}

TEST(ClientLimiterTest, ZeroMeansNoBoundAndNewBoundsApplyToTheNextCall) {
  ClientLimiter limiter = MakeLimiter();
  std::vector<ClientLimiter::Lease> leases;
  for (int i = 0; i < 100; ++i) leases.push_back(std::move(limiter.Acquire("p", 0, 0)).value());
  EXPECT_EQ(limiter.held("p"), 100u);
  // A lower bound (a reload) keeps what is held and refuses more.
  auto refused = limiter.Acquire("p", 10, 0);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(Contains(refused.status().message(), "has 100 ")) << refused.status().message();
}

TEST(ClientLimiterTest, ConcurrentClientsNeverPassTheBound) {
  ClientLimiter limiter = MakeLimiter();
  std::atomic<int> inside{0}, most{0}, refusals{0};
  std::vector<std::jthread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        auto lease = limiter.Acquire("pid 7", 4, 0);
        if (!lease.ok()) {
          ++refusals;
          continue;
        }
        int now = ++inside;
        for (int m = most; now > m && !most.compare_exchange_weak(m, now);) {
        }
        --inside;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LE(most.load(), 4);
  EXPECT_EQ(limiter.total(), 0u);
  EXPECT_EQ(limiter.refused(), uint64_t(refusals.load()));
}

TEST(ClientLimiterTest, AUidIsLimitedAcrossItsProcesses) {
  ClientLimiter limiter(
      {"streams open", "limits.max_streams_per_client", "", "limits.max_streams_per_uid"});
  std::vector<ClientLimiter::Lease> leases;
  for (const char* client : {"pid 1", "pid 2", "pid 3"}) {
    auto lease = limiter.Acquire(client, "uid 1000", 2, 3, 0);
    ASSERT_TRUE(lease.ok()) << lease.status().ToString();
    leases.push_back(std::move(lease).value());
  }
  auto refused = limiter.Acquire("pid 4", "uid 1000", 2, 3, 0);
  ASSERT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.status().message(),
            "uid 1000 has 3 streams open, its limit (limits.max_streams_per_uid = 3)");
  EXPECT_TRUE(limiter.Acquire("pid 5", "uid 1001", 2, 3, 0).ok()) << "another uid is not";
  leases.pop_back();  // one of uid 1000's comes back
  EXPECT_TRUE(limiter.Acquire("pid 4", "uid 1000", 2, 3, 0).ok());
}

TEST(ClientLimiterTest, EachRefusalIsCountedUnderItsLimitsKey) {
  QuotaRefusals refusals;
  ClientLimiter limiter({"streams open", "limits.max_streams_per_client", "limits.max_streams",
                         "limits.max_streams_per_uid"},
                        &refusals);
  auto held = limiter.Acquire("pid 10", "uid 1000", 1, 2, 3);
  ASSERT_TRUE(held.ok());
  EXPECT_FALSE(limiter.Acquire("pid 10", "uid 1000", 1, 2, 3).ok());  // the client's
  auto other = limiter.Acquire("pid 11", "uid 1000", 1, 2, 3);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(limiter.Acquire("pid 12", "uid 1000", 1, 2, 3).ok());  // the uid's
  auto third = limiter.Acquire("pid 13", "uid 2000", 1, 2, 3);
  ASSERT_TRUE(third.ok());
  EXPECT_FALSE(limiter.Acquire("pid 14", "uid 3000", 1, 2, 3).ok());  // the total
  auto counts = refusals.Snapshot();
  EXPECT_EQ(counts["limits.max_streams_per_client"], 1u);
  EXPECT_EQ(counts["limits.max_streams_per_uid"], 1u);
  EXPECT_EQ(counts["limits.max_streams"], 1u);
}

}  // namespace
}  // namespace rdmad
