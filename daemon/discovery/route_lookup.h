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

#include <functional>
#include <optional>
#include <string>

#include "rdmad/status.h"

namespace rdmad {

// The source IP the kernel would use to reach peer_ip, or nullopt if unknown
// (no route, or not an address). Tests substitute fixed tables.
using SourceAddressLookup = std::function<std::optional<std::string>(const std::string& peer_ip)>;

// The kernel's source address for peer_ip ("192.0.2.1", "2001:db8::1"; no
// scope suffix). peer_ip is a numeric IPv4 or IPv6 address; IPv6 link-local
// peers need a scope ("fe80::1%eth0"). INVALID_ARGUMENT for a non-numeric
// address; UNAVAILABLE naming the errno when there is no route.
StatusOr<std::string> KernelSourceAddress(const std::string& peer_ip);

// A SourceAddressLookup backed by KernelSourceAddress.
SourceAddressLookup KernelSourceAddressLookup();

}  // namespace rdmad

#endif  // RDMAD_DAEMON_DISCOVERY_ROUTE_LOOKUP_H_
