// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl peers: the daemon's sessions with other hosts' rdmad, and their
// output (format_peers.h).

#include <cinttypes>
#include <cstdio>
#include <ctime>

#include "client/rdmactl/command.h"
#include "client/rdmactl/format.h"
#include "client/rdmactl/format_peers.h"

namespace rdmactl {
namespace {

std::string FormatRtt(double ms) {
  if (ms <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), ms < 10 ? "%.2f ms" : "%.1f ms", ms);
  return buf;
}

std::string FormatRemote(const rdmad::PeerInfo& p) {
  if (p.remote_host.empty()) return "-";
  return p.remote_host + " (rdmad " + Dash(p.remote_version) + ", protocol " +
         Dash(p.remote_protocol) + ")";
}

}  // namespace

std::string FormatPeerState(const rdmad::PeerInfo& p) {
  std::string name(rdmad::PeerStateName(p.state));
  if (p.state != rdmad::PeerState::kCircuitOpen || p.circuit_open_until_unix_ms <= 0) {
    return name;
  }
  std::time_t secs = std::time_t(p.circuit_open_until_unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%H:%M:%SZ", &tm);
  return name + " until " + buf;
}

std::string FormatAge(double seconds) {
  auto s = uint64_t(seconds < 0 ? 0 : seconds);
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof(buf), "%" PRIu64 "s", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof(buf), "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
  } else if (s < 86400) {
    std::snprintf(buf, sizeof(buf), "%" PRIu64 "h%02" PRIu64 "m", s / 3600, s / 60 % 60);
  } else {
    std::snprintf(buf, sizeof(buf), "%" PRIu64 "d %02" PRIu64 "h", s / 86400, s / 3600 % 24);
  }
  return buf;
}

std::string FormatPeers(const std::vector<rdmad::PeerInfo>& peers) {
  if (peers.empty()) return std::string(kNoPeersLine) + "\n";
  Table table({"NAME", "ADDRESS", "STATE", "RTT", "CHANNELS", "REMOTE", "SINCE", "LAST ERROR"});
  for (const rdmad::PeerInfo& p : peers) {
    std::string origin = p.origin.empty() ? "on demand" : p.origin;
    std::string name = p.configured ? p.name : p.name + " (" + origin + ")";
    table.AddRow({name, p.address, FormatPeerState(p), FormatRtt(p.rtt_ms),
                  std::to_string(p.channels), FormatRemote(p), FormatAge(p.state_seconds),
                  Dash(p.last_error)});
  }
  return table.Render();
}

Json PeersJson(const std::vector<rdmad::PeerInfo>& peers) {
  Json list = Json::array();
  for (const rdmad::PeerInfo& p : peers) list.push_back(RecordJson(p));
  return Json{{"peers", list}};
}

namespace {

int Peers(Context& ctx) {
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  auto peers = client->ListPeers();
  if (!peers.ok()) return ReportError(ctx, peers.status());
  if (ctx.globals.json) {
    PrintJson(ctx, PeersJson(*peers));
  } else {
    PrintText(ctx, FormatPeers(*peers));
  }
  return kExitOk;
}

}  // namespace

void DeclarePeers(CLI::App& verb, Context& ctx) {
  RunsWith(verb, ctx, [&ctx] { return Peers(ctx); });
}

}  // namespace rdmactl
