// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Conversions from the wire messages (rdmad.v1) to the client library's
// public value types. Internal to the library.

#ifndef RDMAD_CLIENT_SRC_CONVERT_H_
#define RDMAD_CLIENT_SRC_CONVERT_H_

#include "rdmad/client.h"
#include "rdmad/v1/rdmad.pb.h"

namespace rdmad::internal {

DaemonStatus FromProto(const v1::GetStatusResponse& r);
Event FromProto(const v1::Event& e);
Device FromProto(const v1::Device& d);
Path FromProto(const v1::Path& p);
PeerInfo FromProto(const v1::Peer& p);
ClusterView FromProto(const v1::ListMembersResponse& r);

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_CONVERT_H_
