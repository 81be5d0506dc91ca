// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/tcp/tcp_frame.h"

#include <string>

#include "gtest/gtest.h"

namespace rdmad::internal {
namespace {

FrameHeader Write() {
  FrameHeader h;
  h.type = FrameType::kWrite;
  h.arg = 0xdeadbeef;
  h.payload_len = 100;
  h.request_id = 9;
  h.region_id = 3;
  h.offset = 1 << 20;
  return h;
}

// The status DecodeFrameHeader gives for h, as encoded.
Status Decoded(const FrameHeader& h) { return DecodeFrameHeader(EncodeFrameHeader(h)).status(); }

void ExpectMalformed(const FrameHeader& h, const std::string& contains) {
  Status s = Decoded(h);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.ToString();
  EXPECT_NE(s.message().find(contains), std::string::npos) << s.ToString();
}

TEST(TcpFrameTest, EncodesLittleEndianAndRoundTrips) {
  RawFrameHeader raw = EncodeFrameHeader(Write());
  EXPECT_EQ(raw[0], 2);  // WRITE
  EXPECT_EQ(raw[1], kFrameVersion);
  EXPECT_EQ(raw[4], 0xef);
  EXPECT_EQ(raw[7], 0xde);
  EXPECT_EQ(raw[8], 100);
  EXPECT_EQ(raw[16], 9);
  EXPECT_EQ(raw[24], 3);
  EXPECT_EQ(raw[34], 0x10);  // offset 1 MiB
  StatusOr<FrameHeader> h = DecodeFrameHeader(raw);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->type, FrameType::kWrite);
  EXPECT_EQ(h->arg, 0xdeadbeef);
  EXPECT_EQ(h->payload_len, 100u);
  EXPECT_EQ(h->request_id, 9u);
  EXPECT_EQ(h->region_id, 3u);
  EXPECT_EQ(h->offset, 1u << 20);
}

TEST(TcpFrameTest, AcceptsEveryWellFormedType) {
  FrameHeader data;
  data.payload_len = kMaxPayloadBytes;
  EXPECT_TRUE(Decoded(data).ok());
  FrameHeader read;
  read.type = FrameType::kReadReq;
  read.request_id = 1;
  read.read_len = kMaxPayloadBytes;
  EXPECT_TRUE(Decoded(read).ok());
  FrameHeader resp;
  resp.type = FrameType::kReadResp;
  resp.request_id = 1;
  resp.payload_len = 5;
  EXPECT_TRUE(Decoded(resp).ok());
  FrameHeader ack;
  ack.type = FrameType::kAck;
  ack.request_id = 1;
  ack.arg = static_cast<uint32_t>(StatusCode::kNotFound);
  ack.payload_len = 10;
  EXPECT_TRUE(Decoded(ack).ok());
  FrameHeader close;
  close.type = FrameType::kClose;
  close.payload_len = kMaxReasonBytes;
  EXPECT_TRUE(Decoded(close).ok());
}

TEST(TcpFrameTest, RejectsBadFramingBytes) {
  RawFrameHeader raw = EncodeFrameHeader(Write());
  raw[0] = 0;
  EXPECT_NE(DecodeFrameHeader(raw).status().message().find("unknown type 0x00"), std::string::npos);
  raw = EncodeFrameHeader(Write());
  raw[1] = 2;
  EXPECT_EQ(DecodeFrameHeader(raw).status().code(), StatusCode::kDataLoss);
  raw = EncodeFrameHeader(Write());
  raw[3] = 1;
  EXPECT_EQ(DecodeFrameHeader(raw).status().code(), StatusCode::kDataLoss);
}

TEST(TcpFrameTest, RejectsLengthsBeyondTheLimits) {
  FrameHeader data;
  data.payload_len = kMaxPayloadBytes + 1;
  ExpectMalformed(data, "exceeds the limit");
  FrameHeader write = Write();
  write.payload_len = UINT64_MAX;
  ExpectMalformed(write, "exceeds the limit");
  FrameHeader read;
  read.type = FrameType::kReadReq;
  read.request_id = 1;
  read.read_len = kMaxPayloadBytes + 1;
  ExpectMalformed(read, "read_len");
  FrameHeader ack;
  ack.type = FrameType::kAck;
  ack.request_id = 1;
  ack.payload_len = 1;  // an OK ACK carries nothing
  ExpectMalformed(ack, "exceeds the limit");
  FrameHeader error_resp;
  error_resp.type = FrameType::kReadResp;
  error_resp.request_id = 1;
  error_resp.arg = 5;
  error_resp.payload_len = kMaxReasonBytes + 1;
  ExpectMalformed(error_resp, "exceeds the limit");
}

TEST(TcpFrameTest, RejectsFieldsThatDoNotBelong) {
  FrameHeader data;
  data.request_id = 1;
  ExpectMalformed(data, "must be 0");
  FrameHeader ack;
  ack.type = FrameType::kAck;
  ack.request_id = 1;
  ack.region_id = 4;
  ExpectMalformed(ack, "must be 0");
  FrameHeader no_id = Write();
  no_id.request_id = 0;
  ExpectMalformed(no_id, "request_id 0");
  FrameHeader bad_code;
  bad_code.type = FrameType::kClose;
  bad_code.arg = 17;
  ExpectMalformed(bad_code, "unknown status code 17");
  FrameHeader wrap = Write();
  wrap.offset = UINT64_MAX - 10;
  ExpectMalformed(wrap, "overflows");
}

TEST(TcpFrameTest, SanitizesPeerText) {
  EXPECT_EQ(SanitizePeerText("ok: fine"), "ok: fine");
  EXPECT_EQ(SanitizePeerText(std::string("a\0b\n\x80", 5)), "a?b??");
  EXPECT_EQ(SanitizePeerText(std::string(10000, 'x')).size(), kMaxReasonBytes);
}

}  // namespace
}  // namespace rdmad::internal
