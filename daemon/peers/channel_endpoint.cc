// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/channel_endpoint.h"

#include <arpa/inet.h>

#include <algorithm>

namespace rdmad {
namespace {

Status BadTcp(std::string message) { return Status::InvalidArgument("TCP endpoint: " + message); }

bool IsNumericAddress(const std::string& host) {
  unsigned char buf[sizeof(struct in6_addr)];
  std::string bare = host.substr(0, host.find('%'));  // fe80::1%eth0
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, bare.c_str(), buf) == 1;
}

Status ValidateTcp(const internal::TcpEndpoint& e, bool listening) {
  if (!listening) return Status::Ok();
  if (!IsNumericAddress(e.host)) {
    return BadTcp("host \"" + e.host + "\" is not a numeric IPv4/IPv6 address");
  }
  if (e.port == 0) return BadTcp("port 0 is not a listening port");
  if (std::all_of(e.token.begin(), e.token.end(), [](uint8_t b) { return b == 0; })) {
    return BadTcp("token is all zeros");
  }
  return Status::Ok();
}

}  // namespace

Status ValidateChannelEndpoint(const ChannelEndpoint& endpoint, bool listening) {
  if (endpoint.rdma.has_value() == endpoint.tcp.has_value()) {
    return Status::InvalidArgument("endpoint: exactly one of rdma and tcp must be set");
  }
  if (endpoint.transport_reason.size() > internal::kMaxReasonLength) {
    return Status::InvalidArgument(
        "endpoint: transport_reason of " + std::to_string(endpoint.transport_reason.size()) +
        " bytes (at most " + std::to_string(internal::kMaxReasonLength) + ")");
  }
  if (endpoint.rdma) return internal::ValidateRdmaEndpoint(*endpoint.rdma);
  return ValidateTcp(*endpoint.tcp, listening);
}

EndpointKind KindOf(const ChannelEndpoint& endpoint) {
  return endpoint.rdma ? EndpointKind::kRdma : EndpointKind::kTcp;
}

const char* EndpointKindName(EndpointKind kind) {
  switch (kind) {
    case EndpointKind::kRdma: return "RDMA";
    case EndpointKind::kTcp: return "TCP";
    case EndpointKind::kUnknown: break;
  }
  return "";
}

std::optional<EndpointKind> ParseEndpointKind(std::string_view name) {
  for (EndpointKind kind : {EndpointKind::kUnknown, EndpointKind::kRdma, EndpointKind::kTcp}) {
    if (name == EndpointKindName(kind)) return kind;
  }
  return std::nullopt;
}

std::string EndpointTransport(const ChannelEndpoint& endpoint) {
  return EndpointKindName(KindOf(endpoint));
}

}  // namespace rdmad
