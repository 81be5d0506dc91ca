// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/convert.h"

#include <algorithm>
#include <cstdint>

#include "client/src/record_reader.h"

namespace rdmad::internal {

DaemonStatus FromProto(const v1::GetStatusResponse& r) {
  DaemonStatus s;
  ReadRecord(r, &s);
  return s;
}

Event FromProto(const v1::Event& e) {
  Event out;
  ReadRecord(e, &out);
  return out;
}

Device FromProto(const v1::Device& d) {
  Device out;
  ReadRecord(d, &out);
  return out;
}

Path FromProto(const v1::Path& p) {
  Path out;
  ReadRecord(p, &out);
  return out;
}

PeerInfo FromProto(const v1::Peer& p) {
  PeerInfo out;
  ReadRecord(p, &out);
  return out;
}

ClusterView FromProto(const v1::ListMembersResponse& r) {
  ClusterView view;
  ReadRecord(r, &view);
  return view;
}

}  // namespace rdmad::internal
