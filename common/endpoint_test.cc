// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/endpoint.h"

#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rdmad::internal {
namespace {

RdmaEndpoint GoodEndpoint() {
  RdmaEndpoint e;
  e.device = "rxe0";
  e.port = 1;
  e.qpn = 0x11;
  e.psn = 0xABCDEF;
  e.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1};
  e.gid_index = 1;
  e.gid_type = "RoCE v2";
  e.active_mtu = 1024;
  e.qp.type = "RC";
  e.qp.timeout = 14;
  e.qp.retry_cnt = 7;
  e.qp.rnr_retry = 7;
  e.qp.min_rnr_timer = 12;
  e.qp.hop_limit = 64;
  e.qp.max_inline = 64;
  e.qp.send_depth = 128;
  e.qp.recv_depth = 128;
  e.qp.qps_per_channel = 1;
  e.ring_address = 0x7f0000000000;
  e.ring_rkey = 0x1234;
  e.ring_slots = 128;
  e.slot_size = 65536;
  e.credits = 128;
  return e;
}

TEST(ValidateRdmaEndpointTest, AcceptsAGoodEndpoint) {
  EXPECT_TRUE(ValidateRdmaEndpoint(GoodEndpoint()).ok());
  RdmaEndpoint ib = GoodEndpoint();
  ib.gid_type = "IB";
  ib.gid = {};
  ib.lid = 5;
  EXPECT_TRUE(ValidateRdmaEndpoint(ib).ok()) << ValidateRdmaEndpoint(ib).ToString();
  RdmaEndpoint edges = GoodEndpoint();
  edges.qpn = 0xFFFFFF;
  edges.psn = 0;
  edges.ring_slots = 3;
  edges.credits = 2;
  edges.qp.max_inline = 0;
  EXPECT_TRUE(ValidateRdmaEndpoint(edges).ok()) << ValidateRdmaEndpoint(edges).ToString();
}

struct BadCase {
  std::string name;
  std::function<void(RdmaEndpoint&)> mutate;
  std::string expect;  // a piece of the message
};

