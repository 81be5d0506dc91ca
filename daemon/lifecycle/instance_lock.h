// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// InstanceLock makes sure one daemon serves one socket path. gRPC unlinks an
// existing socket file before binding, even one a live daemon serves, so the
// daemon takes an exclusive flock on "<socket>.lock" first. The lock file
// holds the owner's pid for the refusal message; it is never unlinked (that
// would let two daemons lock two different inodes).
//
// Thread safety: not thread-safe; one owner.

#ifndef RDMAD_DAEMON_LIFECYCLE_INSTANCE_LOCK_H_
#define RDMAD_DAEMON_LIFECYCLE_INSTANCE_LOCK_H_

#include <memory>
#include <string>

#include "rdmad/status.h"

namespace rdmad {

class InstanceLock {
 public:
  // FAILED_PRECONDITION naming the other daemon's pid when it is held.
  static StatusOr<std::unique_ptr<InstanceLock>> Acquire(const std::string& socket_path);
  ~InstanceLock();

  InstanceLock(const InstanceLock&) = delete;
  InstanceLock& operator=(const InstanceLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  InstanceLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_LIFECYCLE_INSTANCE_LOCK_H_
