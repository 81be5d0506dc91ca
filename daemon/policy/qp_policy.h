// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The queue pair attributes of a path: resolved from the config (qp.*) and
// checked again here (defence in depth: the config layer checked them too),
// and checked when a peer sends its own.
//
// Thread safety: pure functions over values, safe from any thread.

#ifndef RDMAD_DAEMON_POLICY_QP_POLICY_H_
#define RDMAD_DAEMON_POLICY_QP_POLICY_H_

#include <string>

#include "daemon/config/config.h"
#include "rdmad/status.h"

namespace rdmad {

// The full resolved QP attribute set. Ranges follow the verbs encodings.
struct QpPlan {
  std::string type = "RC";  // only RC for now
  int timeout = 14;         // 0..31: 4.096 us * 2^timeout; 0 infinite
  int retry_cnt = 6;        // 0..7 (rxe: 7 retries for ever)
  int rnr_retry = 7;        // 0..7; 7 infinite
  int min_rnr_timer = 12;   // 0..31 (IB encoding; 12 = 0.64 ms)
  int traffic_class = 0;    // 0..255
  int service_level = 0;    // 0..15
  int hop_limit = 64;       // 1..255
  int max_inline = 48;      // 0..1024 bytes (docs/configuration.md)
  int send_depth = 127;     // 1..32768 (2^k - 1: docs/configuration.md)
  int recv_depth = 31;      // 3..32768 (the channel's credit reserve)
  int qps_per_channel = 1;  // 1 (more QPs per channel: not yet)
  // Library knobs that travel with the plan (not QP attributes proper).
  int spin_us = 50;          // 0..1000000: poll before sleeping on the CQ
  int slot_size = 4096;      // bytes per receive slot (the peer's is not checked)
  int relaxed_ordering = 2;  // 0 off, 1 on if supported, 2 auto
  friend bool operator==(const QpPlan&, const QpPlan&) = default;
};

// The attributes config.qp asks for. INVALID_ARGUMENT naming the setting
// (e.g. "qp.timeout 40 is out of range 0..31") if one is out of range.
StatusOr<QpPlan> ResolveQpAttributes(const Config& config);

// Checks attributes received from a peer. INVALID_ARGUMENT naming the field
// and its range ("peer QP attribute retry_cnt 9 is out of range 0..7").
Status ValidatePeerQpAttributes(const QpPlan& qp);

// One line for logs and the API: "QP RC: timeout 14 (~67 ms), retry_cnt 7,
// rnr_retry 7 (infinite), min_rnr_timer 12 (0.64 ms), ...".
std::string DescribeQpAttributes(const QpPlan& qp);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_POLICY_QP_POLICY_H_
