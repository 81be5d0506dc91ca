// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/peer_identity.h"

#include <strings.h>

#include <algorithm>

namespace rdmad {

Status PeerIdentity::Covers(const std::string& claimed) const {
  if (!tls) return Status::Ok();
  bool named = std::any_of(names.begin(), names.end(), [&](const std::string& name) {
    return name.size() == claimed.size() && strcasecmp(name.c_str(), claimed.c_str()) == 0;
  });
  if (named) return Status::Ok();
  return Status::PermissionDenied("the peer's certificate is for " + Describe() + ", not " +
                                  claimed.substr(0, 255));
}

std::string PeerIdentity::Describe() const {
  if (names.empty()) return "no subject alternative names";
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name.substr(0, 255);
  return out;
}

}  // namespace rdmad
