// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/cluster/membership_store.h"

#include <gtest/gtest.h>

namespace rdmad {
namespace {

TEST(PrefixRangeEndTest, RaisesTheLastByteThatCanBeRaised) {
  EXPECT_EQ(PrefixRangeEnd("/rdmad/v1/"), "/rdmad/v10");
  EXPECT_EQ(PrefixRangeEnd("a"), "b");
  EXPECT_EQ(PrefixRangeEnd(std::string("a\xff", 2)), "b");
  EXPECT_EQ(PrefixRangeEnd(std::string("\xff\xff", 2)), std::string(1, '\0'));
  EXPECT_EQ(PrefixRangeEnd(""), std::string(1, '\0'));
}

}  // namespace
}  // namespace rdmad
