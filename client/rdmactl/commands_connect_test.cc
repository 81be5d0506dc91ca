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
  EXPECT_NE(err.find("rdmactl ping: PEER is required"), std::string::npos) << err;
  EXPECT_EQ(RunCapturing({"ping", "B", "-c"}, &err), kExitUsage);
  EXPECT_NE(err.find("-c"), std::string::npos) << err;
  EXPECT_EQ(RunCapturing({"ping", "B", "-c", "0"}, &err), kExitUsage);
  EXPECT_NE(err.find("--count: Value 0 not in range 1 to 1000000000"), std::string::npos) << err;
  EXPECT_EQ(RunCapturing({"ping", "B", "-s", "1073741825"}, &err), kExitUsage);
  EXPECT_NE(err.find("--size: Value 1073741825 not in range 0 to 1073741824"), std::string::npos)
      << err;
  EXPECT_EQ(RunCapturing({"ping", "B", "C"}, &err), kExitUsage);
  EXPECT_NE(err.find("not expected: C"), std::string::npos) << err;
  EXPECT_EQ(RunCapturing({"connect", "B", "-c", "3"}, &err), kExitUsage);
  EXPECT_NE(err.find("rdmactl connect: "), std::string::npos) << err;
  EXPECT_NE(err.find("rdmactl connect --help shows its arguments"), std::string::npos) << err;
}

// As iputils' ping: the value glued to its flag; the global options after
// the command too.
TEST(CommandsConnectTest, PingTakesGluedValuesAndGlobalOptionsAfterTheCommand) {
  std::string err;
  EXPECT_EQ(RunCapturing({"ping", "-c2", "-i0", "B", "--socket", "/nonexistent/rdmad.sock"}, &err),
            kExitUnreachable)
      << err;
  EXPECT_NE(err.find("/nonexistent/rdmad.sock"), std::string::npos) << err;
}

TEST(CommandsConnectTest, NoDaemonIsUnreachable) {
  std::string err;
  EXPECT_EQ(RunCapturing({"--socket", "/nonexistent/rdmad.sock", "ping", "B", "-i", "0"}, &err),
            kExitUnreachable);
  EXPECT_NE(err.find("rdmad is not reachable"), std::string::npos) << err;
}

}  // namespace
}  // namespace rdmactl
