// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/pool/pool_registry.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace rdmad {
namespace {

const Caller kApp = Caller::User(1000, 1);

class RecordingSink : public PoolSink {
 public:
  void OnTargets(const PoolTargets& targets) override { seen.push_back(targets); }
  std::vector<PoolTargets> seen;
};

std::vector<PoolTarget> OneConfigTarget() { return {PoolTarget{"node2", "kv", 4}}; }

TEST(PoolRegistryTest, ASubscriberIsToldTheConfigTargetsAtOnce) {
  PoolRegistry registry;
  registry.SetConfig(OneConfigTarget(), 300);
  auto sink = std::make_shared<RecordingSink>();
  uint64_t id = registry.Subscribe(sink, Owner{1000, 42});
  ASSERT_EQ(sink->seen.size(), 1u);
  EXPECT_EQ(sink->seen[0].client_id, id);
  EXPECT_EQ(sink->seen[0].idle_timeout_s, 300);
  ASSERT_EQ(sink->seen[0].targets.size(), 1u);
  EXPECT_EQ(sink->seen[0].targets[0], (PoolTargetSpec{"node2", "kv", 4, PoolSource::kConfig}));
}

TEST(PoolRegistryTest, PrewarmOverridesTheConfigForThatClientOnly) {
  PoolRegistry registry;
  registry.SetConfig(OneConfigTarget(), 300);
  auto a = std::make_shared<RecordingSink>();
  auto b = std::make_shared<RecordingSink>();
  uint64_t ida = registry.Subscribe(a, Owner{1000, 1});
  registry.Subscribe(b, Owner{1000, 2});
  ASSERT_TRUE(registry.Prewarm(kApp, ida, "node2", "kv", 8).ok());
  ASSERT_TRUE(registry.Prewarm(kApp, ida, "192.0.2.3", "echo", 2).ok());
  ASSERT_EQ(a->seen.size(), 3u);
  ASSERT_EQ(a->seen.back().targets.size(), 2u);
  EXPECT_EQ(a->seen.back().targets[0], (PoolTargetSpec{"192.0.2.3", "echo", 2, PoolSource::kApi}));
  EXPECT_EQ(a->seen.back().targets[1], (PoolTargetSpec{"node2", "kv", 8, PoolSource::kApi}));
  EXPECT_EQ(b->seen.size(), 1u);  // b was not told anything new
  // 0 removes the target, also one the config gave.
  ASSERT_TRUE(registry.Prewarm(kApp, ida, "node2", "kv", 0).ok());
  ASSERT_EQ(a->seen.back().targets.size(), 1u);
  EXPECT_EQ(a->seen.back().targets[0].peer, "192.0.2.3");
}

TEST(PoolRegistryTest, AReloadTellsEveryClient) {
  PoolRegistry registry;
  registry.SetConfig(OneConfigTarget(), 300);
  auto a = std::make_shared<RecordingSink>();
  registry.Subscribe(a, Owner{1000, 1});
  registry.SetConfig(OneConfigTarget(), 300);  // unchanged: nobody told
  EXPECT_EQ(a->seen.size(), 1u);
  registry.SetConfig({}, 60);
  ASSERT_EQ(a->seen.size(), 2u);
  EXPECT_TRUE(a->seen.back().targets.empty());
  EXPECT_EQ(a->seen.back().idle_timeout_s, 60);
}

TEST(PoolRegistryTest, BadPrewarmsAreRefusedWithTheReason) {
  PoolRegistry registry;
  auto a = std::make_shared<RecordingSink>();
  uint64_t id = registry.Subscribe(a, Owner{1000, 1});
  EXPECT_EQ(registry.Prewarm(kApp, id + 1, "node2", "kv", 1).code(), StatusCode::kNotFound);
  EXPECT_EQ(registry.Prewarm(kApp, id, "", "kv", 1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Prewarm(kApp, id, "no de", "kv", 1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(registry.Prewarm(kApp, id, "node2", "k v", 1).code(), StatusCode::kInvalidArgument);
  Status too_many =
      registry.Prewarm(kApp, id, "node2", "kv", PoolRegistry::kMaxChannelsPerTarget + 1);
  EXPECT_EQ(too_many.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(too_many.message().find("channels"), std::string::npos);
  EXPECT_EQ(registry.Prewarm(kApp, id, "node2", "kv", -1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(a->seen.size(), 1u);
}

TEST(PoolRegistryTest, AUidsClientsPrewarmWithinOneQuotaBetweenThem) {
  PoolRegistry registry;
  auto sink = std::make_shared<RecordingSink>();
  uint64_t a = registry.Subscribe(sink, Owner{1000, 1});
  uint64_t b = registry.Subscribe(sink, Owner{1000, 2});
  uint64_t other = registry.Subscribe(sink, Owner{1001, 3});
  const Caller other_uid = Caller::User(1001, 3);
  // Targets: half from each client of uid 1000, then one more is refused.
  for (size_t i = 0; i < PoolRegistry::kMaxTargetsPerUid; ++i) {
    uint64_t id = i % 2 == 0 ? a : b;
    ASSERT_TRUE(registry.Prewarm(kApp, id, "node" + std::to_string(i), "kv", 1).ok()) << i;
  }
  Status more = registry.Prewarm(kApp, b, "node-x", "kv", 1);
  EXPECT_EQ(more.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(more.message().find("uid 1000 would prewarm"), std::string::npos) << more.ToString();
  // Changing one it has is not a new target; another uid has its own quota.
  EXPECT_TRUE(registry.Prewarm(kApp, a, "node0", "kv", 2).ok());
  EXPECT_TRUE(registry.Prewarm(other_uid, other, "node-x", "kv", 1).ok());
  // Channels: bounded in all, whatever the split.
  PoolRegistry fresh;
  uint64_t c = fresh.Subscribe(sink, Owner{1000, 1});
  int per = PoolRegistry::kMaxChannelsPerTarget;
  int full = PoolRegistry::kMaxChannelsPerUid / per;
  for (int i = 0; i < full; ++i) {
    ASSERT_TRUE(fresh.Prewarm(kApp, c, "n" + std::to_string(i), "kv", per).ok()) << i;
  }
  EXPECT_EQ(fresh.Prewarm(kApp, c, "n-last", "kv", 1).code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(fresh.Prewarm(kApp, c, "n0", "kv", 0).ok()) << "lowering is always allowed";
  EXPECT_TRUE(fresh.Prewarm(kApp, c, "n-last", "kv", 1).ok());
}

TEST(PoolRegistryTest, ReportsShowInTheListAndGoWithTheClient) {
  PoolRegistry registry;
  registry.SetConfig(OneConfigTarget(), 300);
  auto a = std::make_shared<RecordingSink>();
  uint64_t id = registry.Subscribe(a, Owner{1000, 77});
  ASSERT_TRUE(registry.Report(kApp, id, "node2", "kv", 3, 1, "").ok());
  ASSERT_TRUE(registry.Report(kApp, id, "node9", "old", 1, 0, "UNAVAILABLE: x").ok());
  EXPECT_EQ(registry.Report(kApp, id + 5, "node2", "kv", 1, 0, "").code(), StatusCode::kNotFound);
  EXPECT_EQ(registry.Report(kApp, id, "node2", "kv", -1, 0, "").code(),
            StatusCode::kInvalidArgument);
  std::vector<PoolRow> rows = registry.List();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].peer, "node2");
  EXPECT_EQ(rows[0].pid, 77);
  EXPECT_EQ(rows[0].target, 4);
  EXPECT_EQ(rows[0].source, PoolSource::kConfig);
  EXPECT_STREQ(PoolSourceName(PoolSource::kConfig), "config");
  EXPECT_STREQ(PoolSourceName(PoolSource::kApi), "api");
  EXPECT_EQ(rows[0].warm, 3);
  EXPECT_EQ(rows[0].in_use, 1);
  EXPECT_EQ(rows[1].peer, "node9");
  EXPECT_EQ(rows[1].target, 0);
  EXPECT_EQ(rows[1].last_error, "UNAVAILABLE: x");
  registry.Unsubscribe(id);
  EXPECT_TRUE(registry.List().empty());
  EXPECT_EQ(registry.clients(), 0u);
}

TEST(PoolRegistryTest, AClientBelongsToItsUid) {
  PoolRegistry registry;
  auto sink = std::make_shared<RecordingSink>();
  uint64_t id = registry.Subscribe(sink, Owner{1000, 1});
  const Caller other = Caller::User(2000, 2);
  const Caller admin{.pid = 3, .uid = 3000, .admin = true, .name = "pid 3"};
  for (const Caller& intruder : {other, admin}) {
    EXPECT_EQ(registry.Prewarm(intruder, id, "node2", "kv", 1024).code(), StatusCode::kNotFound);
    EXPECT_EQ(registry.Report(intruder, id, "node2", "kv", 1, 0, "").code(), StatusCode::kNotFound);
  }
  EXPECT_EQ(sink->seen.size(), 1u) << "no targets pushed for an intruder";
  ASSERT_TRUE(registry.Prewarm(kApp, id, "node2", "kv", 2).ok());
  EXPECT_TRUE(registry.ListFor(other).empty());
  ASSERT_EQ(registry.ListFor(kApp).size(), 1u);
  EXPECT_EQ(registry.ListFor(kApp)[0].uid, 1000u);
  EXPECT_EQ(registry.ListFor(admin).size(), 1u);
}

}  // namespace
}  // namespace rdmad
