// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The etcd client of cluster membership (daemon/rpc/etcd_store.cc) against
// a real etcd on loopback: keys under a prefix, leases that keep keys alive
// and take them along when they expire or are revoked, watches from a
// revision, an unreachable etcd, failing over to the next endpoint, and
// a watch that ends when etcd goes away.

#include "daemon/rpc/etcd_store.h"

#include <gtest/gtest.h>

#include <thread>

#include "tests/integration/etcd_process.h"
#include "tests/integration/etcd_store_fixture.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::EtcdProcess;

// Built by assignment: GCC 12 warns on designated initializers that skip
// members.
StoreOptions Options(std::vector<std::string> endpoints,
                     milliseconds call_timeout = milliseconds(3000)) {
  StoreOptions options;
  options.endpoints = std::move(endpoints);
  options.call_timeout = call_timeout;
  return options;
}

class EtcdStoreTest : public testing::EtcdStoreFixture {
 protected:
  // The keys under prefix, in order.
  std::vector<std::string> Keys(const std::string& prefix) {
    auto listed = store_->List(prefix);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    std::vector<std::string> keys;
    if (listed.ok()) {
      for (const StoreEntry& e : listed->entries) keys.push_back(e.key);
    }
    return keys;
  }

  // Events from watch until n arrived or 10 s passed.
  std::vector<StoreEvent> Collect(StoreWatch& watch, size_t n) {
    std::vector<StoreEvent> out;
    auto until = std::chrono::steady_clock::now() + seconds(10);
    while (out.size() < n && std::chrono::steady_clock::now() < until) {
      auto events = watch.Next(milliseconds(200));
      if (events.status().code() == StatusCode::kDeadlineExceeded) continue;
      EXPECT_TRUE(events.ok()) << events.status().ToString();
      if (!events.ok()) break;
      out.insert(out.end(), events->begin(), events->end());
    }
    return out;
  }
};

TEST_F(EtcdStoreTest, KeysUnderAPrefixAreListedWithTheRevision) {
  auto first = store_->Put("/t/members/a", "A", 0);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(store_->Put("/t/members/b", "B", 0).ok());
  ASSERT_TRUE(store_->Put("/t/membersX", "outside", 0).ok());
  ASSERT_TRUE(store_->Put("/u/members/c", "other prefix", 0).ok());
  auto listed = store_->List("/t/members/");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->entries.size(), 2u);
  EXPECT_EQ(listed->entries[0].key, "/t/members/a");
  EXPECT_EQ(listed->entries[0].value, "A");
  EXPECT_EQ(listed->entries[0].mod_revision, *first);
  EXPECT_EQ(listed->entries[1].value, "B");
  EXPECT_GE(listed->revision, *first + 3);
  ASSERT_TRUE(store_->Delete("/t/members/a").ok());
  EXPECT_EQ(Keys("/t/members/"), std::vector<std::string>{"/t/members/b"});
}

TEST_F(EtcdStoreTest, ALeaseKeepsItsKeysUntilRevokedOrExpired) {
  auto lease = store_->GrantLease(seconds(2));
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  ASSERT_TRUE(store_->Put("/t/leased", "x", *lease).ok());
  EXPECT_EQ(Keys("/t/leased")[0], "/t/leased");
  EXPECT_EQ(store_->List("/t/leased")->entries[0].lease, *lease);
  for (int i = 0; i < 6; ++i) {  // 3 s of renewals: longer than the TTL
    auto ttl = store_->KeepAlive(*lease);
    ASSERT_TRUE(ttl.ok()) << ttl.status().ToString();
    EXPECT_GE(ttl->count(), 1);
    std::this_thread::sleep_for(milliseconds(500));
  }
  EXPECT_EQ(Keys("/t/leased").size(), 1u);
  ASSERT_TRUE(store_->RevokeLease(*lease).ok());
  EXPECT_TRUE(Keys("/t/leased").empty());
  EXPECT_EQ(store_->KeepAlive(*lease).status().code(), StatusCode::kNotFound);

  auto expiring = store_->GrantLease(seconds(2));
  ASSERT_TRUE(expiring.ok());
  ASSERT_TRUE(store_->Put("/t/expiring", "x", *expiring).ok());
  auto until = std::chrono::steady_clock::now() + seconds(6);
  while (!Keys("/t/expiring").empty() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(200));
  }
  EXPECT_TRUE(Keys("/t/expiring").empty()) << "the key outlived its lease";
  EXPECT_EQ(store_->KeepAlive(*expiring).status().code(), StatusCode::kNotFound);
}

