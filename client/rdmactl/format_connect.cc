// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/format_connect.h"

#include <cinttypes>
#include <cstdio>

#include "client/rdmactl/format.h"

namespace rdmactl {
namespace {

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%#" PRIx64, v);
  return buf;
}

std::string Ms(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f ms", ms);
  return buf;
}

// "rxe0 port 1, GID 1 fe80::1 (RoCE v2), QPN 0x11".
std::string RdmaSide(const std::string& device, uint32_t port, uint32_t gid_index,
                     const std::string& gid, const std::string& gid_type, uint32_t qpn) {
  std::string text = Dash(device) + " port " + std::to_string(port) + ", GID " +
                     std::to_string(gid_index) + " " + Dash(gid);
  if (!gid_type.empty()) text += " (" + gid_type + ")";
  return text + ", QPN " + Hex(qpn);
}

std::string MtuText(const rdmad::ChannelInfo& i) {
  auto n = [](uint32_t v) { return v == 0 ? std::string("unknown") : std::to_string(v); };
  return n(i.mtu) + " (local active " + n(i.local_active_mtu) + ", peer active " +
         n(i.peer_active_mtu) + ")";
}

void AddQueues(const rdmad::ChannelInfo& i, Table* t) {
  if (i.send_depth == 0 && i.recv_depth == 0 && i.slot_size == 0) return;
  t->AddRow({"queues", "send depth " + std::to_string(i.send_depth) + ", recv depth " +
                           std::to_string(i.recv_depth) + ", slot " + std::to_string(i.slot_size) +
                           " bytes"});
}

// A value in the summary line's unit: µs with one decimal, or ms with three.
std::string InUnit(double us, bool ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), ms ? "%.3f" : "%.1f", ms ? us / 1000 : us);
  return buf;
}

}  // namespace

std::string FormatConnect(const rdmad::ChannelInfo& i, double round_trip_us, size_t size) {
  std::string text = "connected to " + i.peer + " (" + i.service +
                     "): " + rdmad::ChannelTransportName(i.transport) + ", channel " +
                     rdmad::FormatChannelId(i.id) + "\n";
  Table t({});
  t.AddRow({"why", Dash(i.transport_reason)});
  if (i.transport == rdmad::ChannelTransport::kRdma) {
    t.AddRow({"local", RdmaSide(i.local_device, i.local_port, i.local_gid_index, i.local_gid,
                                i.gid_type, i.local_qpn)});
    t.AddRow({"peer", RdmaSide(i.peer_device, i.peer_port, i.peer_gid_index, i.peer_gid, i.gid_type,
                               i.peer_qpn)});
    t.AddRow({"MTU", MtuText(i)});
  } else {
    t.AddRow({"local", Dash(i.tcp_local)});
    t.AddRow({"peer", Dash(i.tcp_peer)});
  }
  AddQueues(i, &t);
  t.AddRow({"handshake", Ms(i.handshake_ms)});
  t.AddRow({"round trip", FormatMicros(round_trip_us) + " (" + std::to_string(size) + " bytes)"});
  return text + Indent(t.Render(), "  ");
}

Json ChannelInfoJson(const rdmad::ChannelInfo& i) {
  return Json{{"id", rdmad::FormatChannelId(i.id)},
              {"peer", i.peer},
              {"service", i.service},
              {"transport", rdmad::ChannelTransportName(i.transport)},
              {"transport_reason", i.transport_reason},
              {"local_device", i.local_device},
              {"peer_device", i.peer_device},
              {"local_port", i.local_port},
              {"peer_port", i.peer_port},
              {"local_gid_index", i.local_gid_index},
              {"peer_gid_index", i.peer_gid_index},
              {"local_gid", i.local_gid},
              {"peer_gid", i.peer_gid},
              {"gid_type", i.gid_type},
              {"local_qpn", i.local_qpn},
              {"peer_qpn", i.peer_qpn},
              {"mtu", i.mtu},
              {"local_active_mtu", i.local_active_mtu},
              {"peer_active_mtu", i.peer_active_mtu},
              {"send_depth", i.send_depth},
              {"recv_depth", i.recv_depth},
              {"slot_size", i.slot_size},
              {"handshake_ms", i.handshake_ms},
              {"tcp_local", i.tcp_local},
              {"tcp_peer", i.tcp_peer}};
}

Json ConnectJson(const rdmad::ChannelInfo& info, double round_trip_us, size_t size) {
  return Json{{"channel", ChannelInfoJson(info)}, {"size", size}, {"round_trip_us", round_trip_us}};
}

std::string FormatPingHeader(const rdmad::ChannelInfo& i, size_t size) {
  return "PING " + i.peer + " (" + i.service + "): " + std::to_string(size) + " bytes over " +
         rdmad::ChannelTransportName(i.transport) + " (" + Dash(i.transport_reason) + ")\n";
}

std::string FormatPingReply(const rdmad::ChannelInfo& i, size_t size, uint64_t seq, double us) {
  char time[32];
  std::snprintf(time, sizeof(time), "%.3f ms", us / 1000);
  return std::to_string(size) + " bytes from " + i.peer + " (" +
         rdmad::ChannelTransportName(i.transport) + "): seq=" + std::to_string(seq) +
         " time=" + time + "\n";
}

std::string FormatPingSummary(const std::string& peer, const PingTally& t,
                              const LatencySummary& rtt) {
  char line[256];
  double loss = t.sent == 0 ? 0 : 100.0 * double(t.lost()) / double(t.sent);
  std::snprintf(line, sizeof(line),
                "%" PRIu64 " sent, %" PRIu64 " received, %" PRIu64 " lost (%.0f%%)", t.sent,
                t.received, t.lost(), loss);
  std::string text = "--- " + peer + " echo statistics ---\n" + line;
  if (t.corrupt > 0) text += ", " + std::to_string(t.corrupt) + " corrupt";
  text += ", time " + FormatMicros(t.elapsed_ms * 1000) + "\n";
  if (rtt.count == 0) return text;
  bool ms = rtt.max_us >= 1000;
  return text + "rtt min/avg/p50/p99/max = " + InUnit(rtt.min_us, ms) + "/" +
         InUnit(rtt.avg_us, ms) + "/" + InUnit(rtt.p50_us, ms) + "/" + InUnit(rtt.p99_us, ms) +
         "/" + InUnit(rtt.max_us, ms) + (ms ? " ms\n" : " µs\n");
}

Json LatencyJson(const LatencySummary& r) {
  return Json{{"min", r.min_us}, {"avg", r.avg_us},   {"p50", r.p50_us}, {"p90", r.p90_us},
              {"p99", r.p99_us}, {"p999", r.p999_us}, {"max", r.max_us}, {"stddev", r.stddev_us}};
}

Json PingJson(const rdmad::ChannelInfo& info, size_t size, uint64_t count, uint64_t interval_ms,
              const PingTally& t, const LatencyStats& samples) {
  return Json{{"channel", ChannelInfoJson(info)},
              {"size", size},
              {"count", count},
              {"interval_ms", interval_ms},
              {"sent", t.sent},
              {"received", t.received},
              {"lost", t.lost()},
              {"corrupt", t.corrupt},
              {"elapsed_ms", t.elapsed_ms},
              {"rtt_us", LatencyJson(samples.Summarize())},
              {"samples_us", samples.samples()}};
}

}  // namespace rdmactl
