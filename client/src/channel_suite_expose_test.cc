// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The Channel conformance suite (channel_suite.h): Expose and Revoke, tried
// as a peer that holds a descriptor would, through the public API. A peer
// access that is refused ends that peer's channel (a remote access error),
// so each refusal gets a fresh pair.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "client/src/channel_suite.h"

namespace rdmad::internal {
namespace {

// Memory of one side and its registration.
struct Buffer {
  std::vector<uint8_t> bytes;
  std::unique_ptr<MemoryRegion> region;
};

::testing::AssertionResult Register(Channel& c, size_t size, uint64_t seed, MemoryAccess access,
                                    Buffer* b) {
  b->bytes = Pattern(size, seed);
  auto region = c.RegisterMemory(b->bytes.data(), b->bytes.size(), access);
  if (!region.ok()) return ::testing::AssertionFailure() << region.status().ToString();
  b->region = std::move(region).value();
  return ::testing::AssertionSuccess();
}

// What the peer `c` gets reading all of `remote` (or the failure).
StatusOr<std::vector<uint8_t>> ReadAll(Channel& c, const RegionDescriptor& remote) {
  Buffer into;
  into.bytes.assign(remote.length, 0);
  auto region = c.RegisterMemory(into.bytes.data(), into.bytes.size());
  if (!region.ok()) return region.status();
  RDMAD_RETURN_IF_ERROR(c.Read(**region, 0, remote, 0, remote.length));
  return into.bytes;
}

TEST_P(ChannelConformanceTest, ExposeShowsALocalRegionToThatChannelAloneUntilRevoked) {
  Buffer kv;
  ASSERT_TRUE(Register(*a_, 64 * 1024, 5, MemoryAccess::kLocal, &kv));
  auto exposed = a_->Expose(*kv.region, MemoryAccess::kRemoteRead);
  if (exposed.status().code() == StatusCode::kUnimplemented) {
    GTEST_SKIP() << exposed.status().ToString();
  }
  ASSERT_TRUE(exposed.ok()) << exposed.status().ToString();
  EXPECT_EQ(exposed->length, kv.bytes.size());
  // The descriptor travels as any descriptor does.
  std::vector<uint8_t> bytes = exposed->Serialize();
  ASSERT_TRUE(a_->Send(bytes.data(), bytes.size()).ok());
  auto raw = b_->Recv(kPatience);
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  auto shown = RegionDescriptor::Parse(raw->data(), raw->size());
  ASSERT_TRUE(shown.ok()) << shown.status().ToString();

  // The peer reads it.
  auto got = ReadAll(*b_, *shown);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == kv.bytes);

  // Another channel's peer cannot use the descriptor.
  auto other = GetParam().make();
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_FALSE(ReadAll(*other->second, *shown).ok());
  // Nor anyone the region's own descriptor (it is kLocal).
  auto third = GetParam().make();
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  EXPECT_FALSE(ReadAll(*third->second, kv.region->descriptor()).ok());

  // Revoked, the descriptor opens nothing; a second Revoke is NOT_FOUND.
  ASSERT_TRUE(a_->Revoke(*exposed).ok());
  EXPECT_FALSE(ReadAll(*b_, *shown).ok());
  EXPECT_EQ(a_->Revoke(*exposed).code(), StatusCode::kNotFound);
}

TEST_P(ChannelConformanceTest, AnExposureGivesNoMoreThanItsAccess) {
  Buffer kv;
  ASSERT_TRUE(Register(*a_, 8192, 6, MemoryAccess::kLocal, &kv));
  auto read_only = a_->Expose(*kv.region, MemoryAccess::kRemoteRead);
  if (read_only.status().code() == StatusCode::kUnimplemented) {
    GTEST_SKIP() << read_only.status().ToString();
  }
  ASSERT_TRUE(read_only.ok()) << read_only.status().ToString();
  Buffer mine;
  ASSERT_TRUE(Register(*b_, 4096, 7, MemoryAccess::kReadWrite, &mine));
  EXPECT_FALSE(b_->Write(*mine.region, 0, *read_only, 0, 4096).ok());
  EXPECT_TRUE(std::equal(kv.bytes.begin(), kv.bytes.end(), Pattern(8192, 6).begin()));

  // Read-write, on a fresh pair: the peer's Write lands.
  auto pair = GetParam().make();
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  Buffer target, source;
  ASSERT_TRUE(Register(*pair->first, 8192, 8, MemoryAccess::kLocal, &target));
  ASSERT_TRUE(Register(*pair->second, 4096, 9, MemoryAccess::kReadWrite, &source));
  auto writable = pair->first->Expose(*target.region, MemoryAccess::kReadWrite);
  ASSERT_TRUE(writable.ok()) << writable.status().ToString();
  ASSERT_TRUE(pair->second->Write(*source.region, 0, *writable, 4096, 4096).ok());
  EXPECT_TRUE(std::equal(source.bytes.begin(), source.bytes.end(), target.bytes.begin() + 4096));

  // What Expose refuses.
  EXPECT_EQ(pair->first->Expose(*target.region, MemoryAccess::kLocal).status().code(),
            StatusCode::kInvalidArgument);
  Buffer pulled;
  ASSERT_TRUE(Register(*pair->first, 4096, 10, MemoryAccess::kRemoteRead, &pulled));
  EXPECT_EQ(pair->first->Expose(*pulled.region, MemoryAccess::kReadWrite).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(pair->first->Expose(*pulled.region, MemoryAccess::kRemoteRead).ok());
}

// The memory of a region may be freed once the region is gone: its
// exposures go with it, whatever the channels that made them.
TEST_P(ChannelConformanceTest, AnExposureEndsWithItsRegion) {
  Buffer kv;
  ASSERT_TRUE(Register(*a_, 8192, 11, MemoryAccess::kLocal, &kv));
  auto exposed = a_->Expose(*kv.region);
  if (exposed.status().code() == StatusCode::kUnimplemented) {
    GTEST_SKIP() << exposed.status().ToString();
  }
  ASSERT_TRUE(exposed.ok()) << exposed.status().ToString();
  ASSERT_TRUE(ReadAll(*b_, *exposed).ok());
  kv.region.reset();
  EXPECT_FALSE(ReadAll(*b_, *exposed).ok());
  EXPECT_TRUE(a_->Revoke(*exposed).ok()) << "its channel may still let it go";
}

}  // namespace
}  // namespace rdmad::internal
