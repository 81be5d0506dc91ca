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
  e.rdma->responder_resources = 16;
  e.transport_reason = "why";
  v1::Endpoint wire;
  ToProto(e, &wire);
  auto back = FromProto(wire);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back.value().rdma->qpn, 0x123456u);
  EXPECT_EQ(back.value().rdma->gid[15], 9);
  EXPECT_EQ(back.value().rdma->qp.hop_limit, 64u);
  EXPECT_EQ(back.value().rdma->credits, 64u);
  EXPECT_EQ(back.value().rdma->responder_resources, 16u);
  EXPECT_EQ(back.value().transport_reason, "why");
  EXPECT_FALSE(back.value().tcp.has_value());
}

TEST(EndpointConvertTest, RailsRoundTrip) {
  WireEndpoint e;
  e.rdma = RdmaEndpoint{};
  e.rdma->gid[15] = 1;
  e.rdma->device_tag = 0x1111;
  RailEndpoint r;
  r.device = "rxe1";
  r.port = 1;
  r.qpn = 0x42;
  r.psn = 0x77;
  r.gid[15] = 2;
  r.gid_index = 3;
  r.gid_type = "RoCE v2";
  r.active_mtu = 4096;
  r.prefix_len = 25;
  r.weight = 100;
  r.device_tag = 0x2222;
  r.pair = 1;
  r.responder_resources = 4;
  e.rdma->rails = {r, r};
  v1::Endpoint wire;
  ToProto(e, &wire);
  auto back = FromProto(wire);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->rdma->device_tag, 0x1111u);
  ASSERT_EQ(back->rdma->rails.size(), 2u);
  const RailEndpoint& b = back->rdma->rails[1];
  EXPECT_EQ(b.device, "rxe1");
  EXPECT_EQ(b.qpn, 0x42u);
  EXPECT_EQ(b.psn, 0x77u);
  EXPECT_EQ(b.gid, r.gid);
  EXPECT_EQ(b.gid_index, 3u);
  EXPECT_EQ(b.gid_type, "RoCE v2");
  EXPECT_EQ(b.active_mtu, 4096u);
  EXPECT_EQ(b.prefix_len, 25u);
  EXPECT_EQ(b.weight, 100u);
  EXPECT_EQ(b.device_tag, 0x2222u);
  EXPECT_EQ(b.pair, 1u);
  EXPECT_EQ(b.responder_resources, 4u);
  // More rails than a channel has, or a rail's short GID: refused.
  for (int i = 0; i < 6; ++i) *wire.mutable_rdma()->add_rails() = wire.rdma().rails(0);
  EXPECT_NE(FromProto(wire).status().message().find("at most 7"), std::string::npos);
  v1::Endpoint short_gid;
  short_gid.mutable_rdma()->set_gid(std::string(16, '\1'));
  short_gid.mutable_rdma()->add_rails()->set_gid("x");
  EXPECT_NE(FromProto(short_gid).status().message().find("rail's gid is 1 bytes"),
            std::string::npos);
}

TEST(EndpointConvertTest, PlanFromChannelPlanCarriesTheRails) {
  v1::ChannelPlan plan;
  plan.mutable_path()->set_device("rxe0");
  plan.set_weight(25);
  v1::RailPath* rail = plan.add_rails();
  rail->set_device("rxe1");
  rail->set_port(1);
  rail->set_gid_index(1);
  rail->set_prefix_len(25);
  rail->set_weight(0);  // unknown: 1
  for (int i = 0; i < 9; ++i) *plan.add_rails() = *rail;
  RdmaPlan out = PlanFromChannelPlan(plan);
  EXPECT_EQ(out.device, "rxe0");
  EXPECT_EQ(out.weight, 25u);
  ASSERT_EQ(out.rails.size(), kMaxRails - 1);
  EXPECT_EQ(out.rails[0].device, "rxe1");
  EXPECT_EQ(out.rails[0].prefix_len, 25u);
  EXPECT_EQ(out.rails[0].weight, 1u);
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
