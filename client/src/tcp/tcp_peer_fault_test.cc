// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// A TCP channel whose peer misbehaves: garbage frames, answers to nothing,
// accesses to regions it may not touch, and a peer that dies at any point.
// The channel must end with a clear status, tell the peer why where it can,
// and never crash, hang or allocate what the peer merely announces.

#include <sys/socket.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "client/src/tcp/tcp_channel_impl.h"
#include "client/src/tcp/tcp_test_util.h"
#include "gtest/gtest.h"

namespace rdmad::internal {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

struct Garbage {
  std::string name;
  std::string bytes;             // sent after the token
  StatusCode code;               // the channel's status then
  std::string message_contains;  // ... and part of its message
};

std::string Frame(const FrameHeader& header, std::string payload = "") {
  RawFrameHeader raw = EncodeFrameHeader(header);
  return std::string(raw.begin(), raw.end()) + payload;
}

FrameHeader Header(FrameType type) {
  FrameHeader h;
  h.type = type;
  return h;
}

std::vector<Garbage> AllGarbage() {
  std::vector<Garbage> all;
  std::string unknown_type = Frame(Header(FrameType::kData));
  unknown_type[0] = 0x7f;
  all.push_back({"UnknownType", unknown_type, StatusCode::kDataLoss, "unknown type 0x7f"});
  std::string bad_version = Frame(Header(FrameType::kData));
  bad_version[1] = 9;
  all.push_back({"BadVersion", bad_version, StatusCode::kDataLoss, "version 9"});
  FrameHeader huge = Header(FrameType::kData);
  huge.payload_len = uint64_t{1} << 40;
  all.push_back({"HugeMessage", Frame(huge), StatusCode::kDataLoss, "exceeds the limit"});
  FrameHeader stray_ack = Header(FrameType::kAck);
  stray_ack.request_id = 42;
  all.push_back({"StrayAck", Frame(stray_ack), StatusCode::kDataLoss, "no Write waits"});
  FrameHeader stray_resp = Header(FrameType::kReadResp);
  stray_resp.request_id = 7;
  stray_resp.payload_len = 3;
  all.push_back({"StrayReadResp", Frame(stray_resp, "abc"), StatusCode::kDataLoss, "no Read"});
  FrameHeader long_close = Header(FrameType::kClose);
  long_close.payload_len = 1 << 20;
  all.push_back({"LongCloseReason", Frame(long_close), StatusCode::kDataLoss, "CLOSE"});
  FrameHeader wrap = Header(FrameType::kReadReq);
  wrap.request_id = 1;
  wrap.offset = UINT64_MAX - 2;
  wrap.read_len = 10;
  all.push_back({"OffsetOverflow", Frame(wrap), StatusCode::kDataLoss, "overflows"});
  std::string noise(4096, '\0');
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>(i * 131 + 17);
  all.push_back({"Noise", noise, StatusCode::kDataLoss, "malformed"});
  FrameHeader write = Header(FrameType::kWrite);
  write.request_id = 5;
  write.region_id = uint64_t{1} << 62;
  write.payload_len = 4;
  all.push_back(
      {"WriteToUnknownRegion", Frame(write, "abcd"), StatusCode::kNotFound, "remote access error"});
  return all;
}

class TcpGarbageTest : public ::testing::TestWithParam<Garbage> {};

TEST_P(TcpGarbageTest, EndsTheChannelWithAClearStatus) {
  StatusOr<RawPeer> peer = MakeRawPeer();
  ASSERT_TRUE(peer.ok()) << peer.status().ToString();
  // A good message first: it is still delivered.
  FrameHeader data = Header(FrameType::kData);
  data.payload_len = 2;
  ASSERT_TRUE(SendRawFrame(peer->raw.get(), data, "hi").ok());
  const std::string& bytes = GetParam().bytes;
  ASSERT_TRUE(SendAll(peer->raw.get(), bytes.data(), bytes.size()).ok());

  StatusOr<std::vector<uint8_t>> got = peer->channel->Recv(seconds(5));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::string(got->begin(), got->end()), "hi");
  Status failed = peer->channel->Recv(seconds(5)).status();
  EXPECT_EQ(failed.code(), GetParam().code) << failed.ToString();
  EXPECT_NE(failed.message().find(GetParam().message_contains), std::string::npos)
      << failed.ToString();
  EXPECT_EQ(peer->channel->status(), failed);
  EXPECT_EQ(peer->channel->Send("x", 1), failed);

  // The raw peer is told: (an ACK refusing its access, then) a CLOSE.
  StatusOr<RawFrame> frame = ReadRawFrame(peer->raw.get());
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  if (frame->header.type == FrameType::kAck) {
    EXPECT_EQ(frame->header.arg, static_cast<uint32_t>(StatusCode::kNotFound));
    frame = ReadRawFrame(peer->raw.get());
    ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  }
  EXPECT_EQ(frame->header.type, FrameType::kClose);
  EXPECT_NE(frame->payload.find(GetParam().message_contains), std::string::npos) << frame->payload;
  EXPECT_TRUE(WaitForEof(peer->raw.get(), seconds(5)));
}

