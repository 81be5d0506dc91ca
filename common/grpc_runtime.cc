// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/grpc_runtime.h"

#include <absl/synchronization/mutex.h>

#include <mutex>

namespace rdmad {

void UseReleaseMutexChecks() {
  static std::once_flag once;
  std::call_once(once, [] { absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore); });
}

}  // namespace rdmad
