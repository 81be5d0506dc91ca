// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// EchoRoundTrip over a TCP channel pair whose far end the test plays by
// hand: intact, corrupt, late and missing replies; and the error lines.

#include "client/rdmactl/echo_client.h"

#include "client/src/tcp/tcp_test_util.h"
#include "gtest/gtest.h"

namespace rdmactl {
namespace {

using rdmad::StatusCode;
using std::chrono::milliseconds;
using std::chrono::seconds;

class EchoRoundTripTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pair = rdmad::internal::MakeTcpPair("127.0.0.1");
    if (pair.status().code() == StatusCode::kFailedPrecondition) GTEST_SKIP() << "no loopback";
    ASSERT_TRUE(pair.ok()) << pair.status().ToString();
    near_ = std::move(pair->first);
    far_ = std::move(pair->second);
  }

  // The far end sends reply (after the request it must see first).
  void Answer(std::vector<uint8_t> reply) {
    far_thread_ = std::thread([this, reply] {
      ASSERT_TRUE(far_->Recv(seconds(5)).ok());
      ASSERT_TRUE(far_->Send(reply.data(), reply.size()).ok());
    });
  }

  void TearDown() override {
    if (far_thread_.joinable()) far_thread_.join();
  }

  std::unique_ptr<rdmad::Channel> near_;
  std::unique_ptr<rdmad::Channel> far_;
  std::thread far_thread_;
};

TEST_F(EchoRoundTripTest, IntactReplyIsTimed) {
  Answer(rdmad::echo::PatternPayload(3, 100));
  auto us = EchoRoundTrip(*near_, 3, 100, seconds(5));
  ASSERT_TRUE(us.ok()) << us.status().ToString();
  EXPECT_GT(*us, 0);
}

TEST_F(EchoRoundTripTest, CorruptReplyNamesTheByte) {
  std::vector<uint8_t> reply = rdmad::echo::PatternPayload(3, 100);
  reply[42] ^= 0xff;
  Answer(reply);
  auto us = EchoRoundTrip(*near_, 3, 100, seconds(5));
  EXPECT_EQ(us.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(us.status().message().find("reply to seq 3 differs from the request at byte 42"),
            std::string::npos)
      << us.status().message();
}

TEST_F(EchoRoundTripTest, ShortReplyIsCorrupt) {
  Answer({1, 2, 3});
  auto us = EchoRoundTrip(*near_, 1, 64, seconds(5));
  EXPECT_EQ(us.status().message(), "reply to seq 1 has 3 bytes, the request 64");
}

TEST_F(EchoRoundTripTest, LateReplyIsSkipped) {
  far_thread_ = std::thread([this] {
    ASSERT_TRUE(far_->Recv(seconds(5)).ok());
    std::vector<uint8_t> late = rdmad::echo::PatternPayload(1, 64);
    std::vector<uint8_t> now = rdmad::echo::PatternPayload(2, 64);
    ASSERT_TRUE(far_->Send(late.data(), late.size()).ok());
    ASSERT_TRUE(far_->Send(now.data(), now.size()).ok());
  });
  EXPECT_TRUE(EchoRoundTrip(*near_, 2, 64, seconds(5)).ok());
}

TEST_F(EchoRoundTripTest, NoReplyIsDeadlineExceeded) {
  auto us = EchoRoundTrip(*near_, 7, 64, milliseconds(50));
  EXPECT_EQ(us.status(), rdmad::Status::DeadlineExceeded("no reply to seq 7 within 50 ms"));
}

TEST(EchoOpenErrorTest, SaysWhatToCheck) {
  using rdmad::Status;
  EXPECT_EQ(EchoOpenError("B", Status::NotFound("no service rdmad.echo on hostB")),
            "no such service: no service rdmad.echo on hostB (is echo.enabled false on B?)");
  EXPECT_EQ(EchoOpenError("x", Status::NotFound("unknown peer x: not a [[peers]] name")),
            "unknown peer x: not a [[peers]] name");
  EXPECT_EQ(EchoOpenError("B", Status::PermissionDenied("rejected: busy")),
            "B's echo service refused the channel: rejected: busy");
  EXPECT_EQ(EchoOpenError("B", Status::Unavailable("peer B is down: refused")),
            "B is unavailable: peer B is down: refused");
  EXPECT_EQ(EchoOpenError("B", Status::InvalidArgument("echo service: bad")),
            "cannot open a channel to B's rdmad.echo: INVALID_ARGUMENT: echo service: bad");
}

}  // namespace
}  // namespace rdmactl
