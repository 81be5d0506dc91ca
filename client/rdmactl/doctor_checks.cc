// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/doctor_checks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "client/rdmactl/format.h"

namespace rdmactl {

uint64_t PinnedPerChannel(uint32_t send_depth, uint32_t recv_depth, uint32_t slot_size) {
  uint64_t staging = std::clamp<uint64_t>((64u << 10) / slot_size, 2, send_depth);
  return (uint64_t(recv_depth) + staging) * slot_size;
}

uint64_t DefaultPinnedPerChannel() { return PinnedPerChannel(127, 31, 4096); }

namespace {

CheckResult Ok(const char* name, std::string detail) {
  return {name, CheckLevel::kOk, std::move(detail), ""};
}
CheckResult Warn(const char* name, std::string detail, std::string fix) {
  return {name, CheckLevel::kWarn, std::move(detail), std::move(fix)};
}
CheckResult Fail(const char* name, std::string detail, std::string fix) {
  return {name, CheckLevel::kFail, std::move(detail), std::move(fix)};
}

std::string Join(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : sep) + i;
  return out;
}

std::string Bytes(uint64_t n) {
  char buf[32];
  if (n >= (1ull << 30)) {
    std::snprintf(buf, sizeof(buf), "%.1f GiB", double(n) / double(1ull << 30));
  } else if (n >= (1ull << 20)) {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", double(n) / double(1ull << 20));
  } else {
    std::snprintf(buf, sizeof(buf), "%llu KiB", static_cast<unsigned long long>(n >> 10));
  }
  return buf;
}

bool Active(const rdmad::Port& p) { return p.state == "ACTIVE"; }
bool RoCE(const rdmad::Port& p) { return p.link_layer == "Ethernet"; }

CheckResult Modules(const HostFacts& h, const DaemonFacts* d) {
  auto has = [&](const char* m) {
    auto it = h.modules.find(m);
    return it != h.modules.end() && it->second;
  };
  if (!has("ib_uverbs")) {
    return Fail("modules", "ib_uverbs is not loaded: no process can use RDMA verbs",
                "modprobe ib_uverbs (rdma-core's rdma-load-modules@ service loads it at boot)");
  }
  if (!h.missing_providers.empty()) {
    return Fail("modules", "the NICs' RDMA providers are not loaded: " + Join(h.missing_providers),
                "modprobe " + Join(h.missing_providers, " "));
  }
  if (!has("rdma_ucm")) {
    return Warn("modules",
                "ib_uverbs is loaded, rdma_ucm is not: rdmad's channels work, rdma_cm users "
                "(UCX, perftest -R, cmtime) do not",
                "modprobe rdma_ucm");
  }
  if (d != nullptr && d->devices.empty()) {
    return Warn("modules", "ib_uverbs and rdma_ucm are loaded, but no RDMA device exists",
                "load your NIC's RDMA provider (mlx5_ib, irdma, bnxt_re, ...), or for "
                "Soft-RoCE: modprobe rdma_rxe && rdma link add rxe0 type rxe netdev ETH");
  }
  return Ok("modules", "ib_uverbs, rdma_ucm and the devices' providers are loaded");
}

CheckResult DevAccess(const HostFacts& h, const DaemonFacts* d) {
  if (d != nullptr && d->devices.empty()) return Ok("dev-access", "no RDMA device to open");
  if (!h.dev_dir) {
    return Fail("dev-access", "there is no /dev/infiniband",
                "on the host: modprobe ib_uverbs; in a container: --device /dev/infiniband");
  }
  std::vector<std::string> denied;
  bool any_uverbs = false;
  for (const auto& [node, error] : h.dev_nodes) {
    any_uverbs |= node.rfind("uverbs", 0) == 0;
    if (!error.empty()) denied.push_back("/dev/infiniband/" + node + " (" + error + ")");
  }
  if (!any_uverbs) {
    return Fail("dev-access", "/dev/infiniband has no uverbs device",
                "modprobe ib_uverbs; in a container pass every /dev/infiniband/uverbsN");
  }
  if (!denied.empty()) {
    return Fail("dev-access", "you cannot open " + Join(denied),
                "install rdma-core's udev rules (they make the devices 0666), or add yourself to "
                "the devices' group");
  }
  return Ok("dev-access", "every /dev/infiniband device opens read-write for you");
}

CheckResult Memlock(const HostFacts& h, const DaemonFacts* d, size_t wanted) {
  uint64_t per =
      d != nullptr && d->bytes_per_channel != 0 ? d->bytes_per_channel : DefaultPinnedPerChannel();
  if (!h.memlock) return Ok("memlock", "unlimited");
  uint64_t fits = *h.memlock / per;
  std::string seen = "the locked-memory limit is " + Bytes(*h.memlock) + "; a busy channel pins " +
                     Bytes(per) + " (its receive ring and staging, grown to full size)";
  const std::string fix =
      "raise it: LimitMEMLOCK=infinity in the application's unit, or memlock in "
      "/etc/security/limits.conf (ulimit -l unlimited)";
  if (fits == 0) return Fail("memlock", seen + ": not one channel fits", fix);
  if (fits < wanted) {
    return Warn("memlock",
                seen + ": " + std::to_string(fits) + " channels fit, " + std::to_string(wanted) +
                    " wanted (--channels), and the application's own regions come on top",
                fix);
  }
  return Ok("memlock", seen + ": " + std::to_string(fits) + " channels fit");
}

CheckResult Ports(const DaemonFacts& d) {
  std::vector<std::string> down;
  size_t active = 0;
  for (const rdmad::Device& dev : d.devices) {
    for (const rdmad::Port& p : dev.ports) {
      if (Active(p)) {
        ++active;
      } else {
        down.push_back(dev.name + " port " + std::to_string(p.port) + " " + p.state + " (" +
                       p.phys_state + ")");
      }
    }
  }
  if (d.devices.empty()) return Ok("ports", "no RDMA device");
  const std::string fix =
      "bring the link up (ip link set NETDEV up; the cable, the switch port); an "
      "InfiniBand port INIT waits for the subnet manager (opensm)";
  if (active == 0) return Fail("ports", "no port is ACTIVE: " + Join(down), fix);
  if (!down.empty()) return Warn("ports", "not ACTIVE: " + Join(down), fix);
  return Ok("ports", std::to_string(active) + " ports ACTIVE");
}

CheckResult Gids(const HostFacts& h, const DaemonFacts& d) {
  std::vector<std::string> missing, found, bare;
  for (const rdmad::Device& dev : d.devices) {
    for (const rdmad::Port& p : dev.ports) {
      if (!RoCE(p) || !Active(p) || p.netdev.empty()) continue;
      auto addresses = h.netdev_addresses.find(p.netdev);
      if (addresses == h.netdev_addresses.end() || addresses->second.empty()) {
        bare.push_back(p.netdev);
        continue;
      }
      for (const std::string& ip : addresses->second) {
        bool v2 = std::any_of(p.gids.begin(), p.gids.end(), [&](const rdmad::Gid& g) {
          return g.ip == ip && g.type == "RoCE v2";
        });
        (v2 ? found : missing).push_back(ip + " on " + p.netdev + " (" + dev.name + ")");
      }
    }
  }
  if (!missing.empty()) {
    std::string detail = "no RoCE v2 GID for " + Join(missing);
    const std::string fix =
        "the GID table follows the netdev's addresses: remove and add the address again "
        "(ip addr del/add), or for Soft-RoCE re-create the link (rdma link delete/add)";
    return found.empty() ? Fail("gids", detail, fix) : Warn("gids", detail, fix);
  }
  if (!bare.empty()) {
    return Warn("gids", Join(bare) + " has no IP address: RoCE v2 routes by IP",
                "ip addr add ADDRESS/PREFIX dev " + bare.front());
  }
  if (found.empty()) return Ok("gids", "no active RoCE port");
  return Ok("gids", "a RoCE v2 GID for every address: " + Join(found));
}

// The largest RoCE MTU a netdev MTU carries (RoCE v2 headers: 58 bytes).
uint32_t RoceMtuFor(uint32_t netdev_mtu) {
  uint32_t best = 0;
  for (uint32_t m : {256u, 512u, 1024u, 2048u, 4096u}) {
    if (m + 58 <= netdev_mtu) best = m;
  }
  return best;
}

CheckResult Mtu(const DaemonFacts& d) {
  std::vector<std::string> off, small, seen;
  for (const rdmad::Device& dev : d.devices) {
    for (const rdmad::Port& p : dev.ports) {
      if (!RoCE(p) || !Active(p) || p.netdev_mtu == 0) continue;
      std::string where = dev.name + " port " + std::to_string(p.port) + " (" + p.netdev + " " +
                          std::to_string(p.netdev_mtu) + ")";
      uint32_t expected = RoceMtuFor(p.netdev_mtu);
      seen.push_back(where + ": " + std::to_string(p.active_mtu));
      if (p.active_mtu > expected) {
        off.push_back(where + ": " + std::to_string(p.active_mtu) + " does not fit");
      } else if (p.active_mtu < 4096 && p.netdev_mtu < 4096 + 58) {
        small.push_back(where + ": " + std::to_string(p.active_mtu));
      }
    }
  }
  if (!off.empty()) {
    return Fail("mtu", "a RoCE MTU larger than its netdev carries: " + Join(off),
                "set the netdev MTU back, or the port follows it only once the device is "
                "re-created (rdma link delete/add for Soft-RoCE)");
  }
  if (!small.empty()) {
    return Warn("mtu", "RoCE MTU below 4096 because of the netdev MTU: " + Join(small),
                "jumbo frames (ip link set NETDEV mtu 9000, and on the switch ports) give RoCE "
                "4096; both ends must agree");
  }
  if (seen.empty()) return Ok("mtu", "no active RoCE port");
  return Ok("mtu", "RoCE MTU: " + Join(seen));
}

CheckResult Ecn(const HostFacts& h, const DaemonFacts& d) {
  std::vector<std::string> off, on, hidden;
  for (const rdmad::Device& dev : d.devices) {
    for (const rdmad::Port& p : dev.ports) {
      if (!RoCE(p) || !Active(p) || p.netdev.empty()) continue;
      auto it = h.roce_ecn.find(p.netdev);
      if (it == h.roce_ecn.end()) {
        hidden.push_back(p.netdev + " (" + dev.name + ")");
      } else {
        (it->second ? on : off).push_back(p.netdev);
      }
    }
  }
  if (!off.empty()) {
    return Warn("ecn", "RoCE ECN is off on " + Join(off) + ": congestion control has no signal",
                "enable it on the RoCE priority: echo 1 > /sys/class/net/NETDEV/ecn/roce_np/"
                "enable/3 (and roce_rp), with PFC or ECN set on the switch");
  }
  std::string detail = on.empty() ? "" : "RoCE ECN on for " + Join(on);
  if (!hidden.empty()) {
    detail += std::string(detail.empty() ? "" : "; ") + "not shown by the driver for " +
              Join(hidden) + " (PFC/ECN are the NIC's and switch's settings)";
  }
  return Ok("ecn", detail.empty() ? "no active RoCE port" : detail);
}

CheckResult Socket(const HostFacts& h) {
  if (h.socket_reached) return Ok("socket", "rdmad answers at " + h.socket_path);
  if (!h.socket_group.empty() && !h.in_socket_group) {
    return Fail("socket",
                "you cannot reach " + h.socket_path + ": " +
                    (h.socket_hidden ? "its directory" : "it") + " belongs to group " +
                    h.socket_group + ", and you are not in it (" + h.socket_error + ")",
                "sudo usermod -aG " + h.socket_group + " $USER, then log in again");
  }
  if (h.socket_hidden) {
    return Fail("socket",
                "you cannot reach " + h.socket_path + ": a directory above it is closed to you",
                "ask to be in rdmad's socket group (daemon.socket_group; systemd's "
                "RuntimeDirectory gives the group the directory too)");
  }
  return Fail("socket", "rdmad does not answer at " + h.socket_path + ": " + h.socket_error,
              "systemctl start rdmad (journalctl -u rdmad says why it stopped), or --socket");
}

CheckResult Config(const HostFacts& h, const DaemonFacts& d) {
  const rdmad::DaemonStatus& s = d.status;
  std::string file = s.config_file.empty() ? "the built-in defaults" : s.config_file;
  if (!s.config_reload_error.empty()) {
    std::string first = s.config_reload_error.substr(0, s.config_reload_error.find('\n'));
    return Warn("config",
                "the last reload of " + file + " failed, the config before it runs: " + first,
                "fix the file (rdmad --check-config " + file + "), then systemctl reload rdmad");
  }
  if (h.config_mtime_unix_ms > s.config_loaded_unix_ms + 1000 && s.config_loaded_unix_ms > 0) {
    return Warn("config", file + " changed after rdmad read it", "systemctl reload rdmad");
  }
  return Ok("config", file + ", generation " + std::to_string(s.config_generation));
}

}  // namespace

