// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/channel_convert.h"

#include "gtest/gtest.h"

namespace rdmad {
namespace {

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
