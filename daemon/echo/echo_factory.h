// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The echo service as the daemon binary sees it: a BuiltinServiceFactory.
// Kept apart from echo_service.h, which includes the client library's
// public headers (they must not meet the core's in one translation unit).
//
// Thread safety: see echo_service.h.

#ifndef RDMAD_DAEMON_ECHO_ECHO_FACTORY_H_
#define RDMAD_DAEMON_ECHO_ECHO_FACTORY_H_

#include <memory>
#include <string>

#include "daemon/broker/builtin_service.h"

namespace rdmad {

// Connects to the daemon at socket_path and serves rdmad.echo there.
StatusOr<std::unique_ptr<BuiltinService>> MakeEchoService(const std::string& socket_path);

class EchoServiceFactory final : public BuiltinServiceFactory {
 public:
  StatusOr<std::unique_ptr<BuiltinService>> Make(const std::string& socket_path) const override {
    return MakeEchoService(socket_path);
  }
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_ECHO_ECHO_FACTORY_H_