TEST_F(EtcdStoreTest, AWatchSeesChangesFromItsRevisionOn) {
  auto before = store_->Put("/t/w/a", "1", 0);
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(store_->Put("/t/w/b", "2", 0).ok());
  // From the first put's revision: both puts are replayed, then what follows.
  auto watch = store_->Watch("/t/w/", *before);
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  ASSERT_TRUE(store_->Delete("/t/w/a").ok());
  ASSERT_TRUE(store_->Put("/t/other", "not watched", 0).ok());
  ASSERT_TRUE(store_->Put("/t/w/c", "3", 0).ok());
  std::vector<StoreEvent> events = Collect(**watch, 4);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].key, "/t/w/a");
  EXPECT_EQ(events[0].revision, *before);
  EXPECT_EQ(events[1].value, "2");
  EXPECT_EQ(events[2].kind, StoreEvent::Kind::kDelete);
  EXPECT_EQ(events[2].key, "/t/w/a");
  EXPECT_EQ(events[3].key, "/t/w/c");
  EXPECT_LT(events[2].revision, events[3].revision);
  (*watch)->Cancel();
  EXPECT_EQ((*watch)->Next(seconds(5)).status().code(), StatusCode::kCancelled);
}

TEST_F(EtcdStoreTest, AnUnreachableEtcdIsUnavailableAndTheNextEndpointAnswers) {
  int dead = testing::FreeLoopbackPort();
  auto unreachable =
      NewEtcdStore(Options({"127.0.0.1:" + std::to_string(dead)}, milliseconds(500)));
  ASSERT_TRUE(unreachable.ok());
  auto started = std::chrono::steady_clock::now();
  Status put = (*unreachable)->Put("/t/x", "x", 0).status();
  EXPECT_TRUE(put.code() == StatusCode::kUnavailable || put.code() == StatusCode::kDeadlineExceeded)
      << put.ToString();
  EXPECT_NE(put.message().find("127.0.0.1:" + std::to_string(dead)), std::string::npos)
      << put.message();
  EXPECT_LT(std::chrono::steady_clock::now() - started, seconds(3));
  EXPECT_FALSE((*unreachable)->Watch("/t/", 0).ok());

  auto failover = NewEtcdStore(
      Options({"127.0.0.1:" + std::to_string(dead), etcd_.endpoint()}, milliseconds(1000)));
  ASSERT_TRUE(failover.ok());
  EXPECT_TRUE((*failover)->Put("/t/y", "y", 0).ok());
  EXPECT_TRUE((*failover)->Watch("/t/", 0).ok());
}

TEST_F(EtcdStoreTest, AWatchEndsWhenEtcdGoesAway) {
  auto watch = store_->Watch("/t/", 0);
  ASSERT_TRUE(watch.ok()) << watch.status().ToString();
  etcd_.Kill();
  auto until = std::chrono::steady_clock::now() + seconds(20);
  StatusOr<std::vector<StoreEvent>> next = Status::Internal("not read");
  do {
    next = (*watch)->Next(milliseconds(200));
  } while (next.status().code() == StatusCode::kDeadlineExceeded &&
           std::chrono::steady_clock::now() < until);
  EXPECT_EQ(next.status().code(), StatusCode::kUnavailable) << next.status().ToString();
}

TEST(EtcdOptionsTest, BadEndpointsAndTlsFilesAreRefused) {
  EXPECT_EQ(NewEtcdStore({}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(NewEtcdStore(Options({"host:port"})).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(NewEtcdStore(Options({"etcd1", "[::1]:2379", "::1"})).ok());
  StoreOptions with_ca = Options({"etcd1"});
  with_ca.tls_ca = "/nonexistent/ca.pem";
  auto tls = NewEtcdStore(with_ca);
  EXPECT_EQ(tls.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(tls.status().message().find("cluster.tls_ca"), std::string::npos);
}

}  // namespace
}  // namespace rdmad
