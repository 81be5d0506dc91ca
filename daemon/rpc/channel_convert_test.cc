// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/channel_convert.h"

#include "daemon/rpc/request_checks.h"
#include "gtest/gtest.h"

namespace rdmad {
namespace {

ChannelEndpoint TcpAt(uint16_t port) {
  ChannelEndpoint endpoint;
  endpoint.tcp = internal::TcpEndpoint{};
  endpoint.tcp->host = "127.0.0.1";
  endpoint.tcp->port = port;
  return endpoint;
}

TEST(ChannelConvertTest, OpenChannelRequestRoundTrips) {
  OpenChannelCall call;
  call.service = "svc";
  call.initiator_host = "hostA";
  call.channels = {{0xfeedface12345678, TcpAt(4242)}};
  call.channels[0].endpoint.tcp->token[31] = 3;
  v1::OpenChannelRequest wire;
  ToProto(call, &wire);
  auto back = FromProto(wire);
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back.value().channels.size(), 1u);
  EXPECT_EQ(back.value().channels[0].channel_id, 0xfeedface12345678u);
  EXPECT_EQ(back.value().channels[0].endpoint.tcp->port, 4242);
  EXPECT_EQ(back.value().channels[0].endpoint.tcp->token[31], 3);
  EXPECT_EQ(back.value().service, "svc");
  EXPECT_EQ(back.value().initiator_host, "hostA");
}

TEST(ChannelConvertTest, ABatchRoundTripsInOrderAndIsBounded) {
  OpenChannelCall call;
  call.service = "svc";
  for (uint64_t id = 1; id <= 4; ++id) call.channels.push_back({id, TcpAt(uint16_t(id))});
  v1::OpenChannelRequest wire;
  ToProto(call, &wire);
  auto back = FromProto(wire);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back.value().channels.size(), 4u);
  for (uint64_t id = 1; id <= 4; ++id) {
    EXPECT_EQ(back.value().channels[id - 1].channel_id, id);
    EXPECT_EQ(back.value().channels[id - 1].endpoint.tcp->port, id);
  }
  wire.mutable_channels(1)->mutable_endpoint()->clear_transport();
  EXPECT_EQ(FromProto(wire).status().message(),
            "channels[1].endpoint: neither rdma nor tcp is set");
  wire.clear_channels();
  EXPECT_EQ(FromProto(wire).status().message(), "channels: required");
  for (size_t i = 0; i < kMaxChannelBatch; ++i) ToProto(call.channels[0], wire.add_channels());
  EXPECT_TRUE(FromProto(wire).ok());  // 64 is a batch
  ToProto(call.channels[0], wire.add_channels());
  EXPECT_EQ(FromProto(wire).status().message(),
            "channels: at most " + std::to_string(kMaxChannelBatch) + " per batch");
}

TEST(ChannelConvertTest, ABatchsEndpointsKeepTheirOrderAndNameTheBadOne) {
  v1::AcceptRequest wire;
  for (uint16_t port = 1; port <= 3; ++port) ToProto(TcpAt(port), wire.add_endpoints());
  auto back = EndpointsFromProto(wire.endpoints(), "endpoints");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back.value().size(), 3u);
  for (uint16_t port = 1; port <= 3; ++port) EXPECT_EQ(back.value()[port - 1].tcp->port, port);

  wire.mutable_endpoints(1)->clear_transport();
  back = EndpointsFromProto(wire.endpoints(), "endpoints");
  EXPECT_EQ(back.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(back.status().message(), "endpoints[1]: endpoint: neither rdma nor tcp is set");
  wire.clear_endpoints();
  back = EndpointsFromProto(wire.endpoints(), "endpoints");
  EXPECT_EQ(back.status().message(), "endpoints: required");

  for (size_t i = 0; i <= kMaxChannelBatch; ++i) ToProto(TcpAt(1), wire.add_endpoints());
  back = EndpointsFromProto(wire.endpoints(), "endpoints");
  EXPECT_EQ(back.status().message(), "endpoints: at most " + std::to_string(kMaxChannelBatch));
}

// A request from a library of another release: fields this rdmad does not
// know are refused, not ignored.
TEST(ChannelConvertTest, ARequestWithUnknownFieldsIsRefusedNamingTheWayOut) {
  v1::ConnectRequest current;
  ToProto(ChannelOpening{7, TcpAt(1)}, current.add_channels());
  EXPECT_TRUE(CheckKnownFields(current).ok());
  // rdmad 0.1's ConnectRequest: channel_id = 1, endpoint = 2.
  std::string old_wire;
  old_wire.push_back(char(1 << 3 | 0));  // field 1, varint
  old_wire.push_back(char(7));
  v1::ConnectRequest old;
  ASSERT_TRUE(old.ParseFromString(old_wire));
  Status refused = CheckKnownFields(old);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("ConnectRequest carries fields rdmad"), std::string::npos)
      << refused.message();
  EXPECT_NE(refused.message().find("rebuild it against this rdmad"), std::string::npos);
}

}  // namespace
}  // namespace rdmad