TEST(ValidateRdmaEndpointTest, RejectsBadFieldsNamingThem) {
  const std::vector<BadCase> cases = {
      {"qpn over 24 bits", [](RdmaEndpoint& e) { e.qpn = 0x1000000; },
       "qpn 0x1000000 does not fit 24 bits"},
      {"qpn 0", [](RdmaEndpoint& e) { e.qpn = 0; }, "qpn 0x0"},
      {"qpn 1", [](RdmaEndpoint& e) { e.qpn = 1; }, "reserved"},
      {"psn over 24 bits", [](RdmaEndpoint& e) { e.psn = 0x1000000; },
       "psn 0x1000000 does not fit 24 bits"},
      {"mtu 1500", [](RdmaEndpoint& e) { e.active_mtu = 1500; },
       "active_mtu 1500 is not an IB MTU"},
      {"mtu 0", [](RdmaEndpoint& e) { e.active_mtu = 0; }, "active_mtu 0"},
      {"mtu 8192", [](RdmaEndpoint& e) { e.active_mtu = 8192; }, "active_mtu 8192"},
      {"port 0", [](RdmaEndpoint& e) { e.port = 0; }, "port 0"},
      {"gid index 256", [](RdmaEndpoint& e) { e.gid_index = 256; }, "gid_index 256"},
      {"zero RoCE gid", [](RdmaEndpoint& e) { e.gid = {}; }, "gid is all zeros"},
      {"unknown gid type", [](RdmaEndpoint& e) { e.gid_type = "iWARP"; }, "gid_type \"iWARP\""},
      {"IB without lid",
       [](RdmaEndpoint& e) {
         e.gid_type = "IB";
         e.lid = 0;
       },
       "lid 0x0"},
      {"IB multicast lid",
       [](RdmaEndpoint& e) {
         e.gid_type = "IB";
         e.lid = 0xC000;
       },
       "lid 0xc000"},
      {"zero slots", [](RdmaEndpoint& e) { e.ring_slots = 0; }, "ring_slots 0 is out of range"},
      {"two slots",
       [](RdmaEndpoint& e) {
         e.ring_slots = 2;
         e.credits = 2;
       },
       "ring_slots 2 is out of range 3..32768"},
      {"too many slots", [](RdmaEndpoint& e) { e.ring_slots = 40000; }, "ring_slots 40000"},
      {"tiny slot", [](RdmaEndpoint& e) { e.slot_size = 16; }, "slot_size 16"},
      {"zero slot size", [](RdmaEndpoint& e) { e.slot_size = 0; }, "slot_size 0"},
      {"credits over slots", [](RdmaEndpoint& e) { e.credits = 129; }, "credits 129"},
      {"zero credits", [](RdmaEndpoint& e) { e.credits = 0; }, "credits 0"},
      {"no ring address", [](RdmaEndpoint& e) { e.ring_address = 0; }, "ring_address"},
      {"UD", [](RdmaEndpoint& e) { e.qp.type = "UD"; }, "QP type \"UD\""},
      {"timeout 32", [](RdmaEndpoint& e) { e.qp.timeout = 32; },
       "timeout 32 is out of range 0..31"},
      {"retry_cnt 8", [](RdmaEndpoint& e) { e.qp.retry_cnt = 8; },
       "retry_cnt 8 is out of range 0..7"},
      {"rnr_retry 9", [](RdmaEndpoint& e) { e.qp.rnr_retry = 9; }, "rnr_retry 9"},
      {"min_rnr_timer 32", [](RdmaEndpoint& e) { e.qp.min_rnr_timer = 32; }, "min_rnr_timer 32"},
      {"traffic_class 256", [](RdmaEndpoint& e) { e.qp.traffic_class = 256; }, "traffic_class 256"},
      {"service_level 16", [](RdmaEndpoint& e) { e.qp.service_level = 16; }, "service_level 16"},
      {"hop_limit 0", [](RdmaEndpoint& e) { e.qp.hop_limit = 0; },
       "hop_limit 0 is out of range 1..255"},
      {"max_inline 2048", [](RdmaEndpoint& e) { e.qp.max_inline = 2048; }, "max_inline 2048"},
      {"send_depth 0", [](RdmaEndpoint& e) { e.qp.send_depth = 0; }, "send_depth 0"},
      {"recv_depth 40000", [](RdmaEndpoint& e) { e.qp.recv_depth = 40000; }, "recv_depth 40000"},
      {"qps_per_channel 0", [](RdmaEndpoint& e) { e.qp.qps_per_channel = 0; }, "qps_per_channel 0"},
      {"responder_resources 256", [](RdmaEndpoint& e) { e.responder_resources = 256; },
       "responder_resources 256 > 255"},
      {"a rail's responder_resources 300",
       [](RdmaEndpoint& e) {
         RailEndpoint r;
         r.device = "rxe1";
         r.qpn = 0x22;
         r.gid = e.gid;
         r.gid_index = 1;
         r.gid_type = "RoCE v2";
         r.active_mtu = 1024;
         r.responder_resources = 300;
         e.rails = {r};
       },
       "rail 1 (rxe1): responder_resources 300 > 255"},
  };
  for (const BadCase& c : cases) {
    RdmaEndpoint e = GoodEndpoint();
    c.mutate(e);
    Status s = ValidateRdmaEndpoint(e);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.name << ": " << s.ToString();
    EXPECT_NE(s.message().find(c.expect), std::string::npos)
        << c.name << ": \"" << s.message() << "\" lacks \"" << c.expect << "\"";
  }
}

TEST(NegotiatedMtuTest, TakesTheSmallest) {
  EXPECT_EQ(NegotiatedMtu(4096, 4096, 4096), 4096u);
  EXPECT_EQ(NegotiatedMtu(4096, 1024, 4096), 1024u);
  EXPECT_EQ(NegotiatedMtu(4096, 4096, 2048), 2048u);
  EXPECT_EQ(NegotiatedMtu(512, 4096, 4096), 512u);
  EXPECT_EQ(NegotiatedMtu(256, 1024, 1024), 256u);
  // Both ends get the same answer whichever side computes it.
  EXPECT_EQ(NegotiatedMtu(4096, 2048, 1024), NegotiatedMtu(4096, 1024, 2048));
}

// A peer QP with fewer responder resources than this device's initiator
// depth caps it: more READs in flight would be refused by its HCA.
TEST(NegotiatedReadDepthTest, TakesThePeersResponderResourcesAsACap) {
  EXPECT_EQ(NegotiatedReadDepth(16, 16), 16u);
  EXPECT_EQ(NegotiatedReadDepth(16, 4), 4u);
  EXPECT_EQ(NegotiatedReadDepth(2, 16), 2u);
  EXPECT_EQ(NegotiatedReadDepth(16, 0), 16u) << "a peer that does not say: our own limit";
  EXPECT_EQ(NegotiatedReadDepth(0, 0), 1u);
}

TEST(NegotiatedMtuTest, RoundsDownToAnIbMtuAndIgnoresUnknowns) {
  EXPECT_EQ(NegotiatedMtu(1500, 4096, 4096), 1024u);
  EXPECT_EQ(NegotiatedMtu(9000, 4096, 4096), 4096u);
  EXPECT_EQ(NegotiatedMtu(100, 4096, 4096), 256u);
  EXPECT_EQ(NegotiatedMtu(0, 2048, 4096), 2048u);
  EXPECT_EQ(NegotiatedMtu(4096, 0, 1024), 1024u);
  EXPECT_EQ(NegotiatedMtu(0, 0, 0), 1024u);
}

}  // namespace
}  // namespace rdmad::internal

