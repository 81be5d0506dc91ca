// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Caller-supplied text at the RPC edge (docs/security.md, "Bounded
// input"): names longer than their kind allows are INVALID_ARGUMENT before
// any lookup, and error messages quote caller text only up to kMaxQuoted
// bytes, so that a 64 KiB name never comes back whole (gRPC clients refuse
// a status message that large as oversized metadata).
//
// Thread safety: pure functions.

#ifndef RDMAD_DAEMON_RPC_REQUEST_CHECKS_H_
#define RDMAD_DAEMON_RPC_REQUEST_CHECKS_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "google/protobuf/message.h"
#include "rdmad/status.h"

namespace rdmad {

inline constexpr size_t kMaxDeviceName = 64;  // the kernel's IB_DEVICE_NAME_MAX
inline constexpr size_t kMaxPeerName = 255;   // a host name, or an IP literal with a port
inline constexpr size_t kMaxQuoted = 64;

// OK, or INVALID_ARGUMENT "FIELD: 1..MAX bytes required (got N)" without
// quoting value.
Status CheckName(std::string_view field, std::string_view value, size_t max);

// "\"text\"", or its first kMaxQuoted bytes: "\"text...\" (N bytes)".
std::string Quote(std::string_view text);

// OK, or INVALID_ARGUMENT when request carries fields this rdmad does not
// know: it was written by a library of another 0.x release (docs/wire.md,
// "Versions").
Status CheckKnownFields(const google::protobuf::Message& request);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_REQUEST_CHECKS_H_
