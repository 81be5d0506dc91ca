// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ClientDirectory says who is at the other end of a call (Caller: pid,
// uid, admin), for ownership (docs/security.md) and the per-client limits
// (client_limiter.h). gRPC exposes no peer credentials, but it names a
// connection handed over with AddInsecureChannelFromFd "fd:N"
// (ServerContext::peer()); so the server records each accepted fd's
// SO_PEERCRED and the process's groups here (Add) before gRPC takes the fd,
// and the handlers map the call's peer back (Identify). An fd number is
// reused only after gRPC closed it, and Add then overwrites the entry. A
// call whose connection is not recorded is named by its peer string: it is
// limited on its own and owns nothing.
//
// Thread safety: every method may be called from any thread.

#ifndef RDMAD_DAEMON_RPC_CLIENT_DIRECTORY_H_
#define RDMAD_DAEMON_RPC_CLIENT_DIRECTORY_H_

#include <sys/types.h>

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "daemon/clients/caller.h"

namespace rdmad {

// A connection's credentials.
struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = kNoUid;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary, when /proc says
};

class ClientDirectory {
 public:
  // Records the process at the other end of connection fd (SO_PEERCRED);
  // false (nothing recorded) when the kernel does not say.
  bool Add(int fd);
  // Records credentials for fd (tests).
  void Set(int fd, PeerCredentials credentials);
  // The client of a call whose context->peer() is peer: an admin when its
  // uid is 0 or admin_group is its group or one of its groups.
  Caller Identify(const std::string& peer, std::optional<gid_t> admin_group = std::nullopt) const;

 private:
  mutable std::mutex mu_;
  std::map<int, PeerCredentials> clients_;  // by fd; guarded by mu_
};

// The supplementary groups of pid ("Groups:" in /proc/PID/status).
std::vector<gid_t> GroupsOf(pid_t pid);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_CLIENT_DIRECTORY_H_
