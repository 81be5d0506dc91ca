// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/top_view.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <utility>

#include "client/rdmactl/format.h"

namespace rdmactl {
namespace {

using Traffic = rdmad::ChannelTraffic;

uint64_t Since(uint64_t now, uint64_t before) { return now > before ? now - before : 0; }

// What a channel moved between the samples (all of it when it is new).
Traffic Delta(const rdmad::ChannelSummary& now, const rdmad::ChannelSummary* before) {
  Traffic d = now.traffic;
  if (before == nullptr) return d;
  const Traffic& b = before->traffic;
  d.messages_sent = Since(d.messages_sent, b.messages_sent);
  d.bytes_sent = Since(d.bytes_sent, b.bytes_sent);
  d.messages_received = Since(d.messages_received, b.messages_received);
  d.bytes_received = Since(d.bytes_received, b.bytes_received);
  d.writes = Since(d.writes, b.writes);
  d.bytes_written = Since(d.bytes_written, b.bytes_written);
  d.reads = Since(d.reads, b.reads);
  d.bytes_read = Since(d.bytes_read, b.bytes_read);
  return d;
}

TopRates Rates(const Traffic& d, double seconds) {
  TopRates r;
  r.tx_bytes = double(d.bytes_sent + d.bytes_written) / seconds;
  r.rx_bytes = double(d.bytes_received + d.bytes_read) / seconds;
  r.messages = double(d.messages_sent + d.messages_received) / seconds;
  r.operations = double(d.writes + d.reads) / seconds;
  return r;
}

void AddRates(TopRates& sum, const TopRates& r) {
  sum.tx_bytes += r.tx_bytes;
  sum.rx_bytes += r.rx_bytes;
  sum.messages += r.messages;
  sum.operations += r.operations;
}

// Each rail's bytes per second: see the header.
void AddRails(const rdmad::ChannelSummary& now, const rdmad::ChannelSummary* before,
              const Traffic& d, double seconds,
              std::map<std::pair<std::string, std::string>, TopRailRow>* rails) {
  bool established = now.state == "established";
  if (now.rails.empty()) {
    TopRailRow& row = (*rails)[{"TCP", ""}];
    row.device = "TCP";
    row.channels += established;
    row.bytes += double(d.bytes_sent + d.bytes_received + d.bytes_written + d.bytes_read) / seconds;
    return;
  }
  for (size_t i = 0; i < now.rails.size(); ++i) {
    const rdmad::ChannelRail& r = now.rails[i];
    TopRailRow& row = (*rails)[{r.local_device, r.peer_device}];
    row.device = r.local_device;
    row.peer_device = r.peer_device;
    row.channels += established;
    row.down += established && !r.up;
    uint64_t moved = 0;
    if (now.rails.size() == 1) {
      moved = d.bytes_sent + d.bytes_received + d.bytes_written + d.bytes_read;
    } else {
      const rdmad::ChannelRail* was =
          before != nullptr && i < before->rails.size() ? &before->rails[i] : nullptr;
      moved = Since(r.bytes_written, was ? was->bytes_written : 0) +
              Since(r.bytes_read, was ? was->bytes_read : 0);
      if (i == 0) moved += d.bytes_sent + d.bytes_received;
    }
    row.bytes += double(moved) / seconds;
  }
}

}  // namespace

TopView ComputeTopView(const TopSample& before, const TopSample& now) {
  TopView v;
  v.interval_s = std::max(1e-3, std::chrono::duration<double>(now.at - before.at).count());
  v.version = now.status.version;
  v.uptime_seconds = now.status.uptime_seconds;
  std::map<std::string, size_t> peer_index;
  for (const rdmad::PeerInfo& p : now.peers) {
    ++v.peers;
    v.peers_up += p.state == rdmad::PeerState::kUp;
    peer_index[p.name] = v.peer_rows.size();
    v.peer_rows.push_back({p.name, std::string(rdmad::PeerStateName(p.state)), p.rtt_ms, 0, {}});
  }
  std::map<uint64_t, const rdmad::ChannelSummary*> earlier;
  for (const rdmad::ChannelSummary& c : before.channels) earlier[c.id] = &c;
  std::map<std::pair<std::string, std::string>, TopRailRow> rails;
  std::map<std::string, TopPeerRow> other_peers;
  for (const rdmad::ChannelSummary& c : now.channels) {
    auto it = earlier.find(c.id);
    const rdmad::ChannelSummary* was = it == earlier.end() ? nullptr : it->second;
    Traffic d = Delta(c, was);
    TopRates r = Rates(d, v.interval_s);
    bool established = c.state == "established";
    v.established += established;
    v.rdma += established && c.transport == "RDMA";
    v.tcp += established && c.transport == "TCP";
    AddRates(v.total, r);
    auto p = peer_index.find(c.peer);
    TopPeerRow& peer = p != peer_index.end() ? v.peer_rows[p->second] : other_peers[c.peer];
    if (p == peer_index.end()) {
      peer.peer = c.peer;
      peer.state = "-";
    }
    peer.channels += established;
    AddRates(peer.rates, r);
    if (c.transport == "RDMA" || c.transport == "TCP") AddRails(c, was, d, v.interval_s, &rails);
    v.channel_rows.push_back({c.id, c.peer, c.service, c.transport, c.state, r});
  }
  for (auto& [name, row] : other_peers) v.peer_rows.push_back(std::move(row));
  for (auto& [key, row] : rails) v.rail_rows.push_back(std::move(row));
  std::stable_sort(v.channel_rows.begin(), v.channel_rows.end(),
                   [](const TopChannelRow& a, const TopChannelRow& b) {
                     return a.rates.tx_bytes + a.rates.rx_bytes >
                            b.rates.tx_bytes + b.rates.rx_bytes;
                   });
  return v;
}

std::string FormatRate(double bytes) {
  static const char* const kUnits[] = {"B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"};
  size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), unit == 0 ? "%.0f %s" : "%.1f %s", bytes, kUnits[unit]);
  return buf;
}

