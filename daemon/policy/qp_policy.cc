// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/policy/qp_policy.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace rdmad {
namespace {

// One integer attribute: its QpPlan field, its names and its range.
struct IntField {
  int QpPlan::*field;
  std::string_view name;        // as a peer sends it
  std::string_view config_key;  // as the config spells it
  int min;
  int max;
};

constexpr std::array<IntField, 13> kIntFields = {{
    {&QpPlan::timeout, "timeout", "qp.timeout", 0, 31},
    {&QpPlan::retry_cnt, "retry_cnt", "qp.retry_cnt", 0, 7},
    {&QpPlan::rnr_retry, "rnr_retry", "qp.rnr_retry", 0, 7},
    {&QpPlan::min_rnr_timer, "min_rnr_timer", "qp.min_rnr_timer", 0, 31},
    {&QpPlan::traffic_class, "traffic_class", "qp.traffic_class", 0, 255},
    {&QpPlan::service_level, "service_level", "qp.service_level", 0, 15},
    {&QpPlan::hop_limit, "hop_limit", "qp.hop_limit", 1, 255},
    {&QpPlan::max_inline, "max_inline", "qp.max_inline", 0, 1024},
    {&QpPlan::send_depth, "send_depth", "qp.send_depth", 1, 32768},
    {&QpPlan::recv_depth, "recv_depth", "qp.recv_depth", 3, 32768},
    {&QpPlan::qps_per_channel, "qps_per_channel", "qp.per_channel", 1, 1},
    {&QpPlan::spin_us, "spin_us", "qp.spin_us", 0, 1000000},
    {&QpPlan::relaxed_ordering, "relaxed_ordering", "qp.relaxed_ordering", 0, 2},
}};

// "" when every field is in range, else "<prefix><name> 40 is out of range
// 0..31" for the first field that is not.
std::string FirstRangeError(const QpPlan& qp, bool config_names, std::string_view prefix) {
  if (qp.type != "RC") {
    return std::string(prefix) + (config_names ? "qp.type" : "type") + " \"" + qp.type +
           "\" is not supported; only RC";
  }
  for (const IntField& f : kIntFields) {
    int value = qp.*f.field;
    if (value >= f.min && value <= f.max) continue;
    return std::string(prefix) + std::string(config_names ? f.config_key : f.name) + " " +
           std::to_string(value) + " is out of range " + std::to_string(f.min) + ".." +
           std::to_string(f.max);
  }
  return "";
}

// "67.1 ms" for a duration in microseconds.
std::string FormatMicros(double us) {
  char buf[32];
  if (us < 1000) {
    std::snprintf(buf, sizeof(buf), "%.1f us", us);
  } else if (us < 1e6) {
    std::snprintf(buf, sizeof(buf), "%.1f ms", us / 1e3);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f s", us / 1e6);
  }
  return buf;
}

// The local ACK timeout: 4.096 us * 2^timeout; 0 means infinite.
std::string TimeoutText(int timeout) {
  if (timeout == 0) return "infinite";
  return FormatMicros(4.096 * std::ldexp(1.0, timeout));
}

// The IB encoding of the RNR NAK timer (IBTA table 45), in milliseconds.
std::string MinRnrTimerText(int code) {
  static constexpr std::array<double, 32> kMillis = {
      655.36, 0.01,  0.02,  0.03,  0.04,  0.06,   0.08,   0.12,   0.16,   0.24,  0.32,
      0.48,   0.64,  0.96,  1.28,  1.92,  2.56,   3.84,   5.12,   7.68,   10.24, 15.36,
      20.48,  30.72, 40.96, 61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52};
  if (code < 0 || code > 31) return "invalid";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g ms", kMillis[code]);
  return buf;
}

}  // namespace

StatusOr<QpPlan> ResolveQpAttributes(const Config& config) {
  QpPlan qp;
  qp.type = config.qp.type.empty() ? "RC" : config.qp.type;
  qp.timeout = config.qp.timeout;
  qp.retry_cnt = config.qp.retry_cnt;
  qp.rnr_retry = config.qp.rnr_retry;
  qp.min_rnr_timer = config.qp.min_rnr_timer;
  qp.traffic_class = config.qp.traffic_class;
  qp.service_level = config.qp.service_level;
  qp.hop_limit = config.qp.hop_limit;
  qp.max_inline = config.qp.max_inline;
  qp.send_depth = config.qp.send_depth;
  qp.recv_depth = config.qp.recv_depth;
  qp.qps_per_channel = config.qp.per_channel;
  qp.spin_us = config.qp.spin_us;
  qp.slot_size = config.qp.slot_size;
  qp.relaxed_ordering = config.qp.relaxed_ordering;
  std::string error = FirstRangeError(qp, /*config_names=*/true, "");
  if (!error.empty()) return Status::InvalidArgument(error);
  return qp;
}

Status ValidatePeerQpAttributes(const QpPlan& qp) {
  std::string error = FirstRangeError(qp, /*config_names=*/false, "peer QP attribute ");
  if (!error.empty()) return Status::InvalidArgument(error);
  return Status::Ok();
}

std::string DescribeQpAttributes(const QpPlan& qp) {
  std::string rnr_retry = std::to_string(qp.rnr_retry);
  if (qp.rnr_retry == 7) rnr_retry += " (infinite)";
  return "QP " + qp.type + ": timeout " + std::to_string(qp.timeout) + " (" +
         TimeoutText(qp.timeout) + "), retry_cnt " + std::to_string(qp.retry_cnt) + ", rnr_retry " +
         rnr_retry + ", min_rnr_timer " + std::to_string(qp.min_rnr_timer) + " (" +
         MinRnrTimerText(qp.min_rnr_timer) + "), traffic_class " +
         std::to_string(qp.traffic_class) + ", service_level " + std::to_string(qp.service_level) +
         ", hop_limit " + std::to_string(qp.hop_limit) + ", max_inline " +
         std::to_string(qp.max_inline) + ", send/recv depth " + std::to_string(qp.send_depth) +
         "/" + std::to_string(qp.recv_depth) + ", " + std::to_string(qp.qps_per_channel) +
         " QP(s) per channel" + ", spin " + std::to_string(qp.spin_us) + " us, slot " +
         std::to_string(qp.slot_size) + " B, relaxed_ordering " +
         std::to_string(qp.relaxed_ordering);
}

}  // namespace rdmad
