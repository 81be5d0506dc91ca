// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/request_checks.h"

#include <gtest/gtest.h>

namespace rdmad {
namespace {

TEST(RequestChecksTest, NamesAreBoundedWithoutEchoingThem) {
  EXPECT_TRUE(CheckName("name", "rxe0", kMaxDeviceName).ok());
  EXPECT_TRUE(CheckName("name", std::string(64, 'x'), kMaxDeviceName).ok());
  Status empty = CheckName("name", "", kMaxDeviceName);
  EXPECT_EQ(empty.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(empty.message(), "name: 1..64 bytes required (got 0)");
  Status long_name = CheckName("peer", std::string(65536, 'x'), kMaxPeerName);
  EXPECT_EQ(long_name.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(long_name.message(), "peer: 1..255 bytes required (got 65536)");
}

TEST(RequestChecksTest, QuotesAreBounded) {
  EXPECT_EQ(Quote("mlx5_0"), "\"mlx5_0\"");
  std::string quoted = Quote(std::string(65536, 'y'));
  EXPECT_EQ(quoted, "\"" + std::string(64, 'y') + "...\" (65536 bytes)");
}

}  // namespace
}  // namespace rdmad