namespace {

std::string PerSecond(double n) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), n < 10 ? "%.1f" : "%.0f", n);
  return buf;
}

std::string Rtt(double ms) {
  if (ms <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f ms", ms);
  return buf;
}

}  // namespace

std::string RenderTop(const TopView& v, size_t max_channels) {
  char head[256];
  std::snprintf(head, sizeof(head),
                "rdmad %s up %s | peers %u/%u up | channels %u (%u RDMA, %u TCP) | "
                "tx %s rx %s | every %.1f s\n",
                v.version.c_str(), FormatUptime(v.uptime_seconds).c_str(), v.peers_up, v.peers,
                v.established, v.rdma, v.tcp, FormatRate(v.total.tx_bytes).c_str(),
                FormatRate(v.total.rx_bytes).c_str(), v.interval_s);
  std::string out = head;
  Table peers({"PEER", "STATE", "RTT", "CHANNELS", "TX", "RX", "MSG/S", "OPS/S"});
  for (const TopPeerRow& p : v.peer_rows) {
    peers.AddRow({p.peer, p.state, Rtt(p.rtt_ms), std::to_string(p.channels),
                  FormatRate(p.rates.tx_bytes), FormatRate(p.rates.rx_bytes),
                  PerSecond(p.rates.messages), PerSecond(p.rates.operations)});
  }
  out += "\n" + (v.peer_rows.empty() ? std::string("no peers\n") : peers.Render());
  if (!v.rail_rows.empty()) {
    Table rails({"RAIL", "PEER DEVICE", "CHANNELS", "DOWN", "RATE"});
    for (const TopRailRow& r : v.rail_rows) {
      rails.AddRow({r.device, Dash(r.peer_device), std::to_string(r.channels),
                    std::to_string(r.down), FormatRate(r.bytes)});
    }
    out += "\n" + rails.Render();
  }
  if (v.channel_rows.empty()) return out + "\nno channels\n";
  Table channels(
      {"CHANNEL", "PEER", "SERVICE", "TRANSPORT", "STATE", "TX", "RX", "MSG/S", "OPS/S"});
  for (size_t i = 0; i < v.channel_rows.size() && i < max_channels; ++i) {
    const TopChannelRow& c = v.channel_rows[i];
    channels.AddRow({rdmad::FormatChannelId(c.id), c.peer, c.service, Dash(c.transport), c.state,
                     FormatRate(c.rates.tx_bytes), FormatRate(c.rates.rx_bytes),
                     PerSecond(c.rates.messages), PerSecond(c.rates.operations)});
  }
  out += "\n" + channels.Render();
  if (v.channel_rows.size() > max_channels) {
    out += "(" + std::to_string(v.channel_rows.size() - max_channels) + " more)\n";
  }
  return out;
}

namespace {

Json RatesJson(const TopRates& r) {
  return Json{{"tx_bytes_per_s", r.tx_bytes},
              {"rx_bytes_per_s", r.rx_bytes},
              {"messages_per_s", r.messages},
              {"operations_per_s", r.operations}};
}

}  // namespace

Json TopJson(const TopView& v) {
  Json peers = Json::array();
  for (const TopPeerRow& p : v.peer_rows) {
    Json row{{"peer", p.peer}, {"state", p.state}, {"rtt_ms", p.rtt_ms}, {"channels", p.channels}};
    row.update(RatesJson(p.rates));
    peers.push_back(std::move(row));
  }
  Json rails = Json::array();
  for (const TopRailRow& r : v.rail_rows) {
    rails.push_back(Json{{"device", r.device},
                         {"peer_device", r.peer_device},
                         {"channels", r.channels},
                         {"down", r.down},
                         {"bytes_per_s", r.bytes}});
  }
  Json channels = Json::array();
  for (const TopChannelRow& c : v.channel_rows) {
    Json row{{"id", rdmad::FormatChannelId(c.id)},
             {"peer", c.peer},
             {"service", c.service},
             {"transport", c.transport},
             {"state", c.state}};
    row.update(RatesJson(c.rates));
    channels.push_back(std::move(row));
  }
  Json out{{"interval_s", v.interval_s},
           {"version", v.version},
           {"uptime_seconds", v.uptime_seconds},
           {"peers_up", v.peers_up},
           {"established", v.established},
           {"rdma", v.rdma},
           {"tcp", v.tcp}};
  out["total"] = RatesJson(v.total);
  out["peers"] = std::move(peers);
  out["rails"] = std::move(rails);
  out["channels"] = std::move(channels);
  return out;
}

}  // namespace rdmactl
