// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/client_directory.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

namespace rdmad {

std::vector<gid_t> GroupsOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::vector<gid_t> groups;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Groups:", 0) != 0) continue;
    std::istringstream words(line.substr(7));
    for (long long gid; words >> gid;) {
      if (gid >= 0) groups.push_back(static_cast<gid_t>(gid));
    }
    break;
  }
  return groups;
}

bool ClientDirectory::Add(int fd) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0) return false;
  Set(fd, {.pid = cred.pid, .uid = cred.uid, .gid = cred.gid, .groups = GroupsOf(cred.pid)});
  return true;
}

void ClientDirectory::Set(int fd, PeerCredentials credentials) {
  std::lock_guard lock(mu_);
  clients_[fd] = std::move(credentials);
}

Caller ClientDirectory::Identify(const std::string& peer, std::optional<gid_t> admin_group) const {
  Caller caller;
  caller.name = peer.empty() ? "unknown" : peer;
  constexpr std::string_view kPrefix = "fd:";
  if (peer.compare(0, kPrefix.size(), kPrefix) != 0) return caller;
  int fd = -1;
  const char* end = peer.data() + peer.size();
  auto [at, error] = std::from_chars(peer.data() + kPrefix.size(), end, fd);
  if (error != std::errc() || at != end) return caller;
  PeerCredentials cred;
  {
    std::lock_guard lock(mu_);
    auto it = clients_.find(fd);
    if (it == clients_.end()) return caller;
    cred = it->second;
  }
  caller.pid = cred.pid;
  caller.uid = cred.uid;
  caller.name = "pid " + std::to_string(cred.pid);
  caller.self = cred.pid == getpid();
  caller.admin =
      cred.uid == 0 ||
      (admin_group && (cred.gid == *admin_group ||
                       std::count(cred.groups.begin(), cred.groups.end(), *admin_group)));
  return caller;
}

}  // namespace rdmad
