// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// CompletionSignal: the eventfd behind Channel::CompletionFd and Arm. The
// channel calls Notify() whenever something the application may wait for
// happens (a whole message, a notification, a transfer done, a failure or
// close); the eventfd becomes readable only when the application armed it
// (Arm found nothing waiting), so a busy channel costs no system call per
// completion. Armed() clears the fd and arms it. The eventfd is opened on
// the first CompletionFd call: a channel nobody polls has no extra fd.
//
// Thread safety: none of its own; the channel's mutex guards every call.

#ifndef RDMAD_CLIENT_SRC_COMPLETION_SIGNAL_H_
#define RDMAD_CLIENT_SRC_COMPLETION_SIGNAL_H_

#include "rdmad/status.h"

namespace rdmad::internal {

class CompletionSignal {
 public:
  CompletionSignal() = default;
  ~CompletionSignal();
  CompletionSignal(const CompletionSignal&) = delete;
  CompletionSignal& operator=(const CompletionSignal&) = delete;

  // The eventfd, opened on the first call (non-blocking, close-on-exec).
  StatusOr<int> Open();
  bool open() const { return fd_ >= 0; }

  // Makes the fd readable if armed, and disarms it.
  void Notify();
  // Nothing waits: clears the fd and arms it.
  void Armed();

 private:
  int fd_ = -1;
  bool armed_ = false;
};

// ReadySignal: an eventfd that is readable exactly while Set(true) holds
// (Listener::RequestFd: a channel request is waiting). Opened on the first
// Open call.
//
// Thread safety: none of its own; the owner's mutex guards every call.
class ReadySignal {
 public:
  ReadySignal() = default;
  ~ReadySignal();
  ReadySignal(const ReadySignal&) = delete;
  ReadySignal& operator=(const ReadySignal&) = delete;

  // The eventfd, opened on the first call (non-blocking, close-on-exec),
  // readable if ready.
  StatusOr<int> Open(bool ready);
  // Makes the fd readable (ready) or not.
  void Set(bool ready);

 private:
  int fd_ = -1;
  bool set_ = false;
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_COMPLETION_SIGNAL_H_
