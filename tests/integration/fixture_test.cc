// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The test fixtures themselves: a daemon that cannot come up ends its
// fixture at once with how it ended and its log (never a silent wait), and
// the ports they hand out are never handed out twice nor taken already.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <set>

#include "gtest/gtest.h"
#include "tests/integration/daemon_pair.h"
#include "tests/integration/daemon_process.h"

namespace rdmad {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// A listening socket on 127.0.0.1:port, closed on destruction.
class HeldPort {
 public:
  explicit HeldPort(int port) : fd_(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    held_ = bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 && listen(fd_, 1) == 0;
  }
  ~HeldPort() { close(fd_); }
  bool held() const { return held_; }

 private:
  int fd_;
  bool held_ = false;
};

TEST(FixtureTest, PortsAreFreshBelowTheEphemeralRangeAndNeverRepeat) {
  std::set<int> seen;
  for (int i = 0; i < 200; ++i) {
    int port = testing::FreeLoopbackPort();
    ASSERT_GE(port, 10000);
    EXPECT_TRUE(seen.insert(port).second) << "port " << port << " handed out twice";
    HeldPort hold(port);  // free on every address: 127.0.0.1 can take it
    EXPECT_TRUE(hold.held()) << port;
  }
}

TEST(FixtureTest, ADaemonThatCannotBindItsPeerPortEndsAtOnceAndSaysWhy) {
  testing::TempDir dir;
  int port = testing::FreeLoopbackPort();
  HeldPort taken(port);
  ASSERT_TRUE(taken.held());
  std::string socket = dir.File("rdmad.sock");
  std::string config =
      dir.Write("rdmad.toml", "[daemon]\nsocket = \"" + socket +
                                  "\"\nsocket_group = \"\"\npeer_address = \"127.0.0.1\"\n");
  testing::Process daemon(RDMAD_BINARY, {"--config", config},
                          {{"RDMAD_DAEMON_PEER_PORT", std::to_string(port)}},
                          dir.File("rdmad.log"));
  auto code = daemon.WaitExit(10s);
  ASSERT_TRUE(code.has_value()) << daemon.Describe() << "\n" << daemon.log();
  EXPECT_NE(*code, 0);
  EXPECT_NE(daemon.Describe().find("exited with status " + std::to_string(*code)),
            std::string::npos)
      << daemon.Describe();
  EXPECT_NE(daemon.log().find("Address already in use"), std::string::npos) << daemon.log();
  // A wait on what it would have made ends as soon as it is gone.
  auto start = Clock::now();
  EXPECT_FALSE(testing::WaitForPath(socket, 10s, &daemon));
  EXPECT_LT(Clock::now() - start, 1s);
}

TEST(FixtureTest, APairWhoseDaemonFailsToStartSaysHowAndWhyAtOnce) {
  testing::DaemonPair pair;
  auto start = Clock::now();
  // B's config does not parse: rdmad refuses it with file:line and exits.
  Status started = pair.Start("", "[daemon.nonsense\n");
  EXPECT_LT(Clock::now() - start, 5s) << "the fixture waited for a daemon that was gone";
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.message().find("rdmad B did not start: rdmad (pid"), std::string::npos)
      << started.ToString();
  EXPECT_NE(started.message().find("exited with status"), std::string::npos) << started.ToString();
  EXPECT_NE(started.message().find("B.toml:"), std::string::npos) << started.ToString();
}

}  // namespace
}  // namespace rdmad
