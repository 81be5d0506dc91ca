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
  EXPECT_TRUE(back.value().more.empty());
}

TEST(ChannelConvertTest, ABatchRoundTripsAndIsBounded) {
  OpenChannelCall call;
  call.channel_id = 1;
  call.service = "svc";
  call.initiator.tcp = internal::TcpEndpoint{};
  call.initiator.tcp->host = "127.0.0.1";
  for (uint64_t id = 2; id <= 4; ++id) {
    ChannelOpening more{id, call.initiator};
    more.endpoint.tcp->port = uint16_t(id);
    call.more.push_back(more);
  }
  v1::OpenChannelRequest wire;
  ToProto(call, &wire);
  auto back = FromProto(wire);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back.value().more.size(), 3u);
  for (uint64_t id = 2; id <= 4; ++id) {
    EXPECT_EQ(back.value().more[id - 2].channel_id, id);
    EXPECT_EQ(back.value().more[id - 2].endpoint.tcp->port, id);
  }
  wire.mutable_more(1)->mutable_endpoint()->clear_transport();
  EXPECT_EQ(FromProto(wire).status().message(), "more[1].endpoint: neither rdma nor tcp is set");
  wire.clear_more();
  for (size_t i = 0; i < kMaxChannelBatch; ++i) ToProto(call.more[0], wire.add_more());
  EXPECT_EQ(FromProto(wire).status().code(), StatusCode::kInvalidArgument);
}

TEST(ChannelConvertTest, ABatchsEndpointsComeFirstFirstAndNameTheBadOne) {
  ChannelEndpoint endpoint;
  endpoint.tcp = internal::TcpEndpoint{};
  endpoint.tcp->host = "127.0.0.1";
  v1::AcceptRequest wire;
  for (uint16_t port = 1; port <= 3; ++port) {
    endpoint.tcp->port = port;
    ToProto(endpoint, port == 1 ? wire.mutable_endpoint() : wire.add_more_endpoints());
  }
  auto back = EndpointsFromProto(wire.endpoint(), wire.more_endpoints(), "more_endpoints");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back.value().size(), 3u);
  for (uint16_t port = 1; port <= 3; ++port) EXPECT_EQ(back.value()[port - 1].tcp->port, port);

  wire.mutable_more_endpoints(1)->clear_transport();
  back = EndpointsFromProto(wire.endpoint(), wire.more_endpoints(), "more_endpoints");
  EXPECT_EQ(back.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(back.status().message(), "more_endpoints[1]: endpoint: neither rdma nor tcp is set");
  wire.clear_more_endpoints();
  wire.mutable_endpoint()->clear_transport();  // the first keeps its own message
  back = EndpointsFromProto(wire.endpoint(), wire.more_endpoints(), "more_endpoints");
  EXPECT_EQ(back.status().message(), "endpoint: neither rdma nor tcp is set");

  ToProto(endpoint, wire.mutable_endpoint());
  for (size_t i = 0; i < kMaxChannelBatch; ++i) ToProto(endpoint, wire.add_more_endpoints());
  back = EndpointsFromProto(wire.endpoint(), wire.more_endpoints(), "more_endpoints");
  EXPECT_EQ(back.status().message(),
            "more_endpoints: at most " + std::to_string(kMaxChannelBatch - 1));
}

}  // namespace
}  // namespace rdmad