namespace rdmad::internal {
namespace {

RailEndpoint Rail(const std::string& device, uint8_t a, uint8_t b, uint8_t c, uint8_t d,
                  uint32_t prefix) {
  RailEndpoint r;
  r.device = device;
  r.qpn = 0x22;
  r.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d};
  r.gid_index = 1;
  r.gid_type = "RoCE v2";
  r.active_mtu = 1024;
  r.prefix_len = prefix;
  r.device_tag = 7;
  return r;
}

TEST(PairRailsTest, PairsRailsOnTheSameSubnetInTheInitiatorsOrder) {
  // The lab's two rails: 192.0.2.0/25 and 192.0.2.128/25, listed in
  // opposite orders on the two sides.
  std::vector<RailEndpoint> initiator = {Rail("rxe1", 192, 0, 2, 129, 25),
                                         Rail("rxe2", 192, 0, 2, 1, 25)};
  std::vector<RailEndpoint> acceptor = {Rail("mlx5_0", 192, 0, 2, 2, 25),
                                        Rail("mlx5_1", 192, 0, 2, 130, 25)};
  auto pairs = PairRails(initiator, acceptor);
  ASSERT_EQ(pairs.size(), 2u);
  EXPECT_EQ(pairs[0], std::make_pair(0u, 1u));
  EXPECT_EQ(pairs[1], std::make_pair(1u, 0u));
}

TEST(PairRailsTest, LeavesOutRailsWithoutAPeerOnTheirSubnet) {
  std::vector<RailEndpoint> initiator = {Rail("a", 10, 0, 0, 1, 24), Rail("b", 10, 0, 1, 1, 24)};
  std::vector<RailEndpoint> acceptor = {Rail("c", 10, 0, 1, 2, 24)};
  auto pairs = PairRails(initiator, acceptor);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_EQ(pairs[0], std::make_pair(1u, 0u));
  // Each rail pairs once.
  EXPECT_EQ(PairRails({Rail("a", 10, 0, 1, 1, 24), Rail("b", 10, 0, 1, 3, 24)}, acceptor).size(),
            1u);
  // An unknown prefix (0) matches any address; RoCE v1 never pairs with v2.
  std::vector<RailEndpoint> any = {Rail("x", 10, 9, 9, 9, 0)};
  EXPECT_EQ(PairRails(any, {Rail("y", 10, 7, 7, 7, 0)}).size(), 1u);
  RailEndpoint v1 = Rail("z", 10, 7, 7, 7, 0);
  v1.gid_type = "RoCE v1";
  EXPECT_TRUE(PairRails(any, {v1}).empty());
  EXPECT_TRUE(PairRails({}, acceptor).empty());
}

TEST(ValidateRdmaEndpointTest, ChecksEveryRail) {
  RdmaEndpoint e = GoodEndpoint();
  e.rails.push_back(Rail("rxe1", 192, 0, 2, 129, 25));
  EXPECT_TRUE(ValidateRdmaEndpoint(e).ok()) << ValidateRdmaEndpoint(e).ToString();
  auto message = [&](const std::function<void(RailEndpoint&)>& mutate) {
    RdmaEndpoint bad = e;
    mutate(bad.rails[0]);
    Status s = ValidateRdmaEndpoint(bad);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    return s.message();
  };
  EXPECT_NE(message([](RailEndpoint& r) { r.qpn = 1; }).find("rail 1 (rxe1): qpn"),
            std::string::npos);
  EXPECT_NE(message([](RailEndpoint& r) { r.active_mtu = 1500; }).find("active_mtu"),
            std::string::npos);
  EXPECT_NE(message([](RailEndpoint& r) { r.prefix_len = 33; }).find("prefix_len"),
            std::string::npos);
  EXPECT_NE(message([](RailEndpoint& r) { r.weight = 0; }).find("weight"), std::string::npos);
  EXPECT_NE(message([](RailEndpoint& r) { r.gid = {}; }).find("rail 1 (rxe1): gid is all zeros"),
            std::string::npos);
  EXPECT_NE(message([](RailEndpoint& r) { r.pair = 7; }).find("pair"), std::string::npos);
  RdmaEndpoint many = e;
  many.rails.assign(kMaxRails, e.rails[0]);
  EXPECT_NE(ValidateRdmaEndpoint(many).message().find("at most 7"), std::string::npos);
}

}  // namespace
}  // namespace rdmad::internal