INSTANTIATE_TEST_SUITE_P(Tcp, TcpGarbageTest, ::testing::ValuesIn(AllGarbage()),
                         [](const auto& info) { return info.param.name; });

void ExpectConnectionLost(Channel& channel, const std::string& contains) {
  Status lost = channel.Recv(seconds(5)).status();
  EXPECT_EQ(lost.code(), StatusCode::kUnavailable) << lost.ToString();
  EXPECT_NE(lost.message().find(contains), std::string::npos) << lost.ToString();
}

TEST(TcpPeerDeathTest, ClosedWithoutCloseFrame) {
  StatusOr<RawPeer> peer = MakeRawPeer();
  ASSERT_TRUE(peer.ok()) << peer.status().ToString();
  peer->raw.reset();
  ExpectConnectionLost(*peer->channel, "the peer closed the connection without CLOSE");
}

TEST(TcpPeerDeathTest, ResetConnection) {
  StatusOr<RawPeer> peer = MakeRawPeer();
  ASSERT_TRUE(peer.ok()) << peer.status().ToString();
  linger abort{1, 0};  // close() sends RST, as when a process is killed mid-transfer
  ASSERT_EQ(setsockopt(peer->raw.get(), SOL_SOCKET, SO_LINGER, &abort, sizeof(abort)), 0);
  peer->raw.reset();
  ExpectConnectionLost(*peer->channel, "connection lost");
}

TEST(TcpPeerDeathTest, DiesInTheMiddleOfAMessage) {
  StatusOr<RawPeer> peer = MakeRawPeer();
  ASSERT_TRUE(peer.ok()) << peer.status().ToString();
  FrameHeader data = Header(FrameType::kData);
  data.payload_len = 1 << 20;
  ASSERT_TRUE(SendRawFrame(peer->raw.get(), data, std::string(1000, 'x')).ok());
  peer->raw.reset();
  ExpectConnectionLost(*peer->channel, "connection lost in a frame's payload");
}

TEST(TcpPeerDeathTest, DiesWhileAWriteWaitsForItsAck) {
  StatusOr<RawPeer> peer = MakeRawPeer();
  ASSERT_TRUE(peer.ok()) << peer.status().ToString();
  std::vector<uint8_t> buf(1000, 3);
  StatusOr<std::unique_ptr<MemoryRegion>> local = peer->channel->RegisterMemory(buf.data(), 1000);
  ASSERT_TRUE(local.ok());
  RegionDescriptor remote{1, 1000, 1, 0, {}};
  Status wrote;
  std::jthread writer([&] { wrote = peer->channel->Write(**local, 0, remote, 0, 1000); });
  StatusOr<RawFrame> request = ReadRawFrame(peer->raw.get());  // the WRITE, never answered
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  EXPECT_EQ(request->header.type, FrameType::kWrite);
  EXPECT_EQ(request->payload, std::string(1000, '\3'));
  peer->raw.reset();
  writer.join();
  EXPECT_EQ(wrote.code(), StatusCode::kUnavailable) << wrote.ToString();
}

TEST(TcpCloseTest, CloseWakesAReadWaitingForItsAnswer) {
  StatusOr<RawPeer> peer = MakeRawPeer();
  ASSERT_TRUE(peer.ok()) << peer.status().ToString();
  std::vector<uint8_t> buf(64, 3);
  StatusOr<std::unique_ptr<MemoryRegion>> local = peer->channel->RegisterMemory(buf.data(), 64);
  ASSERT_TRUE(local.ok());
  RegionDescriptor remote{1, 64, 1, 0, {}};
  Status read;
  std::jthread reader([&] { read = peer->channel->Read(**local, 0, remote, 0, 64); });
  ASSERT_TRUE(ReadRawFrame(peer->raw.get()).ok());  // the READ_REQ, never answered
  peer->channel->Close();
  reader.join();
  EXPECT_EQ(read.code(), StatusCode::kCancelled) << read.ToString();
  StatusOr<RawFrame> close = ReadRawFrame(peer->raw.get());
  ASSERT_TRUE(close.ok()) << close.status().ToString();
  EXPECT_EQ(close->header.type, FrameType::kClose);
  EXPECT_EQ(close->payload, "");
}

TEST(TcpPeerTest, ACloseReasonIsSanitizedAndReported) {
  StatusOr<RawPeer> peer = MakeRawPeer();
  ASSERT_TRUE(peer.ok()) << peer.status().ToString();
  FrameHeader close = Header(FrameType::kClose);
  close.payload_len = 9;
  ASSERT_TRUE(SendRawFrame(peer->raw.get(), close, std::string("bye\n\x01\xff now", 9)).ok());
  Status closed = peer->channel->Recv(seconds(5)).status();
  EXPECT_EQ(closed, Status::Unavailable("closed by peer: bye??? no"));
}

}  // namespace
}  // namespace rdmad::internal
