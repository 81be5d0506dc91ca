// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Conformance: Channel::RecvInto (messages received into a registered
// region), on every transport the suite is instantiated for.

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "client/src/channel_suite.h"

namespace rdmad::internal {
namespace {

using namespace std::chrono_literals;

constexpr uint8_t kGuard = 0xEE;

TEST_P(ChannelConformanceTest, RecvIntoLandsEveryMessageInPlaceAndTouchesNothingElse) {
  // Eager sizes, the rendezvous' pieces and more than a channel's chunks.
  const std::vector<size_t> sizes = {0, 1, 100, 8193, 64 * 1024 + 1, 1 << 20, 5 << 20};
  constexpr size_t kOffset = 100;
  std::vector<uint8_t> buf((6 << 20) + 2 * kOffset, kGuard);
  auto region = b_->RegisterMemory(buf.data(), buf.size());
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  std::vector<Status> sent(sizes.size());
  InBackground([&] {
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::vector<uint8_t> message = Pattern(sizes[i], 40 + i);
      sent[i] = a_->Send(message.data(), message.size());
    }
  });
  for (size_t i = 0; i < sizes.size(); ++i) {
    SCOPED_TRACE(std::to_string(sizes[i]) + " bytes");
    std::fill(buf.begin(), buf.end(), kGuard);
    size_t max_len = buf.size() - 2 * kOffset;
    StatusOr<size_t> got = b_->RecvInto(**region, kOffset, max_len, kPatience);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(*got, sizes[i]);
    std::vector<uint8_t> want = Pattern(sizes[i], 40 + i);
    EXPECT_TRUE(std::equal(want.begin(), want.end(), buf.begin() + kOffset));
    EXPECT_TRUE(
        std::all_of(buf.begin(), buf.begin() + kOffset, [](uint8_t b) { return b == kGuard; }));
    EXPECT_TRUE(std::all_of(buf.begin() + kOffset + sizes[i], buf.end(),
                            [](uint8_t b) { return b == kGuard; }));
  }
  JoinBackground();
  for (const Status& s : sent) EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_P(ChannelConformanceTest, RecvIntoAndRecvShareOneOrderedStream) {
  constexpr int kMessages = 40;
  std::vector<uint8_t> buf(1 << 20);
  auto region = b_->RegisterMemory(buf.data(), buf.size());
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  auto size_of = [](int i) { return size_t(i % 3 == 0 ? 200000 : 10 + 997 * i); };
  Status sent;
  InBackground([&] {
    for (int i = 0; i < kMessages && sent.ok(); ++i) {
      std::vector<uint8_t> message = Pattern(size_of(i), i);
      sent = a_->Send(message.data(), message.size());
    }
  });
  for (int i = 0; i < kMessages; ++i) {
    std::vector<uint8_t> want = Pattern(size_of(i), i);
    if (i % 2 == 0) {
      StatusOr<size_t> got = b_->RecvInto(**region, 0, buf.size(), kPatience);
      ASSERT_TRUE(got.ok()) << "message " << i << ": " << got.status().ToString();
      ASSERT_EQ(*got, want.size()) << "message " << i;
      EXPECT_TRUE(std::equal(want.begin(), want.end(), buf.begin())) << "message " << i;
    } else {
      StatusOr<std::vector<uint8_t>> got = b_->Recv(kPatience);
      ASSERT_TRUE(got.ok()) << "message " << i << ": " << got.status().ToString();
      EXPECT_TRUE(*got == want) << "message " << i;
    }
  }
  JoinBackground();
  EXPECT_TRUE(sent.ok()) << sent.ToString();
}

TEST_P(ChannelConformanceTest, RecvIntoRefusesBadRangesAndTruncatesALongMessage) {
  std::vector<uint8_t> buf(4096);
  auto region = b_->RegisterMemory(buf.data(), buf.size());
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  // Bad ranges take nothing: the messages are still there afterwards.
  EXPECT_EQ(b_->RecvInto(**region, 4097, 0, 10ms).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(b_->RecvInto(**region, 100, 4000, 10ms).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(b_->RecvInto(**region, 0, 4096, 50ms).status().code(), StatusCode::kDeadlineExceeded);
  std::vector<uint8_t> big = Pattern(300000, 9), small = Pattern(3000, 10);
  ASSERT_TRUE(a_->Send("first", 5).ok());
  Status sent;
  InBackground([&] {
    sent = a_->Send(big.data(), big.size());
    if (sent.ok()) sent = a_->Send(small.data(), small.size());
  });
  StatusOr<std::vector<uint8_t>> first = b_->Recv(kPatience);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(std::string(first->begin(), first->end()), "first");
  // 300,000 bytes into 1,000: the first 1,000 are kept, the rest dropped.
  StatusOr<size_t> truncated = b_->RecvInto(**region, 0, 1000, kPatience);
  ASSERT_EQ(truncated.status().code(), StatusCode::kOutOfRange) << truncated.status().ToString();
  EXPECT_NE(truncated.status().message().find("300000"), std::string::npos)
      << truncated.status().ToString();
  EXPECT_TRUE(std::equal(big.begin(), big.begin() + 1000, buf.begin()));
  StatusOr<size_t> next = b_->RecvInto(**region, 0, buf.size(), kPatience);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(*next, small.size());
  EXPECT_TRUE(std::equal(small.begin(), small.end(), buf.begin()));
  JoinBackground();
  EXPECT_TRUE(sent.ok()) << sent.ToString();
}

}  // namespace
}  // namespace rdmad::internal
