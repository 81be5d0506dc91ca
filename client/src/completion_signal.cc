// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/completion_signal.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "client/src/client_log.h"

namespace rdmad::internal {

CompletionSignal::~CompletionSignal() {
  if (fd_ >= 0) close(fd_);
}

StatusOr<int> CompletionSignal::Open() {
  if (fd_ < 0) {
    fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd_ < 0) return Status::ResourceExhausted(std::string("eventfd: ") + std::strerror(errno));
  }
  return fd_;
}

void CompletionSignal::Notify() {
  if (fd_ < 0 || !armed_) return;
  armed_ = false;
  uint64_t one = 1;
  if (write(fd_, &one, sizeof(one)) < 0 && errno != EAGAIN) {
    ClientLog().warn("completion fd: eventfd write: {}", std::strerror(errno));
  }
}

void CompletionSignal::Armed() {
  if (fd_ < 0) return;
  uint64_t count = 0;
  while (read(fd_, &count, sizeof(count)) == sizeof(count)) {
  }
  armed_ = true;
}

ReadySignal::~ReadySignal() {
  if (fd_ >= 0) close(fd_);
}

StatusOr<int> ReadySignal::Open(bool ready) {
  if (fd_ < 0) {
    fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd_ < 0) return Status::ResourceExhausted(std::string("eventfd: ") + std::strerror(errno));
    set_ = false;
  }
  Set(ready);
  return fd_;
}

void ReadySignal::Set(bool ready) {
  if (fd_ < 0 || ready == set_) return;
  uint64_t count = 1;
  ssize_t n = ready ? write(fd_, &count, sizeof(count)) : read(fd_, &count, sizeof(count));
  if (n < 0 && errno != EAGAIN) {
    ClientLog().warn("ready fd: eventfd {}: {}", ready ? "write" : "read", std::strerror(errno));
  }
  set_ = ready;
}

}  // namespace rdmad::internal
