// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/peer_protocol.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include "common/secure_random.h"
#include "daemon/config/config_checks.h"
#include "spdlog/spdlog.h"

namespace rdmad {
namespace {

constexpr ProtocolVersion kProtocol{2, 0};  // 2: batches as repeated fields (docs/wire.md)

bool IsHex(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool IsMtu(int mtu) {
  // 0: the sender could not read it.
  return mtu == 0 || mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096;
}

Status Invalid(std::string_view field, const std::string& what) {
  return Status::InvalidArgument(std::string(field) + what);
}

// Reads RDMAD_TEST_PROTOCOL_MAJOR (test-only); nullopt-like 0 when unset.
uint32_t TestMajorOverride() {
  const char* text = std::getenv("RDMAD_TEST_PROTOCOL_MAJOR");
  if (text == nullptr || *text == '\0') return 0;
  uint32_t major = 0;
  std::string_view view(text);
  auto [end, ec] = std::from_chars(view.data(), view.data() + view.size(), major);
  if (ec != std::errc() || end != view.data() + view.size() || major == 0 || major > 1000) {
    spdlog::warn("RDMAD_TEST_PROTOCOL_MAJOR={} ignored: expected 1..1000", view);
    return 0;
  }
  spdlog::warn("RDMAD_TEST_PROTOCOL_MAJOR={}: speaking rdmad protocol {}.{} (test only)", major,
               major, kProtocol.minor);
  return major;
}

}  // namespace

std::string FormatProtocol(ProtocolVersion version) {
  return std::to_string(version.major) + "." + std::to_string(version.minor);
}

ProtocolVersion LocalProtocolVersion() {
  static const ProtocolVersion version = [] {
    uint32_t major = TestMajorOverride();
    return major == 0 ? kProtocol : ProtocolVersion{major, kProtocol.minor};
  }();
  return version;
}

Status ValidateHello(const PeerHello& hello, std::string_view field) {
  if (hello.protocol.major == 0) return Invalid(field, ".protocol: a major version is required");
  if (hello.host_name.empty() || hello.host_name.size() > kMaxHostName) {
    return Invalid(field, ".host_name: 1..255 bytes required");
  }
  if (hello.daemon_version.size() > kMaxShortText) {
    return Invalid(field, ".daemon_version: at most 64 bytes");
  }
  if (hello.instance_id.size() != 32 || !IsHex(hello.instance_id)) {
    return Invalid(field, ".instance_id: 32 lower-case hex digits required");
  }
  if (hello.ports.size() > kMaxPeerPorts || hello.transports.size() > kMaxPeerPorts) {
    return Invalid(field, ".capabilities: at most 1024 ports and transports");
  }
  for (const std::string& t : hello.transports) {
    if (t.empty() || t.size() > kMaxShortText) {
      return Invalid(field, ".capabilities.transports: 1..64 bytes each");
    }
  }
  for (const PeerPort& p : hello.ports) {
    if (p.device.empty() || p.device.size() > kMaxShortText || p.transport.size() > kMaxShortText) {
      return Invalid(field, ".capabilities.ports: device 1..64 bytes, transport up to 64");
    }
    if (p.port < 1 || p.port > 255) {
      return Invalid(field, ".capabilities.ports: port " + std::to_string(p.port) + " of " +
                                p.device + " is not 1..255");
    }
    if (!IsMtu(p.active_mtu)) {
      return Invalid(field, ".capabilities.ports: active_mtu " + std::to_string(p.active_mtu) +
                                " of " + p.device + " is not an IB MTU");
    }
  }
  return Status::Ok();
}

Status ValidateSessionOpen(const SessionOpen& open) {
  if (open.protocol.major == 0) {
    return Status::InvalidArgument("protocol: a major version is required");
  }
  if (open.host_name.empty() || open.host_name.size() > kMaxHostName) {
    return Status::InvalidArgument("host_name: 1..255 bytes required");
  }
  if (open.instance_id.size() != 32 || !IsHex(open.instance_id)) {
    return Status::InvalidArgument("instance_id: 32 lower-case hex digits required");
  }
  if (open.heartbeat_interval_ms < kMinHeartbeatMs ||
      open.heartbeat_interval_ms > kMaxHeartbeatMs) {
    return Status::InvalidArgument("heartbeat_interval_ms: 100..60000 required");
  }
  return Status::Ok();
}

Status CheckProtocol(ProtocolVersion local, ProtocolVersion remote, std::string_view peer) {
  if (local.major == remote.major) return Status::Ok();
  return Status::FailedPrecondition("peer " + std::string(peer) + " speaks rdmad protocol " +
                                    FormatProtocol(remote) + ", this daemon " +
                                    FormatProtocol(local));
}

PeerHello BuildLocalHello(const Inventory& inventory, const std::string& instance_id,
                          const std::string& node_name) {
  PeerHello hello;
  hello.protocol = LocalProtocolVersion();
  hello.host_name = node_name;
  hello.daemon_version = RDMAD_VERSION;
  hello.instance_id = instance_id;
  for (const DeviceInfo& d : inventory.devices) {
    for (const PortInfo& p : d.ports) {
      if (p.state != 4) continue;  // IBV_PORT_ACTIVE
      std::string transport(TransportName(p.transport));
      hello.ports.push_back({d.name, p.port, IsMtu(p.active_mtu) ? p.active_mtu : 0, transport});
      if (std::find(hello.transports.begin(), hello.transports.end(), transport) ==
          hello.transports.end()) {
        hello.transports.push_back(transport);
      }
    }
  }
  return hello;
}

std::string NewInstanceId() { return SecureRandomHex(16); }

std::string LocalHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

std::string NodeName(const std::string& configured) {
  return configured.empty() ? LocalHostName() : configured;
}

StatusOr<std::string> NormalizePeerAddress(std::string_view address) {
  std::string reason = CheckPeerAddress(SettingValue(std::string(address)));
  if (!reason.empty()) {
    return Status::InvalidArgument("peer address \"" + std::string(address) + "\" is " + reason);
  }
  unsigned char buf[16];
  std::string copy(address);
  if (inet_pton(AF_INET6, copy.c_str(), buf) == 1) {
    return "[" + copy + "]:" + std::to_string(kDefaultPeerPort);
  }
  size_t close = address.find(']');
  size_t colon = address.rfind(':');
  bool has_port =
      colon != std::string_view::npos && (close == std::string_view::npos || colon > close);
  if (has_port) return copy;
  return copy + ":" + std::to_string(kDefaultPeerPort);
}

std::string HostOfAddress(std::string_view address) {
  if (!address.empty() && address.front() == '[') {
    size_t end = address.find(']');
    return std::string(end == std::string_view::npos ? address : address.substr(1, end - 1));
  }
  size_t colon = address.rfind(':');
  if (colon == std::string_view::npos || address.find(':') != colon) return std::string(address);
  return std::string(address.substr(0, colon));
}

std::string ListenTarget(std::string_view host, int port) {
  unsigned char buf[16];
  std::string copy(host);
  bool v6 = inet_pton(AF_INET6, copy.c_str(), buf) == 1;
  return (v6 ? "[" + copy + "]" : copy) + ":" + std::to_string(port);
}

}  // namespace rdmad
