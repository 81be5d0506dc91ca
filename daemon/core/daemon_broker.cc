// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The daemon's channel broker wiring: paths from the running config and
// inventory, peers from the peer hub.

#include <arpa/inet.h>
#include <unistd.h>

#include "daemon/core/daemon.h"

namespace rdmad {
namespace {

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

bool IsIpLiteral(const std::string& host) {
  unsigned char buf[sizeof(struct in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

}  // namespace

BrokerOptions Daemon::MakeBrokerOptions() {
  BrokerOptions o;
  o.host_name = HostName();
  o.instance_id = peers_.instance_id();
  o.resolve = [this](const PathRequest& request) { return ResolvePath(request); };
  o.find_peer = [this](const std::string& name) { return FindBrokerPeer(name); };
  return o;
}

// A name that is neither a [[peers]] name nor an IP literal (with or
// without a port) is NOT_FOUND, checked before a session is opened on
// demand; a peer whose session is not up gives UNAVAILABLE with the
// session's last error.
StatusOr<BrokerPeer> Daemon::FindBrokerPeer(const std::string& name_or_address) {
  bool known = IsIpLiteral(HostOfAddress(name_or_address));
  for (const PeerSnapshot& p : peers_.List()) {
    known = known || p.name == name_or_address || p.address == name_or_address;
  }
  if (!known) {
    return Status::NotFound("unknown peer " + name_or_address +
                            ": not a [[peers]] name nor an IP address");
  }
  StatusOr<std::shared_ptr<PeerSession>> session = peers_.Peer(name_or_address);
  if (!session.ok()) {
    if (session.status().code() != StatusCode::kInvalidArgument) return session.status();
    return Status::NotFound("unknown peer " + name_or_address + ": " +
                            session.status().message());
  }
  BrokerPeer peer;
  peer.name = session.value()->name();
  peer.address = session.value()->address();
  StatusOr<std::shared_ptr<PeerLink>> link = session.value()->link();
  if (link.ok()) {
    peer.link = std::move(link).value();
  } else {
    peer.link = Status::Unavailable(link.status().message());
  }
  return peer;
}

}  // namespace rdmad
