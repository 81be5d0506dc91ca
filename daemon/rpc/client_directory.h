// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ClientDirectory says which local process is at the other end of a call,
// for the per-client limits (client_limiter.h). gRPC exposes no peer
// credentials, but it names a connection handed over with
// AddInsecureChannelFromFd "fd:N" (ServerContext::peer()); so the server
// records each accepted fd's SO_PEERCRED here (Add) before gRPC takes the
// fd, and the handlers map the call's peer back (Identify). An fd number is
// reused only after gRPC closed it, and Add then overwrites the entry. A
// call whose connection is not recorded is named by its peer string, so it
// is still limited on its own.
//
// Thread safety: every method may be called from any thread.

#ifndef RDMAD_DAEMON_RPC_CLIENT_DIRECTORY_H_
#define RDMAD_DAEMON_RPC_CLIENT_DIRECTORY_H_

#include <sys/types.h>

#include <map>
#include <mutex>
#include <string>

namespace rdmad {

struct LocalClient {
  pid_t pid = 0;      // 0: unknown
  std::string name;   // "pid 1234", or the peer string when unknown
  bool self = false;  // the daemon's own process (its echo service)
};

class ClientDirectory {
 public:
  // Records the process at the other end of connection fd (SO_PEERCRED);
  // false (nothing recorded) when the kernel does not say.
  bool Add(int fd);
  // Records pid for fd (tests).
  void Set(int fd, pid_t pid);
  // The client of a call whose context->peer() is peer.
  LocalClient Identify(const std::string& peer) const;

 private:
  mutable std::mutex mu_;
  std::map<int, pid_t> pids_;  // by fd; guarded by mu_
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_CLIENT_DIRECTORY_H_
