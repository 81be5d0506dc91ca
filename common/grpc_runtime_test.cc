// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/grpc_runtime.h"

#include <absl/synchronization/mutex.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "rdmad/client.h"

namespace rdmad {
namespace {

// Takes two abseil mutexes in one order, then in the other: the cycle that
// abseil's debug-build checks abort on.
void TakeTwoLocksBothWays() {
  absl::Mutex a, b;
  a.Lock();
  b.Lock();
  b.Unlock();
  a.Unlock();
  b.Lock();
  a.Lock();
  a.Unlock();
  b.Unlock();
}

TEST(GrpcRuntimeTest, ReleaseMutexChecksLetAnInvertedLockOrderRun) {
  EXPECT_EXIT(
      {
        UseReleaseMutexChecks();
        UseReleaseMutexChecks();  // idempotent
        TakeTwoLocksBothWays();
        _exit(0);
      },
      testing::ExitedWithCode(0), "");
}

// The library's Client::Open applies them too, even when no daemon answers
// (Debian's abseil would otherwise check every gRPC lock of the process).
TEST(GrpcRuntimeTest, ClientOpenUsesReleaseMutexChecks) {
  EXPECT_EXIT(
      {
        ClientOptions options;
        options.socket_path = "/nonexistent/rdmad.sock";
        if (Client::Open(options).ok()) _exit(2);
        TakeTwoLocksBothWays();
        _exit(0);
      },
      testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace rdmad
