// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// BuiltinService: a service the daemon runs as a client of its own local API,
// as any application would (the echo service, daemon/echo/). The binary
// builds it (it links the client library; the core does not) and the daemon
// starts and stops it. This header stays free of the client library's
// public headers, which must not meet the core's in one translation unit.
//
// Thread safety: Stop() is called from one thread (the daemon's main
// thread) and returns once the service's threads are gone.

#ifndef RDMAD_DAEMON_BROKER_BUILTIN_SERVICE_H_
#define RDMAD_DAEMON_BROKER_BUILTIN_SERVICE_H_

#include <memory>
#include <string>

#include "rdmad/status.h"

namespace rdmad {

class BuiltinService {
 public:
  virtual ~BuiltinService() = default;
  virtual void Stop() = 0;
};

// Starts a BuiltinService on the daemon's socket: the echo area implements
// it (EchoServiceFactory), the lifecycle calls it, again after a failure.
class BuiltinServiceFactory {
 public:
  virtual ~BuiltinServiceFactory() = default;
  virtual StatusOr<std::unique_ptr<BuiltinService>> Make(const std::string& socket_path) const = 0;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_BROKER_BUILTIN_SERVICE_H_
