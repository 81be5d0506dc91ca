// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/lifecycle/instance_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace rdmad {
namespace {

std::string ReadOwnerPid(int fd) {
  char buf[32] = {};
  ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  std::string pid = n > 0 ? std::string(buf, size_t(n)) : "";
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.empty() ? "unknown" : pid;
}

}  // namespace

StatusOr<std::unique_ptr<InstanceLock>> InstanceLock::Acquire(const std::string& socket_path) {
  std::string path = socket_path + ".lock";
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640);
  if (fd < 0) return Status::FromErrno(errno, "cannot open lock file " + path);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    std::string owner = ReadOwnerPid(fd);
    close(fd);
    if (err == EWOULDBLOCK) {
      return Status::FailedPrecondition("another rdmad (pid " + owner + ") is already serving " +
                                        socket_path + "; refusing to start a second one");
    }
    return Status::FromErrno(err, "cannot lock " + path);
  }
  std::string pid = std::to_string(getpid()) + "\n";
  bool wrote =
      ftruncate(fd, 0) == 0 && pwrite(fd, pid.data(), pid.size(), 0) == ssize_t(pid.size());
  (void)wrote;  // The lock holds either way; only a rival's message is poorer.
  return std::unique_ptr<InstanceLock>(new InstanceLock(std::move(path), fd));
}

InstanceLock::~InstanceLock() {
  if (fd_ >= 0) {
    bool cleared = ftruncate(fd_, 0) == 0;  // best effort: no stale pid
    (void)cleared;
    close(fd_);
  }
}

}  // namespace rdmad
