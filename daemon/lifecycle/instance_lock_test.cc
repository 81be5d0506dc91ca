// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/lifecycle/instance_lock.h"

#include <unistd.h>

#include <filesystem>

#include "gtest/gtest.h"

namespace rdmad {
namespace {

std::string TempSocketPath() {
  return (std::filesystem::temp_directory_path() /
          ("rdmad-lock-test-" + std::to_string(getpid()) + ".sock"))
      .string();
}

TEST(InstanceLockTest, SecondAcquireIsRefusedWithOwnerPid) {
  std::string socket = TempSocketPath();
  auto first = InstanceLock::Acquire(socket);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = InstanceLock::Acquire(socket);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("pid " + std::to_string(getpid())), std::string::npos)
      << second.status().message();
  EXPECT_NE(second.status().message().find(socket), std::string::npos);
  first.value().reset();
  auto third = InstanceLock::Acquire(socket);
  EXPECT_TRUE(third.ok()) << third.status().ToString();
  std::filesystem::remove(socket + ".lock");
}

}  // namespace
}  // namespace rdmad
