// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The echo service's per-channel protocol over a TCP channel pair on
// loopback: the client library's side (echo::Handshake) against
// ServeEchoChannel on a thread.

#include "daemon/echo/echo_session.h"

#include <thread>

#include "client/src/tcp/tcp_test_util.h"
#include "common/echo_protocol.h"
#include "gtest/gtest.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

class EchoSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pair = internal::MakeTcpPair("127.0.0.1");
    if (pair.status().code() == StatusCode::kFailedPrecondition) GTEST_SKIP() << "no loopback";
    ASSERT_TRUE(pair.ok()) << pair.status().ToString();
    client_ = std::move(pair->first);
    server_ = std::move(pair->second);
  }

  void Serve(EchoSessionOptions options = {}) {
    server_thread_ =
        std::thread([this, options] { result_ = ServeEchoChannel(*server_, options); });
  }

  // Closes the client's side and waits for the server to finish.
  EchoSessionResult Finish() {
    client_->Close();
    if (server_thread_.joinable()) server_thread_.join();
    return result_;
  }

  void TearDown() override {
    if (client_) client_->Close();
    if (server_) server_->Close();
    if (server_thread_.joinable()) server_thread_.join();
  }

  std::unique_ptr<Channel> client_;
  std::unique_ptr<Channel> server_;
  std::thread server_thread_;
  EchoSessionResult result_;
};

TEST_F(EchoSessionTest, EchoSendsEveryMessageBack) {
  Serve();
  auto ack = echo::Handshake(*client_, {echo::kVersion, echo::Mode::kEcho, 0}, seconds(5));
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  EXPECT_EQ(std::string(ack->begin(), ack->end()), "ECHO");
  for (size_t size : {size_t(0), size_t(64), size_t(1) << 20}) {
    std::vector<uint8_t> msg = echo::PatternPayload(size, size);
    ASSERT_TRUE(client_->Send(msg.data(), msg.size()).ok());
    auto reply = client_->Recv(seconds(5));
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    EXPECT_EQ(*reply, msg);
  }
  EchoSessionResult r = Finish();
  EXPECT_EQ(r.messages, 3u);
  EXPECT_EQ(r.bytes, 64u + (1u << 20));
  EXPECT_EQ(r.status.code(), StatusCode::kUnavailable) << r.status.ToString();
}

TEST_F(EchoSessionTest, EchoToldTheLongestMessageReceivesIntoOneRegion) {
  Serve();
  auto ack = echo::Handshake(*client_, {echo::kVersion, echo::Mode::kEcho, 4096}, seconds(5));
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  for (size_t size : {size_t(0), size_t(8), size_t(4096), size_t(100)}) {
    std::vector<uint8_t> msg = echo::PatternPayload(size, size);
    ASSERT_TRUE(client_->Send(msg.data(), msg.size()).ok());
    auto reply = client_->Recv(seconds(5));
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    EXPECT_EQ(*reply, msg) << size;  // the shorter one after the longest: only its bytes
  }
  // Longer than announced: its tail cannot be sent back, the session ends.
  std::vector<uint8_t> longer(4097, 7);
  ASSERT_TRUE(client_->Send(longer.data(), longer.size()).ok());
  EchoSessionResult r = Finish();
  EXPECT_EQ(r.messages, 4u);
  EXPECT_EQ(r.bytes, 8u + 4096u + 100u);
  EXPECT_EQ(r.status.code(), StatusCode::kOutOfRange) << r.status.ToString();
}

