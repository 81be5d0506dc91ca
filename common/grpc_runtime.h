// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Process-wide settings of the gRPC runtime that rdmad's programs and the
// client library share.

#ifndef RDMAD_COMMON_GRPC_RUNTIME_H_
#define RDMAD_COMMON_GRPC_RUNTIME_H_

namespace rdmad {

// Turns off abseil's lock-order checking in this process. An abseil built
// without NDEBUG (Debian's is) records, on every absl::Mutex lock, which
// locks the thread already holds in one global graph, and aborts the
// process on a cycle: a debugging aid that gRPC's locks pay for on every
// call. A release build of abseil does not check; this makes Debian's
// behave as one. Thread-safe; only the first call in a process sets the
// mode, so an application that turns the checks back on afterwards (with
// absl::SetMutexDeadlockDetectionMode) keeps them through later calls.
void UseReleaseMutexChecks();

}  // namespace rdmad

#endif  // RDMAD_COMMON_GRPC_RUNTIME_H_
