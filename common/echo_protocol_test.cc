// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/echo_protocol.h"

#include "gtest/gtest.h"

namespace rdmad::echo {
namespace {

TEST(EchoProtocolTest, HeaderIsSixteenLittleEndianBytes) {
  std::vector<uint8_t> bytes = EncodeHeader({kVersion, Mode::kSink, 0x0102030405060708});
  std::vector<uint8_t> want = {'R', 'D', 'E', 'C', 1, 0, 2, 0, 8, 7, 6, 5, 4, 3, 2, 1};
  EXPECT_EQ(bytes, want);
  auto h = DecodeHeader(bytes.data(), bytes.size());
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->version, 1);
  EXPECT_EQ(h->mode, Mode::kSink);
  EXPECT_EQ(h->param, 0x0102030405060708u);
}

TEST(EchoProtocolTest, MalformedHeadersSayWhatIsWrong) {
  std::vector<uint8_t> good = EncodeHeader({kVersion, Mode::kEcho, 0});
  auto short_one = DecodeHeader(good.data(), 3);
  EXPECT_EQ(short_one.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(short_one.status().message(), "echo header: 3 bytes, expected 16");
  EXPECT_EQ(DecodeHeader(nullptr, 0).status().code(), StatusCode::kInvalidArgument);

  std::vector<uint8_t> magic = good;
  magic[0] = 'X';
  magic[3] = 0;
  EXPECT_EQ(DecodeHeader(magic.data(), magic.size()).status().message(),
            "echo header: bad magic \"XDE\\x00\", expected \"RDEC\"");

  std::vector<uint8_t> v2 = EncodeHeader({2, Mode::kEcho, 0});
  auto version = DecodeHeader(v2.data(), v2.size());
  EXPECT_EQ(version.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(version.status().message(), "echo header: protocol version 2, this rdmad speaks 1");

  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_EQ(DecodeHeader(longer.data(), longer.size()).status().message(),
            "echo header: 17 bytes, expected 16");

  std::vector<uint8_t> mode = good;
  mode[6] = 9;
  EXPECT_EQ(DecodeHeader(mode.data(), mode.size()).status().message(),
            "echo header: unknown mode 9 (1 ECHO, 2 SINK, 3 REGION)");
  mode[6] = 0;
  EXPECT_EQ(DecodeHeader(mode.data(), mode.size()).status().code(), StatusCode::kInvalidArgument);
}

TEST(EchoProtocolTest, RegionSizeIsCapped) {
  std::vector<uint8_t> zero = EncodeHeader({kVersion, Mode::kRegion, 0});
  EXPECT_EQ(DecodeHeader(zero.data(), zero.size()).status().message(),
            "echo header: REGION of 0 bytes");
  std::vector<uint8_t> cap = EncodeHeader({kVersion, Mode::kRegion, kMaxRegionBytes});
  EXPECT_TRUE(DecodeHeader(cap.data(), cap.size()).ok());
  std::vector<uint8_t> big = EncodeHeader({kVersion, Mode::kRegion, kMaxRegionBytes + 1});
  auto over = DecodeHeader(big.data(), big.size());
  EXPECT_EQ(over.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(over.status().message().find("cap of 1073741824 bytes (1 GiB)"), std::string::npos)
      << over.status().message();
}

TEST(EchoProtocolTest, AnEchosLongestMessageIsOptionalAndCapped) {
  for (uint64_t param : {uint64_t(0), uint64_t(8), kMaxRegionBytes}) {
    std::vector<uint8_t> ok = EncodeHeader({kVersion, Mode::kEcho, param});
    auto h = DecodeHeader(ok.data(), ok.size());
    ASSERT_TRUE(h.ok()) << param << ": " << h.status().ToString();
    EXPECT_EQ(h->param, param);
  }
  std::vector<uint8_t> big = EncodeHeader({kVersion, Mode::kEcho, kMaxRegionBytes + 1});
  auto over = DecodeHeader(big.data(), big.size());
  EXPECT_EQ(over.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(over.status().message().find("ECHO of 1073741825 bytes"), std::string::npos)
      << over.status().message();
}

TEST(EchoProtocolTest, AcksCarryPayloadOrError) {
  Ack ok{Status::Ok(), {1, 2, 3}};
  std::vector<uint8_t> bytes = EncodeAck(ok);
  EXPECT_EQ(bytes.size(), kAckHeaderBytes + 3);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 4), "RDEA");
  auto decoded = DecodeAck(bytes.data(), bytes.size());
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(decoded->status.ok());
  EXPECT_EQ(decoded->payload, (std::vector<uint8_t>{1, 2, 3}));

  Ack error{Status::InvalidArgument("echo header: bad magic"), {9}};
  bytes = EncodeAck(error);
  decoded = DecodeAck(bytes.data(), bytes.size());
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->status, error.status);
  EXPECT_TRUE(decoded->payload.empty());

  EXPECT_EQ(DecodeAck(bytes.data(), 4).status().code(), StatusCode::kInvalidArgument);
  bytes[6] = 99;
  EXPECT_EQ(DecodeAck(bytes.data(), bytes.size()).status().message(),
            "echo ack: unknown status code 99");
}

TEST(EchoProtocolTest, CountsAreEightBytes) {
  std::vector<uint8_t> bytes = EncodeCount(300);
  EXPECT_EQ(bytes, (std::vector<uint8_t>{44, 1, 0, 0, 0, 0, 0, 0}));
  auto count = DecodeCount(bytes.data(), bytes.size());
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 300u);
  EXPECT_FALSE(DecodeCount(bytes.data(), 7).ok());
}

TEST(EchoProtocolTest, PatternCarriesSequenceAndDiffersBySequence) {
  std::vector<uint8_t> a = PatternPayload(7, 64);
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(PayloadSequence(a), 7u);
  EXPECT_EQ(a, PatternPayload(7, 64));
  EXPECT_NE(a, PatternPayload(8, 64));
  EXPECT_EQ(PatternPayload(1, 0).size(), 0u);
  EXPECT_NE(PatternPayload(1, 4), PatternPayload(2, 4));  // no room for seq
}

TEST(EchoProtocolTest, ModeNames) {
  EXPECT_EQ(ModeName(1), "ECHO");
  EXPECT_EQ(ModeName(2), "SINK");
  EXPECT_EQ(ModeName(3), "REGION");
  EXPECT_EQ(ModeName(7), "mode 7");
}

}  // namespace
}  // namespace rdmad::echo
