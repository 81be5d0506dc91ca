// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/secure_random.h"

#include <gtest/gtest.h>

#include <array>
#include <set>

namespace rdmad {
namespace {

TEST(SecureRandomTest, IdsNeverRepeatAndUseAllBits) {
  std::set<uint64_t> seen;
  uint64_t ored = 0;
  uint64_t anded = ~uint64_t{0};
  for (int i = 0; i < 4096; ++i) {
    uint64_t id = SecureRandomU64();
    EXPECT_TRUE(seen.insert(id).second) << "repeated after " << i << " draws";
    ored |= id;
    anded &= id;
  }
  EXPECT_EQ(ored, ~uint64_t{0}) << "a bit that is never 1";
  EXPECT_EQ(anded, uint64_t{0}) << "a bit that is always 1";
}

TEST(SecureRandomTest, FillsTheWholeBuffer) {
  // A buffer larger than one getrandom call would need to be: each byte is
  // non-zero in at least one of a few draws.
  std::array<unsigned char, 4096> any{};
  for (int draw = 0; draw < 8; ++draw) {
    std::array<unsigned char, 4096> buf{};
    SecureRandomBytes(buf.data(), buf.size());
    for (size_t i = 0; i < buf.size(); ++i) any[i] |= buf[i];
  }
  for (size_t i = 0; i < any.size(); ++i) ASSERT_NE(any[i], 0) << "byte " << i << " never filled";
}

TEST(SecureRandomTest, HexIsTwoLowercaseDigitsPerByte) {
  std::string a = SecureRandomHex(16);
  std::string b = SecureRandomHex(16);
  ASSERT_EQ(a.size(), 32u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
  EXPECT_NE(a, b);
  EXPECT_EQ(SecureRandomHex(0), "");
}

}  // namespace
}  // namespace rdmad
