// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/lifecycle/unix_listener.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>

#include "spdlog/spdlog.h"

namespace rdmad {
namespace {

StatusOr<gid_t> LookupGroup(const std::string& name) {
  std::vector<char> buf(16384);
  group grp{};
  group* result = nullptr;
  int rc = getgrnam_r(name.c_str(), &grp, buf.data(), buf.size(), &result);
  if (rc != 0) return Status::FromErrno(rc, "cannot look up group " + name);
  if (result == nullptr) return Status::NotFound("group \"" + name + "\" does not exist");
  return result->gr_gid;
}

void GiveToGroup(const std::string& path, gid_t gid, const std::string& group) {
  if (chown(path.c_str(), uid_t(-1), gid) != 0) {
    spdlog::warn("cannot give {} to group {}: {}", path, group, std::strerror(errno));
  }
}

// The socket's group, or none ("" or an unknown group, which is logged).
std::optional<gid_t> SocketGroup(const UnixListenerOptions& options) {
  if (options.group.empty()) return std::nullopt;
  auto gid = LookupGroup(options.group);
  if (!gid.ok()) {
    spdlog::warn("socket {} keeps the daemon's group: {}", options.path, gid.status().message());
    return std::nullopt;
  }
  return *gid;
}

// Gives the socket file at path its mode and group.
Status ApplyOwnership(const std::string& path, const UnixListenerOptions& options,
                      std::optional<gid_t> gid) {
  if (chmod(path.c_str(), options.mode) != 0) return Status::FromErrno(errno, "chmod " + path);
  if (gid) GiveToGroup(path, *gid, options.group);
  return Status::Ok();
}

}  // namespace

StatusOr<bool> EnsureRuntimeDir(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) return false;
  std::error_code ec;
  if (std::filesystem::exists(dir, ec)) {
    const char* runtime = std::getenv("RUNTIME_DIRECTORY");
    return runtime != nullptr && std::filesystem::equivalent(dir, runtime, ec);
  }
  if (mkdir(dir.c_str(), 0750) != 0) {
    if (errno == EEXIST) return false;
    return Status::FromErrno(errno, "cannot create runtime directory " + dir.string());
  }
  return true;
}

StatusOr<std::unique_ptr<UnixListener>> UnixListener::Bind(const UnixListenerOptions& options) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (options.path.size() >= sizeof(addr.sun_path)) {
    return Status::InvalidArgument("socket path too long (max " +
                                   std::to_string(sizeof(addr.sun_path) - 1) +
                                   " bytes): " + options.path);
  }
  std::memcpy(addr.sun_path, options.path.c_str(), options.path.size() + 1);

  // Nothing may reach the socket before its mode and group are in place:
  // the directory is given to the group first, the socket is bound under a
  // temporary name (with a tight umask, so it is never briefly
  // world-writable), set up and listening, and only then renamed into place.
  std::optional<gid_t> gid = SocketGroup(options);
  if (gid && options.owns_directory) {
    GiveToGroup(std::filesystem::path(options.path).parent_path(), *gid, options.group);
  }
  std::string staging = options.path + ".new";
  if (staging.size() >= sizeof(addr.sun_path)) staging = options.path;  // no room: bind in place
  std::memcpy(addr.sun_path, staging.c_str(), staging.size() + 1);

  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::FromErrno(errno, "socket");
  // The caller holds the instance lock, so a file here is a stale socket.
  unlink(staging.c_str());
  mode_t old_umask = umask(0177);
  int rc = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  int bind_errno = errno;
  umask(old_umask);
  if (rc != 0) {
    close(fd);
    return Status::FromErrno(bind_errno, "cannot bind " + options.path);
  }
  Status ready = ApplyOwnership(staging, options, gid);
  if (ready.ok() && listen(fd, 128) != 0) ready = Status::FromErrno(errno, "listen");
  if (ready.ok() && staging != options.path && rename(staging.c_str(), options.path.c_str()) != 0) {
    ready = Status::FromErrno(errno, "cannot move the socket to " + options.path);
  }
  if (!ready.ok()) {
    close(fd);
    unlink(staging.c_str());
    return ready;
  }
  int wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake < 0) {
    close(fd);
    return Status::FromErrno(errno, "eventfd");
  }
  return std::unique_ptr<UnixListener>(new UnixListener(options, fd, wake));
}

