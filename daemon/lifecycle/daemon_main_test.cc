// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/lifecycle/daemon_main.h"

#include "gtest/gtest.h"

namespace rdmad {
namespace {

TEST(DaemonFlagsTest, DefaultsToTheSystemConfig) {
  auto flags = ParseDaemonFlags({});
  ASSERT_TRUE(flags.ok());
  EXPECT_EQ(flags->config_path, RDMAD_DEFAULT_CONFIG);
  EXPECT_FALSE(flags->config_given);
  EXPECT_FALSE(flags->socket.has_value());
}

TEST(DaemonFlagsTest, TakesValuesInBothSpellings) {
  auto flags = ParseDaemonFlags({"--config", "a.toml", "--socket=/x/s.sock"});
  ASSERT_TRUE(flags.ok()) << flags.status().ToString();
  EXPECT_EQ(flags->config_path, "a.toml");
  EXPECT_TRUE(flags->config_given);
  EXPECT_EQ(flags->socket.value_or(""), "/x/s.sock");
  auto check = ParseDaemonFlags({"--check-config=b.toml"});
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(check->check_config.value_or(""), "b.toml");
}

TEST(DaemonFlagsTest, SysfsRootIsOptional) {
  auto none = ParseDaemonFlags({});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->sysfs_root.has_value());
  auto spaced = ParseDaemonFlags({"--sysfs-root", "fixtures/sysfs/a"});
  ASSERT_TRUE(spaced.ok()) << spaced.status().ToString();
  EXPECT_EQ(spaced->sysfs_root.value_or(""), "fixtures/sysfs/a");
  auto joined = ParseDaemonFlags({"--sysfs-root=/tmp/empty"});
  ASSERT_TRUE(joined.ok());
  EXPECT_EQ(joined->sysfs_root.value_or(""), "/tmp/empty");
  auto missing = ParseDaemonFlags({"--sysfs-root"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("--sysfs-root needs a value"), std::string::npos);
}

TEST(DaemonFlagsTest, RejectsUnknownAndMissingValues) {
  auto unknown = ParseDaemonFlags({"--frobnicate"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("--frobnicate"), std::string::npos);
  auto missing = ParseDaemonFlags({"--config"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("needs a value"), std::string::npos);
}

TEST(DaemonFlagsTest, UsageNamesEveryFlag) {
  std::string usage = DaemonUsage();
  for (const char* flag :
       {"--config", "--check-config", "--socket", "--sysfs-root", "--version", "--help"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  }
  EXPECT_NE(usage.find("for tests: read RDMA devices from this sysfs tree"), std::string::npos);
}

}  // namespace
}  // namespace rdmad
