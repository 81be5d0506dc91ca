// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/client_directory.h"

#include <sys/socket.h>
#include <unistd.h>

#include <charconv>

namespace rdmad {

bool ClientDirectory::Add(int fd) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0) return false;
  Set(fd, cred.pid);
  return true;
}

void ClientDirectory::Set(int fd, pid_t pid) {
  std::lock_guard lock(mu_);
  pids_[fd] = pid;
}

LocalClient ClientDirectory::Identify(const std::string& peer) const {
  LocalClient client;
  client.name = peer.empty() ? "unknown" : peer;
  constexpr std::string_view kPrefix = "fd:";
  if (peer.compare(0, kPrefix.size(), kPrefix) != 0) return client;
  int fd = -1;
  const char* end = peer.data() + peer.size();
  auto [at, error] = std::from_chars(peer.data() + kPrefix.size(), end, fd);
  if (error != std::errc() || at != end) return client;
  {
    std::lock_guard lock(mu_);
    auto it = pids_.find(fd);
    if (it == pids_.end()) return client;
    client.pid = it->second;
  }
  client.name = "pid " + std::to_string(client.pid);
  client.self = client.pid == getpid();
  return client;
}

}  // namespace rdmad