UnixListener::UnixListener(UnixListenerOptions options, int fd, int wake_fd)
    : options_(std::move(options)), fd_(fd), wake_fd_(wake_fd) {}

UnixListener::~UnixListener() {
  Stop();
  close(fd_);
  close(wake_fd_);
}

void UnixListener::Start(ConnectionSink* sink) {
  sink_ = sink;
  thread_ = std::thread([this] { AcceptLoop(); });
}

void UnixListener::Stop() {
  if (stopped_) return;
  stopped_ = true;
  uint64_t one = 1;
  if (write(wake_fd_, &one, sizeof(one)) < 0) {
    spdlog::error("cannot wake the accept thread: {}", std::strerror(errno));
  }
  if (thread_.joinable()) thread_.join();
  unlink(options_.path.c_str());
}

void UnixListener::AcceptLoop() {
  pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
  for (;;) {
    int n = poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      spdlog::error("local API accept loop: poll: {}", std::strerror(errno));
      return;
    }
    if (fds[1].revents) return;
    if (fds[0].revents & POLLIN) AcceptOne();
  }
}

void UnixListener::AcceptOne() {
  int fd = accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) {
    if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
      spdlog::warn("local API accept: {}", std::strerror(errno));
      if (errno == EMFILE || errno == ENFILE) usleep(100 * 1000);
    }
    return;
  }
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    spdlog::warn("local API: cannot read peer credentials: {}", std::strerror(errno));
    close(fd);
    return;
  }
  if (!Allowed(cred.uid)) {
    spdlog::warn(
        "local API: refused connection from uid {} pid {}: uid not in "
        "daemon.allowed_uids",
        cred.uid, cred.pid);
    close(fd);
    return;
  }
  {
    std::lock_guard lock(mu_);
    if (!UnderQuotaLocked(cred.uid)) {
      // Logged on the 1st, 2nd, 4th, 8th ... refusal.
      ++refused_;
      CountRefusal(options_.refusals, "limits.max_connections_per_uid");
      if ((refused_ & (refused_ - 1)) == 0) {
        spdlog::warn(
            "local API: refused connection from uid {} pid {}: the uid has {} connections open, "
            "its limit (limits.max_connections_per_uid = {}); {} refused in all",
            cred.uid, cred.pid, options_.max_connections_per_uid, options_.max_connections_per_uid,
            refused_);
      }
      close(fd);
      return;
    }
    struct stat st {};
    if (fstat(fd, &st) == 0) handed_[fd] = Handed{cred.uid, cred.pid, st.st_ino};
  }
  accepted_.fetch_add(1);
  spdlog::info("local API: client connected: uid {} pid {}", cred.uid, cred.pid);
  sink_->AddConnection(fd);
}

bool UnixListener::Limited(uid_t uid) const {
  return options_.max_connections_per_uid > 0 && uid != 0 && uid != getuid();
}

void UnixListener::PruneLocked() {
  for (auto it = handed_.begin(); it != handed_.end();) {
    struct stat st {};
    if (fstat(it->first, &st) != 0 || st.st_ino != it->second.inode) {
      it = handed_.erase(it);  // gRPC closed it
    } else {
      ++it;
    }
  }
}

bool UnixListener::UnderQuotaLocked(uid_t uid) {
  if (!Limited(uid)) return true;
  PruneLocked();
  int open = 0;
  for (const auto& [fd, h] : handed_) open += h.uid == uid;
  return open < options_.max_connections_per_uid;
}

LocalClientCount UnixListener::Clients() {
  std::lock_guard lock(mu_);
  PruneLocked();
  std::set<pid_t> pids;
  for (const auto& [fd, h] : handed_) pids.insert(h.pid);
  return {handed_.size(), pids.size()};
}

bool UnixListener::Allowed(uid_t uid) const {
  if (options_.allowed_uids.empty() || uid == 0 || uid == getuid()) return true;
  return std::find(options_.allowed_uids.begin(), options_.allowed_uids.end(), int64_t(uid)) !=
         options_.allowed_uids.end();
}

}  // namespace rdmad
