// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ReadPem: a PEM file named by a setting, for gRPC's TLS credentials (the
// peer server's and the etcd client's).

#ifndef RDMAD_DAEMON_RPC_PEM_FILE_H_
#define RDMAD_DAEMON_RPC_PEM_FILE_H_

#include <string>

#include "rdmad/status.h"

namespace rdmad {

// The file's text; FAILED_PRECONDITION naming setting and path when it
// cannot be read or holds no PEM block.
StatusOr<std::string> ReadPem(const std::string& path, const char* setting);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_PEM_FILE_H_
