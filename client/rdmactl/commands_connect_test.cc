// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// connect and ping's argument checks, through rdmactl::Run: usage errors
// exit 64 before any daemon is contacted.

#include <cstdio>
#include <string>
#include <vector>

#include "client/rdmactl/rdmactl.h"
#include "gtest/gtest.h"

namespace rdmactl {
namespace {

// Runs rdmactl; returns its exit code and what it wrote to err.
int RunCapturing(const std::vector<std::string>& argv, std::string* err_text) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  int code = Run(argv, out, err);
  std::rewind(err);
  err_text->clear();
  for (int c; (c = std::fgetc(err)) != EOF;) err_text->push_back(char(c));
  std::fclose(out);
  std::fclose(err);
  return code;
}

TEST(CommandsConnectTest, UsageErrors) {
  std::string err;
  EXPECT_EQ(RunCapturing({"ping"}, &err), kExitUsage);
  EXPECT_EQ(err,
            "rdmactl ping: PEER missing; usage: rdmactl ping PEER [-c N] [-s SIZE] "
            "[-i INTERVAL_MS] [-W TIMEOUT_MS] [-q] [--tcp]\n");
  EXPECT_EQ(RunCapturing({"ping", "B", "-c"}, &err), kExitUsage);
  EXPECT_NE(err.find("-c needs a number"), std::string::npos) << err;
  EXPECT_EQ(RunCapturing({"ping", "B", "-c", "0"}, &err), kExitUsage);
  EXPECT_NE(err.find("-c: at least 1"), std::string::npos) << err;
  EXPECT_EQ(RunCapturing({"ping", "B", "-s", "1073741825"}, &err), kExitUsage);
  EXPECT_NE(err.find("-s: \"1073741825\" is not a number from 0 to 1073741824"), std::string::npos)
      << err;
  EXPECT_EQ(RunCapturing({"ping", "B", "C"}, &err), kExitUsage);
  EXPECT_NE(err.find("one PEER only"), std::string::npos) << err;
  EXPECT_EQ(RunCapturing({"connect", "B", "-c", "3"}, &err), kExitUsage);
  EXPECT_NE(err.find("rdmactl connect: unknown option -c; usage: rdmactl connect PEER [--tcp]"),
            std::string::npos)
      << err;
}

TEST(CommandsConnectTest, NoDaemonIsUnreachable) {
  std::string err;
  EXPECT_EQ(RunCapturing({"--socket", "/nonexistent/rdmad.sock", "ping", "B", "-i", "0"}, &err),
            kExitUnreachable);
  EXPECT_NE(err.find("rdmad is not reachable"), std::string::npos) << err;
}

}  // namespace
}  // namespace rdmactl
