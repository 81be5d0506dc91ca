// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RdmactlFixture: one real rdmad on a temp socket, reading a sysfs tree the
// test chooses (--sysfs-root), and the real rdmactl run against it. Its log
// is printed when a test fails.
//
// Thread safety: a test fixture, one thread.

#ifndef RDMAD_TESTS_INTEGRATION_RDMACTL_FIXTURE_H_
#define RDMAD_TESTS_INTEGRATION_RDMACTL_FIXTURE_H_

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/daemon_process.h"

namespace rdmad::testing {

class RdmactlFixture : public ::testing::Test {
 public:
  using Json = nlohmann::ordered_json;  // keeps the key order rdmactl prints

 protected:
  // The config file's text: the daemon's socket, then extra_config.
  std::string ConfigText(const std::string& extra_config) const {
    return "[daemon]\nsocket = \"" + socket_ + "\"\nsocket_group = \"\"\n" + extra_config;
  }

  // Starts rdmad on sysfs_root (with extra config text) and waits for it.
  void StartDaemon(const std::string& sysfs_root, const std::string& extra_config = "") {
    socket_ = dir_.File("rdmad.sock");
    config_ = dir_.Write("rdmad.toml", ConfigText(extra_config));
    daemon_ = std::make_unique<Process>(
        RDMAD_BINARY, std::vector<std::string>{"--config", config_, "--sysfs-root", sysfs_root},
        std::map<std::string, std::string>{}, dir_.File("rdmad.log"));
    ASSERT_TRUE(WaitForPath(socket_, std::chrono::seconds(10), daemon_.get()))
        << daemon_->Describe() << "\n"
        << daemon_->log();
  }

  // Runs rdmactl against the daemon; returns its exit code, output in *out.
  int Rdmactl(std::vector<std::string> args, std::string* out) {
    args.insert(args.begin(), {"--socket", socket_});
    return RunCommand(RDMACTL_BINARY, args, out);
  }

  // Runs rdmactl --json ARGS, expects exit code `code` and returns the JSON.
  Json RdmactlJson(std::vector<std::string> args, int code = 0) {
    std::string out;
    args.insert(args.begin(), "--json");
    EXPECT_EQ(Rdmactl(args, &out), code) << out;
    Json json = Json::parse(out, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(json.is_discarded()) << out;
    return json;
  }

  void TearDown() override {
    if (HasFailure() && daemon_ != nullptr) std::fprintf(stderr, "%s\n", daemon_->log().c_str());
  }

  TempDir dir_;
  std::string socket_;
  std::string config_;
  std::unique_ptr<Process> daemon_;
};

}  // namespace rdmad::testing

#endif  // RDMAD_TESTS_INTEGRATION_RDMACTL_FIXTURE_H_
