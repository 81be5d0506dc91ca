// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl doctor against two real daemons on loopback (no RDMA device
// here, so the path and the test channel are TCP's): the daemon, the peer,
// its clock and a Write to its echo service are checked, each check named
// with its verdict; a locked-memory limit too low for one channel (prlimit)
// fails its check with the fix; the exit status follows the worst verdict.

#include <sys/resource.h>

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/daemon_pair.h"

namespace rdmad {
namespace {

using Json = nlohmann::json;

class DoctorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status started = pair_.Start();
    ASSERT_TRUE(started.ok()) << started.ToString() << pair_.Logs();
  }
  void TearDown() override {
    if (HasFailure()) std::fprintf(stderr, "%s\n", pair_.Logs().c_str());
  }
  // rdmactl --json doctor ARGS (under prefix, e.g. prlimit): its checks by
  // name, and its exit status in *code.
  std::map<std::string, Json> Doctor(std::vector<std::string> args, int* code, Json* whole,
                                     std::vector<std::string> prefix = {}) {
    std::vector<std::string> argv = prefix;
    argv.insert(argv.end(), {RDMACTL_BINARY, "--socket", pair_.a().socket, "--json", "doctor"});
    argv.insert(argv.end(), args.begin(), args.end());
    std::string out;
    std::string binary = argv.front();
    argv.erase(argv.begin());
    *code = testing::RunCommand(binary, argv, &out);
    *whole = Json::parse(out, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(whole->is_discarded()) << out;
    std::map<std::string, Json> by_name;
    if (!whole->is_discarded()) {
      for (const Json& c : (*whole)["checks"]) by_name[c["name"].get<std::string>()] = c;
    }
    return by_name;
  }

  testing::DaemonPair pair_;
};

TEST_F(DoctorTest, ThePathToAPeerAndATestWriteAreChecked) {
  // A's session to B first (the doctor does not wait for one).
  auto channel = pair_.ConnectAB("rdmad.echo");
  ASSERT_TRUE(channel.ok()) << channel.status().ToString();
  (*channel)->Close();
  int code = -1;
  Json whole;
  auto checks = Doctor({"B"}, &code, &whole);
  ASSERT_FALSE(checks.empty()) << whole;
  EXPECT_EQ(code, whole["exit_code"].get<int>()) << whole;
  EXPECT_EQ(checks["socket"]["status"], "ok") << whole;
  EXPECT_EQ(checks["config"]["status"], "ok") << whole;
  EXPECT_EQ(checks["peer"]["status"], "ok") << whole;
  EXPECT_NE(checks["peer"]["detail"].get<std::string>().find("up: rdmad " RDMAD_VERSION),
            std::string::npos)
      << whole;
  EXPECT_EQ(checks["clock"]["status"], "ok") << whole;   // the same host's clock
  EXPECT_EQ(checks["path"]["status"], "warn") << whole;  // no RDMA device here
  EXPECT_EQ(checks["channel"]["status"], "warn") << whole;
  EXPECT_NE(checks["channel"]["detail"].get<std::string>().find("over TCP"), std::string::npos)
      << whole;
  EXPECT_EQ(checks["write"]["status"], "ok") << whole;
  EXPECT_NE(checks["write"]["detail"].get<std::string>().find("4 KiB written and read back"),
            std::string::npos)
      << whole;
  EXPECT_GE(code, 1) << "a channel over TCP is a warning at least";

  checks = Doctor({"no-such-peer"}, &code, &whole);
  EXPECT_EQ(checks["peer"]["status"], "fail") << whole;
  EXPECT_EQ(code, 2);
}

TEST_F(DoctorTest, ALockedMemoryLimitBelowOneChannelFails) {
  int code = -1;
  Json whole;
  auto checks = Doctor({}, &code, &whole, {"/usr/bin/prlimit", "--memlock=65536:65536"});
  ASSERT_FALSE(checks.empty()) << whole;
  EXPECT_EQ(checks["memlock"]["status"], "fail") << whole;
  EXPECT_NE(checks["memlock"]["detail"].get<std::string>().find("not one channel fits"),
            std::string::npos)
      << whole;
  EXPECT_NE(checks["memlock"]["fix"].get<std::string>().find("LimitMEMLOCK=infinity"),
            std::string::npos)
      << whole;
  EXPECT_EQ(code, 2);
  // As high as this process may go: ok once 16 channels fit (3 MiB).
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_MEMLOCK, &limit), 0);
  std::string hard =
      limit.rlim_max == RLIM_INFINITY ? "unlimited" : std::to_string(limit.rlim_max);
  checks = Doctor({}, &code, &whole, {"/usr/bin/prlimit", "--memlock=" + hard + ":" + hard});
  bool fits = limit.rlim_max == RLIM_INFINITY || limit.rlim_max >= 16 * (188u << 10);
  EXPECT_EQ(checks["memlock"]["status"], fits ? "ok" : "warn") << whole;
  if (limit.rlim_max == RLIM_INFINITY) EXPECT_EQ(checks["memlock"]["detail"], "unlimited");
}

}  // namespace
}  // namespace rdmad
