// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// bench through rdmactl::Run: usage errors exit 64 before any daemon is
// contacted; no daemon is exit 2.

#include <cstdio>
#include <string>
#include <vector>

#include "client/rdmactl/rdmactl.h"
#include "gtest/gtest.h"

namespace rdmactl {
namespace {

int RunCapturing(const std::vector<std::string>& argv, std::string* out_text,
                 std::string* err_text) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  int code = Run(argv, out, err);
  for (auto [file, text] : {std::pair{out, out_text}, std::pair{err, err_text}}) {
    std::rewind(file);
    text->clear();
    for (int c; (c = std::fgetc(file)) != EOF;) text->push_back(char(c));
    std::fclose(file);
  }
  return code;
}

TEST(CommandsBenchTest, UsageErrors) {
  std::string out, err;
  EXPECT_EQ(RunCapturing({"bench"}, &out, &err), kExitUsage);
  EXPECT_NE(err.find("rdmactl bench: PEER is required"), std::string::npos) << err;
  EXPECT_EQ(RunCapturing({"bench", "B", "--test", "nope"}, &out, &err), kExitUsage);
  EXPECT_NE(err.find("--test: nope not in {lat,bw,write,read,kv,idle,connect}"), std::string::npos)
      << err;
  EXPECT_EQ(RunCapturing({"bench", "B", "--test", "idle", "--size", "4"}, &out, &err), kExitUsage);
  EXPECT_EQ(err, "rdmactl bench: --test idle takes no --size\n");
  EXPECT_TRUE(out.empty());
}

TEST(CommandsBenchTest, NoDaemonIsUnreachable) {
  std::string out, err;
  EXPECT_EQ(RunCapturing({"--socket", "/nonexistent/rdmad.sock", "bench", "B"}, &out, &err),
            kExitUnreachable);
  EXPECT_NE(err.find("rdmad is not reachable"), std::string::npos) << err;
}

TEST(CommandsBenchTest, ListedInHelpWithItsOptionsInItsOwn) {
  std::string out, err;
  EXPECT_EQ(RunCapturing({"help"}, &out, &err), kExitOk);
  EXPECT_NE(out.find("  bench      perftest-style benchmarks"), std::string::npos) << out;
  EXPECT_EQ(RunCapturing({"bench", "--help"}, &out, &err), kExitOk);
  for (const char* option : {"PEER", "--test", "--sizes", "--duration", "--depth", "--pooled"}) {
    EXPECT_NE(out.find(option), std::string::npos) << option << "\n" << out;
  }
}

}  // namespace
}  // namespace rdmactl