TEST_F(EchoSessionTest, SinkCountsEveryNMessages) {
  Serve();
  auto ack = echo::Handshake(*client_, {echo::kVersion, echo::Mode::kSink, 2}, seconds(5));
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  uint8_t byte = 1;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(client_->Send(&byte, 1).ok());
  for (uint64_t want : {2u, 4u}) {
    auto reply = client_->Recv(seconds(5));
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    auto count = echo::DecodeCount(reply->data(), reply->size());
    ASSERT_TRUE(count.ok());
    EXPECT_EQ(*count, want);
  }
  EXPECT_EQ(client_->Recv(milliseconds(100)).status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(Finish().messages, 5u);
}

TEST_F(EchoSessionTest, RegionIsWrittenAndReadBack) {
  Serve();
  auto ack = echo::Handshake(*client_, {echo::kVersion, echo::Mode::kRegion, 8192}, seconds(5));
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  auto remote = RegionDescriptor::Parse(ack->data(), ack->size());
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  EXPECT_EQ(remote->length, 8192u);
  std::vector<uint8_t> local = echo::PatternPayload(3, 8192);
  std::vector<uint8_t> want = local;
  auto mine = client_->RegisterMemory(local.data(), local.size());
  ASSERT_TRUE(mine.ok());
  ASSERT_TRUE(client_->Write(**mine, 0, *remote, 0, 8192).ok());
  std::fill(local.begin(), local.end(), 0);
  ASSERT_TRUE(client_->Read(**mine, 0, *remote, 0, 8192).ok());
  EXPECT_EQ(local, want);
  EXPECT_EQ(client_->Read(**mine, 0, *remote, 4096, 8192).code(), StatusCode::kOutOfRange);
  Finish();
}

TEST_F(EchoSessionTest, RegionSendsEachNotificationBackAfterItsBatch) {
  Serve();
  auto ack = echo::Handshake(*client_, {echo::kVersion, echo::Mode::kRegion, 8192}, seconds(5));
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  auto remote = RegionDescriptor::Parse(ack->data(), ack->size());
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  std::vector<uint8_t> local = echo::PatternPayload(5, 4096);
  auto mine = client_->RegisterMemory(local.data(), local.size());
  ASSERT_TRUE(mine.ok());
  std::vector<TransferOp> ops{{TransferOp::Kind::kWrite, mine->get(), 0, *remote, 4096, 4096}};
  for (std::string note : {"first", "second"}) {
    auto transfer = client_->Submit(ops, note);
    ASSERT_TRUE(transfer.ok()) << transfer.status().ToString();
    auto echoed = client_->Recv(seconds(5));
    ASSERT_TRUE(echoed.ok()) << echoed.status().ToString();
    EXPECT_EQ(std::string(echoed->begin(), echoed->end()), note);
    EXPECT_TRUE((*transfer)->Wait(seconds(5)).ok());
  }
  // Messages are still taken (and counted), not echoed.
  ASSERT_TRUE(client_->Send("abc", 3).ok());
  EXPECT_EQ(client_->Recv(milliseconds(100)).status().code(), StatusCode::kDeadlineExceeded);
  std::vector<uint8_t> back(4096);
  auto into = client_->RegisterMemory(back.data(), back.size());
  ASSERT_TRUE(into.ok());
  ASSERT_TRUE(client_->Read(**into, 0, *remote, 4096, 4096).ok());
  EXPECT_EQ(back, local);
  EchoSessionResult r = Finish();
  EXPECT_EQ(r.notifications, 2u);
  EXPECT_EQ(r.messages, 1u);
}

TEST_F(EchoSessionTest, ClosingARegionChannelHereEndsItsSession) {
  Serve();
  auto ack = echo::Handshake(*client_, {echo::kVersion, echo::Mode::kRegion, 4096}, seconds(5));
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  auto start = std::chrono::steady_clock::now();
  server_->Close();  // as the service does when it stops
  server_thread_.join();
  EXPECT_EQ(result_.status.code(), StatusCode::kCancelled) << result_.status.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(2));
}

TEST_F(EchoSessionTest, MalformedHeaderGetsAnErrorAckAndTheChannelCloses) {
  Serve({.refuse_linger = milliseconds(200)});
  std::string junk = "hello, echo";
  ASSERT_TRUE(client_->Send(junk.data(), junk.size()).ok());
  auto reply = client_->Recv(seconds(5));
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  auto ack = echo::DecodeAck(reply->data(), reply->size());
  ASSERT_TRUE(ack.ok()) << ack.status().ToString();
  EXPECT_EQ(ack->status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ack->status.message(), "echo header: bad magic \"hell\", expected \"RDEC\"");
  // The server closes after its linger even though this side does not.
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(client_->Recv(seconds(5)).status().code(), StatusCode::kUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(2));
  server_thread_.join();
  EXPECT_EQ(result_.status, ack->status);
}

TEST_F(EchoSessionTest, OversizedRegionIsRefused) {
  Serve();
  auto ack = echo::Handshake(
      *client_, {echo::kVersion, echo::Mode::kRegion, echo::kMaxRegionBytes + 1}, seconds(5));
  EXPECT_EQ(ack.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ack.status().message().find("echo service: echo header: REGION of 1073741825 bytes"),
            std::string::npos)
      << ack.status().message();
  Finish();
}

TEST_F(EchoSessionTest, SilentClientTimesOut) {
  Serve({.header_timeout = milliseconds(100)});
  auto reply = client_->Recv(seconds(5));
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  auto ack = echo::DecodeAck(reply->data(), reply->size());
  ASSERT_TRUE(ack.ok());
  EXPECT_EQ(ack->status, Status::DeadlineExceeded("no echo header within 100 ms"));
  Finish();
}

TEST_F(EchoSessionTest, CloseFromAnotherThreadEndsTheSession) {
  Serve();
  ASSERT_TRUE(echo::Handshake(*client_, {echo::kVersion, echo::Mode::kEcho, 0}, seconds(5)).ok());
  server_->Close();  // what EchoService::Stop does
  server_thread_.join();
  EXPECT_EQ(result_.status.code(), StatusCode::kCancelled) << result_.status.ToString();
}

}  // namespace
}  // namespace rdmad
