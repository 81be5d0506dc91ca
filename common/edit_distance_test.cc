// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/edit_distance.h"

#include "gtest/gtest.h"

namespace rdmad {
namespace {

TEST(EditDistanceTest, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("status", "status"), 0u);
  EXPECT_EQ(EditDistance("statuss", "status"), 1u);  // an insertion
  EXPECT_EQ(EditDistance("stats", "status"), 1u);    // a deletion
  EXPECT_EQ(EditDistance("statis", "status"), 1u);   // a substitution
  EXPECT_EQ(EditDistance("pnig", "ping"), 2u);       // a swap is two
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
}

TEST(EditDistanceTest, IgnoresCase) { EXPECT_EQ(EditDistance("Log_Level", "log_level"), 0u); }

}  // namespace
}  // namespace rdmad
