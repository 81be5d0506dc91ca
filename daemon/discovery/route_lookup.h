// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Which source address the kernel would use to reach a peer: a UDP socket is
// connect()ed to the peer (this only consults the routing table; no packet
// is sent) and getsockname() reads the address the kernel bound. Needs no
// privileges. The path policy uses it to prefer the GID holding that
// address, the one routing and ARP/ND will actually use.
//
// Thread safety: stateless; safe from any thread (one socket per call).

#ifndef RDMAD_DAEMON_DISCOVERY_ROUTE_LOOKUP_H_
#define RDMAD_DAEMON_DISCOVERY_ROUTE_LOOKUP_H_

#include <map>
#include <optional>
#include <string>

#include "rdmad/status.h"

namespace rdmad {

// Where the path policy and the broker learn which local address reaches a
// peer: the kernel (KernelSourceAddresses), or a test's table.
class SourceAddressLookup {
 public:
  virtual ~SourceAddressLookup() = default;
  // The source IP the kernel would use to reach peer_ip, or nullopt if
  // unknown (no route, or not an address).
  virtual std::optional<std::string> SourceAddressFor(const std::string& peer_ip) const = 0;
  // The prefix length of a local IPv4 address on its interface (24 for
  // 192.0.2.1/24), or nullopt if unknown.
  virtual std::optional<int> PrefixLength(const std::string& /*local_ip*/) const {
    return std::nullopt;
  }
};

// Fixed answers: routes[peer_ip], none for the rest.
class SourceAddressTable final : public SourceAddressLookup {
 public:
  explicit SourceAddressTable(std::map<std::string, std::string> routes = {})
      : routes_(std::move(routes)) {}
  std::optional<std::string> SourceAddressFor(const std::string& peer_ip) const override {
    auto it = routes_.find(peer_ip);
    if (it == routes_.end()) return std::nullopt;
    return it->second;
  }

 private:
  std::map<std::string, std::string> routes_;
};

// The kernel's source address for peer_ip ("192.0.2.1", "2001:db8::1"; no
// scope suffix). peer_ip is a numeric IPv4 or IPv6 address; IPv6 link-local
// peers need a scope ("fe80::1%eth0"). INVALID_ARGUMENT for a non-numeric
// address; UNAVAILABLE naming the errno when there is no route.
StatusOr<std::string> KernelSourceAddress(const std::string& peer_ip);

// The prefix length of a local IPv4 address from getifaddrs; nullopt if no
// interface has it.
std::optional<int> KernelPrefixLength(const std::string& local_ip);

// KernelSourceAddress and KernelPrefixLength as a SourceAddressLookup (why there is none is logged
// at debug); one for the process.
const SourceAddressLookup& KernelSourceAddresses();

}  // namespace rdmad

#endif  // RDMAD_DAEMON_DISCOVERY_ROUTE_LOOKUP_H_
