// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The human output of `rdmactl route`.

#include "client/rdmactl/format.h"

namespace rdmactl {
namespace {

std::string MtuLine(const rdmad::Path& p) {
  std::string peer = p.peer_active_mtu == 0 ? "unknown" : std::to_string(p.peer_active_mtu);
  return std::to_string(p.mtu) + " (local active " + std::to_string(p.local_active_mtu) +
         ", peer " + peer + ", cap " + std::to_string(p.mtu_cap) + ")";
}

// The QP attributes over three lines: transport timers, addressing, queues.
std::vector<std::string> QpLines(const rdmad::QpAttributes& q) {
  auto n = [](uint32_t v) { return std::to_string(v); };
  return {
      Dash(q.type) + ": timeout " + n(q.timeout) + ", retry_cnt " + n(q.retry_cnt) +
          ", rnr_retry " + n(q.rnr_retry) + ", min_rnr_timer " + n(q.min_rnr_timer),
      "traffic_class " + n(q.traffic_class) + ", service_level " + n(q.service_level) +
          ", hop_limit " + n(q.hop_limit),
      "max_inline " + n(q.max_inline) + ", send_depth " + n(q.send_depth) + ", recv_depth " +
          n(q.recv_depth) + ", qps_per_channel " + n(q.qps_per_channel),
      "spin_us " + n(q.spin_us) + ", relaxed_ordering " + n(q.relaxed_ordering) + ", slot_size " +
          n(q.slot_size),
  };
}

void AddAddressing(const rdmad::Path& p, Table* t) {
  if (!p.gid.empty()) {
    t->AddRow({"GID", std::to_string(p.gid_index) + "  " + p.gid + " (" + Dash(p.gid_type) + ")"});
  } else if (p.transport == "iWARP") {
    t->AddRow({"GID", "none (iWARP: rdma_cm addresses the port by IP)"});
  }
  if (!p.source_ip.empty()) t->AddRow({"source IP", p.source_ip});
  if (!p.netdev.empty()) t->AddRow({"netdev", p.netdev});
  if (p.transport == "InfiniBand" || p.lid != 0) t->AddRow({"LID", std::to_string(p.lid)});
}

}  // namespace

std::string FormatPath(const std::string& peer, const rdmad::Path& p) {
  std::string text = "path to " + peer + ": " + Dash(p.transport) + " over " + p.device + " port " +
                     std::to_string(p.port) + "\n";
  Table t({});
  t.AddRow({"device", p.device});
  t.AddRow({"port", std::to_string(p.port)});
  t.AddRow({"transport", Dash(p.transport)});
  AddAddressing(p, &t);
  t.AddRow({"MTU", MtuLine(p)});
  std::vector<std::string> qp = QpLines(p.qp);
  for (size_t i = 0; i < qp.size(); ++i) t.AddRow({i == 0 ? "QP" : "", qp[i]});
  text += Indent(t.Render(), "  ");
  text += "why:\n";
  for (const std::string& reason : p.reasons) text += "  " + reason + "\n";
  return text;
}

}  // namespace rdmactl
