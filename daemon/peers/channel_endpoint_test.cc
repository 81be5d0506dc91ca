// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/channel_endpoint.h"

#include "gtest/gtest.h"

namespace rdmad {
namespace {

TEST(EndpointKindTest, NamesAreTheEdgesWordsAndReadBack) {
  ChannelEndpoint rdma;
  rdma.rdma = internal::RdmaEndpoint{};
  ChannelEndpoint tcp;
  tcp.tcp = internal::TcpEndpoint{};
  EXPECT_EQ(KindOf(rdma), EndpointKind::kRdma);
  EXPECT_EQ(KindOf(tcp), EndpointKind::kTcp);
  EXPECT_EQ(EndpointTransport(rdma), "RDMA");
  EXPECT_EQ(EndpointTransport(tcp), "TCP");
  for (EndpointKind kind : {EndpointKind::kUnknown, EndpointKind::kRdma, EndpointKind::kTcp}) {
    EXPECT_EQ(ParseEndpointKind(EndpointKindName(kind)), kind) << EndpointKindName(kind);
  }
  EXPECT_FALSE(ParseEndpointKind("rdma").has_value()) << "the words are exact";
  EXPECT_FALSE(ParseEndpointKind("UDP").has_value());
}

}  // namespace
}  // namespace rdmad
