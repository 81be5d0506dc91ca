// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "rdmad/channel.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rdmad {
namespace {

TEST(ChannelTransportNameTest, NamesBoth) {
  EXPECT_STREQ(ChannelTransportName(ChannelTransport::kRdma), "RDMA");
  EXPECT_STREQ(ChannelTransportName(ChannelTransport::kTcp), "TCP");
}

TEST(RegionDescriptorTest, RoundTrips) {
  RegionDescriptor d;
  d.address = 0x00007f1234567890ull;
  d.length = 16ull << 30;
  d.rkey = 0xdeadbeef;
  std::vector<uint8_t> bytes = d.Serialize();
  ASSERT_EQ(bytes.size(), 24u);
  auto parsed = RegionDescriptor::Parse(bytes.data(), bytes.size());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->address, d.address);
  EXPECT_EQ(parsed->length, d.length);
  EXPECT_EQ(parsed->rkey, d.rkey);
  EXPECT_EQ(parsed->reserved, 0u);
}

TEST(RegionDescriptorTest, RailKeysRoundTrip) {
  RegionDescriptor d{0x2000, 1 << 20, 9, 0, {{0x1234, 0xabcd}, {0x5678, 0x42}}};
  std::vector<uint8_t> bytes = d.Serialize();
  ASSERT_EQ(bytes.size(), 40u);
  EXPECT_EQ(bytes[24], 0x34);  // the first key's tag, little endian
  EXPECT_EQ(bytes[28], 0xcd);
  auto parsed = RegionDescriptor::Parse(bytes.data(), bytes.size());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->rail_keys, d.rail_keys);
  EXPECT_EQ(parsed->rkey, 9u);
}

TEST(RegionDescriptorTest, IsLittleEndian) {
  RegionDescriptor d;
  d.address = 0x0807060504030201ull;
  d.length = 0x100;
  d.rkey = 0x44332211;
  std::vector<uint8_t> bytes = d.Serialize();
  const std::vector<uint8_t> want = {1, 2, 3, 4, 5,    6,    7,    8,    0, 1, 0, 0,
                                     0, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0};
  EXPECT_EQ(bytes, want);
}

TEST(RegionDescriptorTest, RejectsMalformedInput) {
  std::vector<uint8_t> good = RegionDescriptor{0x1000, 4096, 7, 0, {}}.Serialize();
  for (size_t size : {size_t{0}, size_t{1}, size_t{23}, size_t{25}, size_t{36}, size_t{88}}) {
    std::vector<uint8_t> bytes(size, 0);
    auto parsed = RegionDescriptor::Parse(bytes.data(), bytes.size());
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << size << " bytes";
    EXPECT_NE(parsed.status().message().find("expected 24 bytes and 8 per rail key"),
              std::string::npos)
        << parsed.status().message();
  }
  // A rail key for tag 0, or two for one device, are no descriptor.
  std::vector<uint8_t> tag0 = good;
  tag0.resize(32, 0);
  EXPECT_EQ(RegionDescriptor::Parse(tag0.data(), tag0.size()).status().code(),
            StatusCode::kInvalidArgument);
  RegionDescriptor twice{0x1000, 4096, 7, 0, {{5, 1}, {5, 2}}};
  std::vector<uint8_t> twice_bytes = twice.Serialize();
  EXPECT_EQ(RegionDescriptor::Parse(twice_bytes.data(), twice_bytes.size()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(RegionDescriptor::Parse(nullptr, 24).status().code(), StatusCode::kInvalidArgument);

  std::vector<uint8_t> reserved = good;
  reserved[22] = 1;
  EXPECT_EQ(RegionDescriptor::Parse(reserved.data(), reserved.size()).status().code(),
            StatusCode::kInvalidArgument);

  std::vector<uint8_t> wraps = RegionDescriptor{~0ull - 10, 100, 7, 0, {}}.Serialize();
  auto parsed = RegionDescriptor::Parse(wraps.data(), wraps.size());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find("overflows"), std::string::npos);
}

}  // namespace
}  // namespace rdmad
