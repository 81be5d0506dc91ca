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
