// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The examples run between two daemons: examples/kv_transfer's prefill
// process behind B, its decode process behind A. Over TCP on the host, over
// RDMA in the lab (LAB_IP).

#include <cstdlib>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "tests/integration/daemon_pair.h"
#include "tests/integration/daemon_process.h"

namespace rdmad {
namespace {

using namespace std::chrono_literals;

TEST(ExampleTest, KvTransferPullsBlocksInBatchesAndIsNotified) {
  testing::DaemonPair pair;
  Status started = pair.Start();
  ASSERT_TRUE(started.ok()) << started.ToString();
  testing::TempDir dir;
  testing::Process prefill(KV_TRANSFER,
                           {"prefill", "--socket", pair.b().socket, "--blocks", "1024",
                            "--block-size", "16384", "--rounds", "3"},
                           {}, dir.File("prefill.log"));
  ASSERT_TRUE(testing::DaemonPair::WaitForLog(pair.b(), "service kv: listener registered"))
      << prefill.log() << pair.Logs();
  std::string out;
  int code = -1;
  for (int attempt = 0; attempt < 20; ++attempt) {  // until A's session to B is up
    code = testing::RunCommand(KV_TRANSFER, {"decode", "B", "--socket", pair.a().socket}, &out);
    if (code == 0 || out.find("UNAVAILABLE") == std::string::npos) break;
    std::this_thread::sleep_for(250ms);
  }
  EXPECT_EQ(code, 0) << out << prefill.log() << pair.Logs();
  std::printf("%s", out.c_str());
  const char* transport = std::getenv("LAB_IP") != nullptr ? "RDMA" : "TCP";
  EXPECT_NE(out.find(std::string("KV OK over ") + transport), std::string::npos) << out;
  EXPECT_NE(out.find("round 2: 1024 blocks of 16384 bytes (16.0 MiB)"), std::string::npos) << out;
  EXPECT_EQ(prefill.WaitExit(30s), 0) << prefill.log();
  EXPECT_NE(prefill.log().find("prefill: 3 rounds served"), std::string::npos) << prefill.log();
}

}  // namespace
}  // namespace rdmad
