// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Cluster membership over the in-memory store: members see each other,
// follow updates and clean stops, keep their view while the store is
// away and resynchronise after, register again when their lease is lost,
// and skip records that do not decode.

#include "daemon/cluster/cluster_membership.h"

#include <gtest/gtest.h>

#include <thread>

#include "daemon/cluster/fake_membership_store.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

MemberRecord Record(const std::string& name, std::vector<std::string> services = {}) {
  MemberRecord r;
  r.name = name;
  r.peer_address = "127.0.0.1:" + std::to_string(7000 + name.size());
  r.version = "test";
  r.protocol = 1;
  r.services = std::move(services);
  return r;
}

std::vector<std::string> Names(const std::vector<MemberRecord>& members) {
  std::vector<std::string> out;
  for (const MemberRecord& m : members) out.push_back(m.name);
  return out;
}

// Waits up to 5 s for pred.
template <typename Pred>
bool Eventually(Pred pred) {
  auto until = std::chrono::steady_clock::now() + seconds(5);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return true;
}

class ClusterMembershipTest : public ::testing::Test {
 protected:
  std::unique_ptr<ClusterMembership> Member(const std::string& name,
                                            std::vector<std::string> services = {}) {
    ClusterOptions options;
    options.ttl = seconds(3);  // renewals every second
    options.endpoints = "fake";
    options.max_backoff = milliseconds(100);
    watchers_.push_back(std::make_unique<Watcher>(this, name));
    auto m = std::make_unique<ClusterMembership>(store_, options, watchers_.back().get());
    m->Start(Record(name, std::move(services)));
    return m;
  }

  std::vector<std::string> Observed(const std::string& name) {
    std::lock_guard lock(mu_);
    return observed_[name];
  }

  // What member name sees.
  class Watcher final : public MembersObserver {
   public:
    Watcher(ClusterMembershipTest* test, std::string name) : test_(test), name_(std::move(name)) {}
    void OnMembers(const std::vector<MemberRecord>& members) override {
      std::lock_guard lock(test_->mu_);
      test_->observed_[name_] = Names(members);
    }

   private:
    ClusterMembershipTest* test_;
    std::string name_;
  };

  std::shared_ptr<FakeMembershipStore> store_ = std::make_shared<FakeMembershipStore>();
  std::mutex mu_;
  std::map<std::string, std::vector<std::string>> observed_;
  std::vector<std::unique_ptr<Watcher>> watchers_;  // outlive the tests' members
};

TEST_F(ClusterMembershipTest, MembersSeeEachOtherFollowUpdatesAndCleanStops) {
  auto a = Member("a");
  auto b = Member("b", {"kv"});
  auto c = Member("c");
  ASSERT_TRUE(Eventually([&] {
    return Names(a->Members()) == std::vector<std::string>{"b", "c"};
  }));
  ASSERT_TRUE(Eventually([&] { return Observed("c") == std::vector<std::string>{"a", "b"}; }));
  EXPECT_EQ(a->Members()[0].services, std::vector<std::string>{"kv"});
  EXPECT_TRUE(a->health().reachable);
  EXPECT_TRUE(a->health().registered);
  EXPECT_EQ(a->health().members, 2u);

  b->Update(Record("b", {"kv", "llm"}));
  ASSERT_TRUE(Eventually([&] { return a->Members()[0].services.size() == 2; }));

  b->Stop(/*withdraw=*/true);
  ASSERT_TRUE(Eventually([&] { return Names(a->Members()) == std::vector<std::string>{"c"}; }));
  ASSERT_TRUE(Eventually([&] { return Observed("c") == std::vector<std::string>{"a"}; }));
  EXPECT_EQ(store_->leases().size(), 2u);  // a's and c's
}

TEST_F(ClusterMembershipTest, TheViewOutlivesTheStoreAndResynchronises) {
  auto a = Member("a");
  auto b = Member("b");
  auto c = Member("c");
  ASSERT_TRUE(Eventually([&] { return a->Members().size() == 2; }));
  store_->SetDown(true);
  ASSERT_TRUE(Eventually([&] { return !a->health().reachable; }));
  EXPECT_NE(a->health().last_error.find("fake etcd"), std::string::npos);
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_EQ(Names(a->Members()), (std::vector<std::string>{"b", "c"}));  // the last known view

  // While it was away, c's lease ran out and c stopped for good.
  c->Stop(false);
  store_->SetDown(false);
  for (int64_t lease : store_->leases()) {
    auto listed = store_->List("/rdmad/v1/members/c");
    if (!listed->entries.empty() && listed->entries[0].lease == lease) store_->Expire(lease);
  }
  ASSERT_TRUE(Eventually([&] { return a->health().reachable; }));
  ASSERT_TRUE(Eventually([&] { return Names(a->Members()) == std::vector<std::string>{"b"}; }));
}

// A stop while etcd is known to be away does not wait for it: the record
// goes with its lease's TTL.
TEST_F(ClusterMembershipTest, AStopWhileTheStoreIsAwayLeavesTheLeaseToExpire) {
  auto a = Member("a");
  ASSERT_TRUE(Eventually([&] { return a->health().registered; }));
  store_->SetDown(true);
  ASSERT_TRUE(Eventually([&] { return !a->health().reachable; }));
  a->Stop(/*withdraw=*/true);
  EXPECT_EQ(store_->revokes(), 0);
  EXPECT_EQ(store_->leases().size(), 1u);

  auto b = Member("b");  // and with etcd there, a stop revokes
  store_->SetDown(false);
  ASSERT_TRUE(Eventually([&] { return b->health().registered && b->health().reachable; }));
  b->Stop(/*withdraw=*/true);
  EXPECT_EQ(store_->revokes(), 1);
  EXPECT_EQ(store_->leases().size(), 1u);  // a's, until it expires
}

TEST_F(ClusterMembershipTest, ALostLeaseIsReplacedAndTheRecordPutAgain) {
  auto a = Member("a");
  auto b = Member("b");
  ASSERT_TRUE(Eventually([&] { return a->Members().size() == 1; }));
  auto b_lease = store_->List("/rdmad/v1/members/b")->entries.at(0).lease;
  store_->Expire(b_lease);  // etcd lost it: the record goes, b comes back on renewal
  ASSERT_TRUE(Eventually([&] {
    auto entries = store_->List("/rdmad/v1/members/b")->entries;
    return !entries.empty() && entries[0].lease != b_lease;
  }));
  ASSERT_TRUE(Eventually([&] { return a->Members().size() == 1; }));
  EXPECT_GE(store_->keepalives(), 1);
}

TEST_F(ClusterMembershipTest, RecordsThatDoNotDecodeAreSkipped) {
  store_->Set("/rdmad/v1/members/junk", "{not json");
  store_->Set("/rdmad/v1/members/liar", EncodeMemberRecord(Record("someone-else")));
  auto a = Member("a");
  auto b = Member("b");
  ASSERT_TRUE(Eventually([&] { return Names(a->Members()) == std::vector<std::string>{"b"}; }));
  store_->Set("/rdmad/v1/members/late", "[]");
  store_->Set("/rdmad/v1/members/d", EncodeMemberRecord(Record("d")));
  ASSERT_TRUE(Eventually([&] { return a->Members().size() == 2; }));
  EXPECT_EQ(Names(a->Members()), (std::vector<std::string>{"b", "d"}));
}

}  // namespace
}  // namespace rdmad
