// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/format_pools.h"

#include "gtest/gtest.h"

namespace rdmactl {
namespace {

std::vector<rdmad::PoolSummary> TwoRows() {
  return {{3, 4242, "node2", "kv", 4, "config", 3, 1, ""},
          {3, 4242, "192.0.2.9", "echo", 0, "", 1, 0, "UNAVAILABLE: peer 192.0.2.9 is down"}};
}

TEST(FormatPoolsTest, OneRowPerTargetWithDashesForNothing) {
  std::string text = FormatPools(TwoRows());
  EXPECT_NE(text.find("CLIENT"), std::string::npos);
  EXPECT_NE(text.find("LAST ERROR"), std::string::npos);
  EXPECT_NE(text.find("node2"), std::string::npos);
  EXPECT_NE(text.find("config"), std::string::npos);
  EXPECT_NE(text.find("UNAVAILABLE: peer 192.0.2.9 is down"), std::string::npos);
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  EXPECT_EQ(lines, 3u);
  EXPECT_EQ(FormatPools({}), std::string(kNoPoolsLine) + "\n");
}

TEST(FormatPoolsTest, JsonKeysAreTheMemberNames) {
  Json j = PoolsJson(TwoRows());
  ASSERT_EQ(j["pools"].size(), 2u);
  const Json& row = j["pools"][0];
  EXPECT_EQ(row["client_id"], 3);
  EXPECT_EQ(row["pid"], 4242);
  EXPECT_EQ(row["peer"], "node2");
  EXPECT_EQ(row["target"], 4);
  EXPECT_EQ(row["source"], "config");
  EXPECT_EQ(row["warm"], 3);
  EXPECT_EQ(row["in_use"], 1);
  EXPECT_EQ(j["pools"][1]["last_error"], "UNAVAILABLE: peer 192.0.2.9 is down");
}

}  // namespace
}  // namespace rdmactl
