// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Caller: who is at the other end of a local API call, from the kernel's
// SO_PEERCRED of its connection (docs/security.md). The objects a local
// client creates (channels, listeners and their requests, pool clients)
// belong to its uid: another uid neither sees nor touches them, unless it
// is an admin (uid 0, or a member of daemon.admin_group), who sees and
// closes everything. The pid names the client in limits and in the log.
//
// Thread safety: a plain value.

#ifndef RDMAD_DAEMON_CLIENTS_CALLER_H_
#define RDMAD_DAEMON_CLIENTS_CALLER_H_

#include <sys/types.h>

#include <string>

namespace rdmad {

// No uid: a connection whose credentials the kernel did not give. It owns
// nothing and matches nobody.
inline constexpr uid_t kNoUid = static_cast<uid_t>(-1);

// Who an object belongs to.
struct Owner {
  uid_t uid = kNoUid;
  pid_t pid = 0;
};

struct Caller {
  pid_t pid = 0;  // 0: unknown
  uid_t uid = kNoUid;
  bool admin = false;  // sees and closes every client's objects
  bool self = false;   // the daemon's own process (its echo service)
  std::string name;    // "pid 1234", or the connection's peer string when unknown

  // The daemon itself, for objects it creates on its own behalf and tests.
  static Caller Daemon() {
    return {.pid = 0, .uid = 0, .admin = true, .self = true, .name = "rdmad"};
  }
  // A plain (not admin) client: for tests.
  static Caller User(uid_t uid, pid_t pid) {
    return {.pid = pid, .uid = uid, .name = "pid " + std::to_string(pid)};
  }

  Owner owner() const { return {uid, pid}; }
  // Whether caller is owner_uid itself (acting as the owner, not as admin).
  bool Is(uid_t owner_uid) const { return uid != kNoUid && uid == owner_uid; }
  // Whether this caller may see and act on an object owned by owner_uid.
  bool Reaches(uid_t owner_uid) const { return admin || Is(owner_uid); }
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_CLIENTS_CALLER_H_