std::vector<CheckResult> CheckHost(const HostFacts& host, const DaemonFacts* daemon,
                                   size_t channels_wanted) {
  std::vector<CheckResult> out;
  out.push_back(Socket(host));
  if (daemon != nullptr) out.push_back(Config(host, *daemon));
  out.push_back(Modules(host, daemon));
  out.push_back(DevAccess(host, daemon));
  out.push_back(Memlock(host, daemon, channels_wanted));
  if (daemon != nullptr) {
    out.push_back(Ports(*daemon));
    out.push_back(Gids(host, *daemon));
    out.push_back(Mtu(*daemon));
    out.push_back(Ecn(host, *daemon));
  }
  return out;
}

std::vector<CheckResult> CheckPeer(const PeerFacts& p) {
  std::vector<CheckResult> out;
  if (!p.info) {
    out.push_back(Fail("peer", "rdmad knows no peer " + p.peer,
                       "add it under [[peers]] in the config, or have it join the cluster"));
    return out;
  }
  const rdmad::PeerInfo& i = *p.info;
  std::string name = i.name + " (" + i.address + ")";
  if (i.state == rdmad::PeerState::kVersionMismatch) {
    out.push_back(Fail("peer", name + ": " + i.last_error,
                       "run rdmad of the same major version on both hosts"));
    return out;
  }
  if (i.state != rdmad::PeerState::kUp) {
    out.push_back(
        Fail("peer",
             name + " is " + std::string(rdmad::PeerStateName(i.state)) +
                 (i.last_error.empty() ? "" : ": " + i.last_error),
             "is rdmad running there, is its peer port open, do the certificates or peer key "
             "match? (rdmactl peers; journalctl -u rdmad on both)"));
    return out;
  }
  char rtt[64];
  std::snprintf(rtt, sizeof(rtt), "%.2f ms", i.rtt_ms);
  out.push_back(Ok("peer", name + " up: rdmad " + i.remote_version + ", protocol " +
                               i.remote_protocol + ", RTT " + rtt));
  if (!i.clock_offset_ms) {
    out.push_back(Ok("clock", "no heartbeat from " + i.name + " yet"));
  } else {
    double off = *i.clock_offset_ms;
    char text[96];
    std::snprintf(text, sizeof(text), "%s's clock is %.0f ms %s this host's", i.name.c_str(),
                  std::fabs(off), off >= 0 ? "ahead of" : "behind");
    if (std::fabs(off) > 1000) {
      out.push_back(Warn("clock", text,
                         "run chrony or systemd-timesyncd on both hosts: logs, leases and "
                         "certificates need the same time"));
    } else {
      out.push_back(Ok("clock", text));
    }
  }
  if (!p.path.ok()) {
    out.push_back(Warn("path", "no RDMA path: channels use TCP: " + p.path.status().message(),
                       "rdmactl route " + p.peer + " explains each decision"));
  } else {
    const rdmad::Path& path = *p.path;
    std::string detail = path.device + " port " + std::to_string(path.port) + ", " +
                         path.transport + ", GID index " + std::to_string(path.gid_index) + " (" +
                         path.gid_type + "), MTU " + std::to_string(path.mtu);
    if (path.peer_active_mtu != 0 && path.peer_active_mtu != path.local_active_mtu) {
      out.push_back(Warn("path",
                         detail + ": the MTUs differ (here " +
                             std::to_string(path.local_active_mtu) + ", the peer " +
                             std::to_string(path.peer_active_mtu) + "), the path takes the less",
                         "give both netdevs the same MTU"));
    } else {
      out.push_back(Ok("path", detail));
    }
  }
  if (!p.channel.ok()) {
    out.push_back(Fail("channel",
                       "a channel to " + p.peer + "'s echo service failed: " + p.channel.message(),
                       "rdmactl connect " + p.peer +
                           " shows the handshake; the peer's log says "
                           "why it refused"));
    return out;
  }
  if (p.transport != "RDMA") {
    out.push_back(Warn("channel",
                       "the test channel went over " + p.transport + ": " + p.transport_reason,
                       "rdmactl route " + p.peer + " explains the path"));
  } else {
    out.push_back(Ok("channel", "over RDMA: " + p.transport_reason));
  }
  if (!p.write.ok()) {
    out.push_back(Fail("write", "a 4 KiB Write to the peer's memory failed: " + p.write.message(),
                       "an RDMA WRITE that fails after the handshake points at the fabric: "
                       "MTU, PFC/ECN, a firewall on UDP 4791 (RoCE v2)"));
  } else {
    char text[96];
    std::snprintf(text, sizeof(text), "4 KiB written and read back in %.0f us", p.write_us);
    out.push_back(Ok("write", text));
  }
  return out;
}

