// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/instance_registry.h"

#include <gtest/gtest.h>

namespace rdmad {
namespace {

std::string Instance(int n) {
  std::string id = std::to_string(n);
  return std::string(32 - id.size(), '0') + id;
}

TEST(InstanceRegistryTest, AnInstanceBelongsToTheNodeThatClaimedItFirst) {
  InstanceRegistry registry;
  ASSERT_TRUE(registry.Claim(Instance(1), "nodeB").ok());
  EXPECT_TRUE(registry.Claim(Instance(1), "NODEB").ok()) << "names compare without case";
  Status stolen = registry.Claim(Instance(1), "nodeC");
  EXPECT_EQ(stolen.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(stolen.message().find("belongs to node nodeB, not nodeC"), std::string::npos)
      << stolen.message();
  EXPECT_EQ(registry.NodeOf(Instance(1)), "nodeB");
  EXPECT_EQ(registry.NodeOf(Instance(2)), std::nullopt);
}

TEST(InstanceRegistryTest, ANodeKeepsItsRecentInstancesAndCannotPushOutAnother) {
  InstanceRegistry registry;
  ASSERT_TRUE(registry.Claim(Instance(1), "nodeB").ok());
  // nodeC restarts many times: only its own old instances are forgotten.
  for (int i = 100; i < 100 + 3 * int(InstanceRegistry::kPerNode); ++i) {
    ASSERT_TRUE(registry.Claim(Instance(i), "nodeC").ok());
  }
  EXPECT_EQ(registry.NodeOf(Instance(1)), "nodeB");
  EXPECT_EQ(registry.NodeOf(Instance(100)), std::nullopt);
  int last = 100 + 3 * int(InstanceRegistry::kPerNode) - 1;
  EXPECT_EQ(registry.NodeOf(Instance(last)), "nodeC");
  EXPECT_EQ(registry.Claim(Instance(1), "nodeC").code(), StatusCode::kPermissionDenied);
}

TEST(InstanceRegistryTest, NodesBeyondTheLimitAreRefusedNotMakingRoom) {
  InstanceRegistry registry;
  ASSERT_TRUE(registry.Claim(Instance(1), "nodeB").ok());
  for (size_t i = 1; i < InstanceRegistry::kMaxNodes; ++i) {
    ASSERT_TRUE(registry.Claim(Instance(1000 + int(i)), "n" + std::to_string(i)).ok());
  }
  EXPECT_EQ(registry.node_count(), InstanceRegistry::kMaxNodes);
  EXPECT_EQ(registry.Claim(Instance(99999), "one-too-many").code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(registry.NodeOf(Instance(1)), "nodeB");
  EXPECT_TRUE(registry.Claim(Instance(2), "nodeB").ok()) << "a known node may still claim";
}

}  // namespace
}  // namespace rdmad
