// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ResolveQpAttributes, ValidatePeerQpAttributes and DescribeQpAttributes.

#include "daemon/policy/qp_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace rdmad {
namespace {

using ::testing::HasSubstr;

TEST(QpPolicyTest, DefaultConfigGivesTheDefaultAttributes) {
  StatusOr<QpPlan> qp = ResolveQpAttributes(DefaultConfig());
  ASSERT_TRUE(qp.ok()) << qp.status().ToString();
  EXPECT_EQ(qp->type, "RC");
  EXPECT_EQ(qp->timeout, 14);
  EXPECT_EQ(qp->retry_cnt, 6);
  EXPECT_EQ(qp->rnr_retry, 7);
  EXPECT_EQ(qp->min_rnr_timer, 12);
  EXPECT_EQ(qp->traffic_class, 0);
  EXPECT_EQ(qp->service_level, 0);
  EXPECT_EQ(qp->hop_limit, 64);
  EXPECT_EQ(qp->max_inline, 48);
  EXPECT_EQ(qp->send_depth, 127);
  EXPECT_EQ(qp->recv_depth, 31);
  EXPECT_EQ(qp->qps_per_channel, 1);
  EXPECT_EQ(qp->spin_us, 50);
  EXPECT_EQ(qp->relaxed_ordering, 2);
  EXPECT_EQ(*qp, QpPlan());
}

TEST(QpPolicyTest, EveryTomlSettingReachesItsAttribute) {
  StatusOr<Config> config = ParseConfig(
      "[qp]\ntype = \"RC\"\ntimeout = 20\nretry_cnt = 3\nrnr_retry = 5\n"
      "min_rnr_timer = 18\ntraffic_class = 106\nservice_level = 3\n"
      "hop_limit = 8\nmax_inline = 0\nsend_depth = 1024\nrecv_depth = 512\n"
      "per_channel = 1\nspin_us = 0\nrelaxed_ordering = 1\nslot_size = 4096\n",
      "t.toml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  StatusOr<QpPlan> qp = ResolveQpAttributes(*config);
  ASSERT_TRUE(qp.ok()) << qp.status().ToString();
  QpPlan want;
  want.timeout = 20;
  want.retry_cnt = 3;
  want.rnr_retry = 5;
  want.min_rnr_timer = 18;
  want.traffic_class = 106;
  want.service_level = 3;
  want.hop_limit = 8;
  want.max_inline = 0;
  want.send_depth = 1024;
  want.recv_depth = 512;
  want.spin_us = 0;
  want.relaxed_ordering = 1;
  want.slot_size = 4096;
  EXPECT_EQ(*qp, want);
}

TEST(QpPolicyTest, EmptyTypeMeansRc) {
  Config config = DefaultConfig();
  config.qp.type = "";
  StatusOr<QpPlan> qp = ResolveQpAttributes(config);
  ASSERT_TRUE(qp.ok());
  EXPECT_EQ(qp->type, "RC");
}

// One attribute set to one value, in the config and as a peer sends it.
struct RangeCase {
  std::string name;
  std::function<void(Config::Qp*)> set_config;
  std::function<void(QpPlan*)> set_peer;
  std::string config_error;  // "" accepted
  std::string peer_error;    // "" accepted
};
void PrintTo(const RangeCase& c, std::ostream* os) { *os << c.name; }

// A case for the integer field that the config calls config_key and a peer
// calls peer_key.
#define RDMAD_QP_CASE(name, cfg_field, peer_field, value, cfg_err, peer_err)                     \
  RangeCase {                                                                                    \
    name, [](Config::Qp* q) { q->cfg_field = value; }, [](QpPlan* q) { q->peer_field = value; }, \
        cfg_err, peer_err                                                                        \
  }

std::vector<RangeCase> RangeCases() {
  const std::string p = "peer QP attribute ";
  return {
      RDMAD_QP_CASE("TimeoutMax", timeout, timeout, 31, "", ""),
      RDMAD_QP_CASE("TimeoutZeroInfinite", timeout, timeout, 0, "", ""),
      RDMAD_QP_CASE("TimeoutTooBig", timeout, timeout, 32, "qp.timeout 32 is out of range 0..31",
                    p + "timeout 32 is out of range 0..31"),
      RDMAD_QP_CASE("TimeoutNegative", timeout, timeout, -1, "qp.timeout -1 is out of range 0..31",
                    p + "timeout -1 is out of range 0..31"),
      RDMAD_QP_CASE("RetryCntTooBig", retry_cnt, retry_cnt, 8,
                    "qp.retry_cnt 8 is out of range 0..7", p + "retry_cnt 8 is out of range 0..7"),
      RDMAD_QP_CASE("RetryCntZero", retry_cnt, retry_cnt, 0, "", ""),
      RDMAD_QP_CASE("RnrRetryTooBig", rnr_retry, rnr_retry, 8,
                    "qp.rnr_retry 8 is out of range 0..7", p + "rnr_retry 8 is out of range 0..7"),
      RDMAD_QP_CASE("MinRnrTimerTooBig", min_rnr_timer, min_rnr_timer, 32,
                    "qp.min_rnr_timer 32 is out of range 0..31",
                    p + "min_rnr_timer 32 is out of range 0..31"),
      RDMAD_QP_CASE("TrafficClassMax", traffic_class, traffic_class, 255, "", ""),
      RDMAD_QP_CASE("TrafficClassTooBig", traffic_class, traffic_class, 256,
                    "qp.traffic_class 256 is out of range 0..255",
                    p + "traffic_class 256 is out of range 0..255"),
      RDMAD_QP_CASE("ServiceLevelTooBig", service_level, service_level, 16,
                    "qp.service_level 16 is out of range 0..15",
                    p + "service_level 16 is out of range 0..15"),
      RDMAD_QP_CASE("HopLimitZero", hop_limit, hop_limit, 0,
                    "qp.hop_limit 0 is out of range 1..255",
                    p + "hop_limit 0 is out of range 1..255"),
      RDMAD_QP_CASE("HopLimitTooBig", hop_limit, hop_limit, 256,
                    "qp.hop_limit 256 is out of range 1..255",
                    p + "hop_limit 256 is out of range 1..255"),
      RDMAD_QP_CASE("MaxInlineTooBig", max_inline, max_inline, 1025,
                    "qp.max_inline 1025 is out of range 0..1024",
                    p + "max_inline 1025 is out of range 0..1024"),
      RDMAD_QP_CASE("SendDepthZero", send_depth, send_depth, 0,
                    "qp.send_depth 0 is out of range 1..32768",
                    p + "send_depth 0 is out of range 1..32768"),
      RDMAD_QP_CASE("SendDepthMax", send_depth, send_depth, 32768, "", ""),
      RDMAD_QP_CASE("RecvDepthTooBig", recv_depth, recv_depth, 32769,
                    "qp.recv_depth 32769 is out of range 3..32768",
                    p + "recv_depth 32769 is out of range 3..32768"),
      RDMAD_QP_CASE("RecvDepthBelowCreditReserve", recv_depth, recv_depth, 2,
                    "qp.recv_depth 2 is out of range 3..32768",
                    p + "recv_depth 2 is out of range 3..32768"),
      RDMAD_QP_CASE("PerChannelZero", per_channel, qps_per_channel, 0,
                    "qp.per_channel 0 is out of range 1..1",
                    p + "qps_per_channel 0 is out of range 1..1"),
      RDMAD_QP_CASE("PerChannelTwoNotYet", per_channel, qps_per_channel, 2,
                    "qp.per_channel 2 is out of range 1..1",
                    p + "qps_per_channel 2 is out of range 1..1"),
      RDMAD_QP_CASE("SpinZero", spin_us, spin_us, 0, "", ""),
      RDMAD_QP_CASE("SpinTooLong", spin_us, spin_us, 1000001,
                    "qp.spin_us 1000001 is out of range 0..1000000",
                    p + "spin_us 1000001 is out of range 0..1000000"),
      RDMAD_QP_CASE("RelaxedOrderingThree", relaxed_ordering, relaxed_ordering, 3,
                    "qp.relaxed_ordering 3 is out of range 0..2",
                    p + "relaxed_ordering 3 is out of range 0..2"),
      RangeCase{"TypeUd", [](Config::Qp* q) { q->type = "UD"; }, [](QpPlan* q) { q->type = "UD"; },
                "qp.type \"UD\" is not supported; only RC",
                p + "type \"UD\" is not supported; only RC"},
  };
}

#undef RDMAD_QP_CASE

class QpPolicyRangeTest : public ::testing::TestWithParam<RangeCase> {};

TEST_P(QpPolicyRangeTest, ConfigValue) {
  const RangeCase& c = GetParam();
  Config config = DefaultConfig();
  c.set_config(&config.qp);
  StatusOr<QpPlan> qp = ResolveQpAttributes(config);
  if (c.config_error.empty()) {
    ASSERT_TRUE(qp.ok()) << qp.status().ToString();
    QpPlan want;
    c.set_peer(&want);  // the same field, as QpPlan spells it
    EXPECT_EQ(*qp, want);
    return;
  }
  ASSERT_FALSE(qp.ok());
  EXPECT_EQ(qp.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(qp.status().message(), c.config_error);
}

TEST_P(QpPolicyRangeTest, PeerValue) {
  const RangeCase& c = GetParam();
  QpPlan qp;
  c.set_peer(&qp);
  Status status = ValidatePeerQpAttributes(qp);
  if (c.peer_error.empty()) {
    EXPECT_TRUE(status.ok()) << status.ToString();
    return;
  }
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), c.peer_error);
}

INSTANTIATE_TEST_SUITE_P(Table, QpPolicyRangeTest, ::testing::ValuesIn(RangeCases()),
                         [](const auto& info) { return info.param.name; });

TEST(QpPolicyTest, DefaultsPassPeerValidation) {
  EXPECT_TRUE(ValidatePeerQpAttributes(QpPlan()).ok());
}

TEST(QpPolicyTest, DescribeDefaults) {
  // 4.096 us * 2^14 = 67.1 ms; RNR timer code 12 is 0.64 ms (IBTA).
  EXPECT_EQ(DescribeQpAttributes(QpPlan()),
            "QP RC: timeout 14 (67.1 ms), retry_cnt 6, rnr_retry 7 "
            "(infinite), min_rnr_timer 12 (0.64 ms), traffic_class 0, "
            "service_level 0, hop_limit 64, max_inline 48, send/recv depth "
            "127/31, 1 QP(s) per channel, spin 50 us, slot 4096 B, "
            "relaxed_ordering 2");
}

TEST(QpPolicyTest, DescribeTimersAndRetries) {
  struct Case {
    std::string name;
    std::function<void(QpPlan*)> set;
    std::string contains;
  };
  for (const Case& c : std::vector<Case>{
           {"TimeoutZeroIsInfinite", [](QpPlan* q) { q->timeout = 0; }, "timeout 0 (infinite)"},
           {"Timeout1Micros", [](QpPlan* q) { q->timeout = 1; }, "timeout 1 (8.2 us)"},  // 8.192 us
           {"Timeout8Millis", [](QpPlan* q) { q->timeout = 8; },
            "timeout 8 (1.0 ms)"},  // 1048.576 us
           {"Timeout18Seconds", [](QpPlan* q) { q->timeout = 18; },
            "timeout 18 (1.1 s)"},  // 1.07 s
           {"RnrRetryFiniteHasNoNote", [](QpPlan* q) { q->rnr_retry = 6; }, "rnr_retry 6, "},
           {"RnrTimerZeroIsTheLongest", [](QpPlan* q) { q->min_rnr_timer = 0; },
            "min_rnr_timer 0 (655.36 ms)"},
           {"RnrTimerOne", [](QpPlan* q) { q->min_rnr_timer = 1; }, "min_rnr_timer 1 (0.01 ms)"},
           {"RnrTimer31", [](QpPlan* q) { q->min_rnr_timer = 31; }, "min_rnr_timer 31 (491.52 ms)"},
           {"SpinAndRelaxedOrdering",
            [](QpPlan* q) {
              q->spin_us = 0;
              q->relaxed_ordering = 1;
            },
            "spin 0 us, slot 4096 B, relaxed_ordering 1"},
           {"SlotSize", [](QpPlan* q) { q->slot_size = 8192; }, "slot 8192 B"},
       }) {
    SCOPED_TRACE(c.name);
    QpPlan qp;
    c.set(&qp);
    std::string text = DescribeQpAttributes(qp);
    EXPECT_THAT(text, HasSubstr(c.contains));
    EXPECT_EQ(text.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace rdmad