int DoctorExitCode(const std::vector<CheckResult>& checks) {
  int code = 0;
  for (const CheckResult& c : checks) {
    code = std::max(code, c.level == CheckLevel::kFail ? 2 : c.level == CheckLevel::kWarn ? 1 : 0);
  }
  return code;
}

std::string_view CheckLevelName(CheckLevel level) {
  switch (level) {
    case CheckLevel::kOk: return "ok";
    case CheckLevel::kWarn: return "warn";
    case CheckLevel::kFail: return "fail";
  }
  return "fail";
}

std::string RenderChecks(const std::vector<CheckResult>& checks) {
  std::string out;
  for (const CheckResult& c : checks) {
    char head[64];
    std::snprintf(head, sizeof(head), "%-4s  %-10s  ", std::string(CheckLevelName(c.level)).c_str(),
                  c.name.c_str());
    out += head + c.detail + "\n";
    if (!c.fix.empty()) out += std::string(18, ' ') + "fix: " + c.fix + "\n";
  }
  int code = DoctorExitCode(checks);
  out += code == 0 ? "all checks ok\n" : code == 1 ? "warnings, no failure\n" : "FAILED\n";
  return out;
}

Json ChecksJson(const std::vector<CheckResult>& checks) {
  Json list = Json::array();
  for (const CheckResult& c : checks) {
    list.push_back(Json{{"name", c.name},
                        {"status", std::string(CheckLevelName(c.level))},
                        {"detail", c.detail},
                        {"fix", c.fix}});
  }
  int code = DoctorExitCode(checks);
  return Json{{"checks", list},
              {"status", code == 0   ? "ok"
                         : code == 1 ? "warn"
                                     : "fail"},
              {"exit_code", code}};
}

}  // namespace rdmactl
