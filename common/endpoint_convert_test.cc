// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/endpoint_convert.h"

#include "gtest/gtest.h"

namespace rdmad::internal {
namespace {

TEST(EndpointConvertTest, RdmaEndpointRoundTrips) {
  WireEndpoint e;
  e.rdma = RdmaEndpoint{};
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

TEST(EndpointConvertTest, GarbageIsInvalidArgumentNamingTheField) {
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

TEST(EndpointConvertTest, PlanFromPathCarriesTheLibraryKnobs) {
  v1::Path path;
  path.set_device("rxe0");
  path.set_port(1);
  path.set_gid_index(3);
  path.set_mtu(1024);
  path.mutable_qp()->set_type("RC");
  path.mutable_qp()->set_recv_depth(64);
  path.mutable_qp()->set_spin_us(0);
  path.mutable_qp()->set_relaxed_ordering(1);
  RdmaPlan plan = PlanFromPath(path);
  EXPECT_EQ(plan.device, "rxe0");
  EXPECT_EQ(plan.gid_index, 3u);
  EXPECT_EQ(plan.path_mtu_cap, 1024u);
  EXPECT_EQ(plan.qp.recv_depth, 64u);
  EXPECT_EQ(plan.spin_us, 0u);
  EXPECT_EQ(plan.relaxed_ordering, 1);
  EXPECT_EQ(plan.slot_size, 4096u);  // 0: the library's default
  path.mutable_qp()->set_slot_size(8192);
  EXPECT_EQ(PlanFromPath(path).slot_size, 8192u);
  path.mutable_qp()->set_relaxed_ordering(7);  // out of range: treated as auto
  EXPECT_EQ(PlanFromPath(path).relaxed_ordering, 2);
  path.set_mtu(0);  // unknown: the library's cap
  EXPECT_EQ(PlanFromPath(path).path_mtu_cap, 4096u);
}

}  // namespace
}  // namespace rdmad::internal
