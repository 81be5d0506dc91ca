// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/server/channel_convert.h"

#include "gtest/gtest.h"

namespace rdmad {
namespace {

TEST(ChannelConvertTest, RdmaEndpointRoundTrips) {
  ChannelEndpoint e;
  e.rdma = internal::RdmaEndpoint{};
  e.rdma->device = "rxe0";
  e.rdma->qpn = 0x123456;
  e.rdma->psn = 0xABCDEF;
  e.rdma->gid[15] = 9;
  e.rdma->active_mtu = 1024;
  e.rdma->qp.type = "RC";
  e.rdma->qp.hop_limit = 64;
  e.rdma->credits = 64;
  e.transport_reason = "why";
  v1::Endpoint wire;
  ToProto(e, &wire);
  auto back = FromProto(wire);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back.value().rdma->qpn, 0x123456u);
  EXPECT_EQ(back.value().rdma->gid[15], 9);
  EXPECT_EQ(back.value().rdma->qp.hop_limit, 64u);
  EXPECT_EQ(back.value().rdma->credits, 64u);
  EXPECT_EQ(back.value().transport_reason, "why");
  EXPECT_FALSE(back.value().tcp.has_value());
}

TEST(ChannelConvertTest, GarbageIsInvalidArgumentNamingTheField) {
  v1::Endpoint none;
  EXPECT_EQ(FromProto(none).status().code(), StatusCode::kInvalidArgument);
  v1::Endpoint gid;
  gid.mutable_rdma()->set_gid("short");
  EXPECT_NE(FromProto(gid).status().message().find("gid is 5 bytes"), std::string::npos);
  v1::Endpoint token;
  token.mutable_tcp()->set_token(std::string(31, 'x'));
  EXPECT_NE(FromProto(token).status().message().find("token is 31 bytes"), std::string::npos);
  v1::Endpoint port;
  port.mutable_tcp()->set_token(std::string(32, 'x'));
  port.mutable_tcp()->set_port(70000);
  EXPECT_NE(FromProto(port).status().message().find("port 70000"), std::string::npos);
}

TEST(ChannelConvertTest, OpenChannelRequestRoundTrips) {
  OpenChannelCall call;
  call.channel_id = 0xfeedface12345678;
  call.service = "svc";
  call.initiator_host = "hostA";
  call.initiator.tcp = internal::TcpEndpoint{};
  call.initiator.tcp->host = "127.0.0.1";
  call.initiator.tcp->port = 4242;
  call.initiator.tcp->token[31] = 3;
  v1::OpenChannelRequest wire;
  ToProto(call, &wire);
  auto back = FromProto(wire);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back.value().channel_id, call.channel_id);
  EXPECT_EQ(back.value().initiator.tcp->port, 4242);
  EXPECT_EQ(back.value().initiator.tcp->token[31], 3);
}

}  // namespace
}  // namespace rdmad
