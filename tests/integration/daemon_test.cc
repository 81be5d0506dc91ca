// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Starts the real rdmad binary on a temp socket and checks its lifecycle
// through the client library, rdmactl and a fake systemd notify socket.

#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "rdmad/client.h"
#include "tests/integration/daemon_process.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeNotifySocket;
using testing::Process;
using testing::RunCommand;
using testing::TempDir;

std::string ConfigText(const std::string& socket, const std::string& extra = "") {
  return "[daemon]\nsocket = \"" + socket + "\"\nsocket_group = \"\"\n" + extra;
}

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_ = dir_.File("run/rdmad.sock");
    config_ = dir_.Write("rdmad.toml", ConfigText(socket_));
  }

  // Starts rdmad and waits until it answers.
  std::unique_ptr<Process> StartDaemon(std::map<std::string, std::string> env = {},
                                       const std::string& log = "rdmad.log") {
    auto p = std::make_unique<Process>(RDMAD_BINARY, std::vector<std::string>{"--config", config_},
                                       env, dir_.File(log));
    EXPECT_TRUE(testing::WaitForPath(socket_, seconds(10), p.get())) << p->Describe() << "\n"
                                                                     << p->log();
    return p;
  }

  std::unique_ptr<Client> Connect() {
    ClientOptions options;
    options.socket_path = socket_;
    auto client = Client::Open(options);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(client).value() : nullptr;
  }

  TempDir dir_;
  std::string socket_;
  std::string config_;
};

TEST_F(DaemonTest, StatusThroughTheClientLibrary) {
  auto daemon = StartDaemon();
  auto client = Connect();
  ASSERT_NE(client, nullptr);
  auto status = client->GetStatus();
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ(status->pid, daemon->pid());
  EXPECT_EQ(status->version, RDMAD_VERSION);
  EXPECT_EQ(status->config_file, config_);
  EXPECT_EQ(status->socket_path, socket_);
  EXPECT_EQ(status->config_generation, 1u);
  EXPECT_GE(status->uptime_seconds, 0.0);
  EXPECT_GE(status->connections_accepted, 1u);
}

TEST_F(DaemonTest, StatusThroughRdmactlJson) {
  auto daemon = StartDaemon();
  std::string out;
  ASSERT_EQ(RunCommand(RDMACTL_BINARY, {"--socket", socket_, "--json", "status"}, &out), 0) << out;
  auto json = nlohmann::json::parse(out);
  EXPECT_EQ(json["pid"].get<int>(), daemon->pid());
  EXPECT_EQ(json["config_file"].get<std::string>(), config_);
  EXPECT_EQ(json["device_count"].get<int>(), 0);
  EXPECT_TRUE(json["devices"].is_array()) << out;
}

TEST_F(DaemonTest, RdmactlSaysWhenTheDaemonIsNotReachable) {
  std::string out;
  EXPECT_EQ(RunCommand(RDMACTL_BINARY, {"--socket", socket_, "status"}, &out), 2);
  EXPECT_NE(out.find(socket_), std::string::npos) << out;
  EXPECT_NE(out.find("systemctl start rdmad"), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
}

TEST_F(DaemonTest, SocketIsGroupOnlyInAPrivateDirectory) {
  auto daemon = StartDaemon();
  struct stat st {};
  ASSERT_EQ(stat(socket_.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  ASSERT_EQ(stat(dir_.File("run").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
}

TEST_F(DaemonTest, SighupWithAGoodFileReloads) {
  auto daemon = StartDaemon();
  auto client = Connect();
  ASSERT_NE(client, nullptr);
  auto events = client->WatchEvents({EventKind::kConfigReloaded, EventKind::kConfigReloadFailed});
  ASSERT_TRUE(events.ok());
  int64_t loaded = client->GetStatus()->config_loaded_unix_ms;
  EXPECT_GT(loaded, 0);
  // A bad file first: the status says why until a reload takes.
  dir_.Write("rdmad.toml", ConfigText(socket_, "[qp]\ntimeout = 99\n"));
  daemon->Signal(SIGHUP);
  Event event;
  ASSERT_TRUE((*events)->Next(&event));
  EXPECT_EQ(event.kind, EventKind::kConfigReloadFailed);
  EXPECT_NE(client->GetStatus()->config_reload_error.find(config_ + ":5:"), std::string::npos)
      << client->GetStatus()->config_reload_error;
  EXPECT_EQ(client->GetStatus()->config_loaded_unix_ms, loaded);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  dir_.Write("rdmad.toml", ConfigText(socket_, "log_level = \"debug\"\n"));
  daemon->Signal(SIGHUP);
  ASSERT_TRUE((*events)->Next(&event));
  EXPECT_EQ(event.kind, EventKind::kConfigReloaded);
  auto status = client->GetStatus();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->config_generation, 2u);
  EXPECT_EQ(status->config_reload_error, "");
  EXPECT_GT(status->config_loaded_unix_ms, loaded);
}

TEST_F(DaemonTest, SighupWithABadFileKeepsTheOldConfig) {
  auto daemon = StartDaemon();
  auto client = Connect();
  ASSERT_NE(client, nullptr);
  auto events = client->WatchEvents();
  ASSERT_TRUE(events.ok());
  dir_.Write("rdmad.toml", ConfigText(socket_, "[qp]\ntimeout = 99\n"));
  daemon->Signal(SIGHUP);
  Event event;
  ASSERT_TRUE((*events)->Next(&event));
  EXPECT_EQ(event.kind, EventKind::kConfigReloadFailed);
  EXPECT_NE(event.message.find(config_ + ":5:"), std::string::npos) << event.message;
  auto status = client->GetStatus();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->config_generation, 1u);
  EXPECT_EQ(status->pid, daemon->pid());
}

TEST_F(DaemonTest, SigtermEndsOpenStreamsAndExitsZeroWithinFiveSeconds) {
  auto daemon = StartDaemon();
  auto client = Connect();
  ASSERT_NE(client, nullptr);
  auto events = client->WatchEvents();
  ASSERT_TRUE(events.ok());
  auto start = std::chrono::steady_clock::now();
  daemon->Signal(SIGTERM);
  Event event;
  ASSERT_TRUE((*events)->Next(&event));
  EXPECT_EQ(event.kind, EventKind::kDaemonStopping);
  EXPECT_FALSE((*events)->Next(&event));
  EXPECT_TRUE((*events)->Finish().ok());
  auto code = daemon->WaitExit(seconds(5));
  ASSERT_TRUE(code.has_value()) << "rdmad still running 5 s after SIGTERM\n" << daemon->log();
  EXPECT_EQ(*code, 0) << daemon->log();
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(5));
  EXPECT_NE(access(socket_.c_str(), F_OK), 0) << "socket left behind";
}

TEST_F(DaemonTest, TalksToSystemdThroughNotifySocket) {
  FakeNotifySocket notify(dir_.File("notify"));
  auto daemon = StartDaemon({{"NOTIFY_SOCKET", notify.path()}, {"WATCHDOG_USEC", "200000"}});
  EXPECT_TRUE(notify.WaitFor("READY=1", seconds(10)));
  EXPECT_TRUE(notify.WaitFor("STATUS=serving on", seconds(2)));
  EXPECT_TRUE(notify.WaitFor("WATCHDOG=1", seconds(2)));
  EXPECT_TRUE(notify.WaitFor("WATCHDOG=1", seconds(2)));
  daemon->Signal(SIGHUP);
  EXPECT_TRUE(notify.WaitFor("RELOADING=1", seconds(5)));
  EXPECT_TRUE(notify.WaitFor("READY=1", seconds(5)));
  daemon->Signal(SIGTERM);
  EXPECT_TRUE(notify.WaitFor("STOPPING=1", seconds(5)));
  EXPECT_EQ(daemon->WaitExit(seconds(5)).value_or(-1), 0);
}

TEST_F(DaemonTest, ReadyOnlyOnceTheSocketServes) {
  FakeNotifySocket notify(dir_.File("notify"));
  auto daemon = StartDaemon({{"NOTIFY_SOCKET", notify.path()}});
  ASSERT_TRUE(notify.WaitFor("READY=1", seconds(10)));
  auto client = Connect();  // must answer at once, no retry
  ASSERT_NE(client, nullptr);
  EXPECT_TRUE(client->GetStatus().ok());
}

TEST_F(DaemonTest, SecondDaemonOnTheSameSocketIsRefused) {
  auto first = StartDaemon();
  Process second(RDMAD_BINARY, {"--config", config_}, {}, dir_.File("second.log"));
  auto code = second.WaitExit(seconds(10));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 1);
  EXPECT_NE(second.log().find("another rdmad (pid " + std::to_string(first->pid())),
            std::string::npos)
      << second.log();
  auto client = Connect();
  ASSERT_NE(client, nullptr);
  auto status = client->GetStatus();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->pid, first->pid());
}

TEST_F(DaemonTest, BadConfigRefusesToStartNamingFileAndLine) {
  config_ = dir_.Write("rdmad.toml", ConfigText(socket_, "[qp]\ntimout = 3\n"));
  Process daemon(RDMAD_BINARY, {"--config", config_}, {}, dir_.File("rdmad.log"));
  EXPECT_EQ(daemon.WaitExit(seconds(10)).value_or(-1), 1);
  EXPECT_NE(daemon.log().find(config_ + ":5:1"), std::string::npos) << daemon.log();
  EXPECT_NE(daemon.log().find("qp.timeout"), std::string::npos) << daemon.log();
  EXPECT_NE(access(socket_.c_str(), F_OK), 0);
}

TEST_F(DaemonTest, CheckConfigExitsZeroOrOne) {
  std::string out;
  EXPECT_EQ(RunCommand(RDMAD_BINARY, {"--check-config", config_}, &out), 0) << out;
  std::string bad = dir_.Write("bad.toml", "[mtu]\ncap = 1000\n");
  EXPECT_EQ(RunCommand(RDMAD_BINARY, {"--check-config", bad}, &out), 1);
  EXPECT_NE(out.find(bad + ":2:"), std::string::npos) << out;
  EXPECT_EQ(RunCommand(RDMAD_BINARY, {"--check-config", dir_.File("missing.toml")}, &out), 1);
}

enum class Admission { kServed = 0, kClosed = 1, kSilent = 2, kNoAccess = 3 };

// Connects to socket as uid/gid in a forked child (raw syscalls only) and
// tells whether the daemon served the connection (gRPC sends its HTTP/2
// preface at once) or closed it.
Admission ConnectAs(uid_t uid, gid_t gid, const std::string& socket) {
  pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0) _exit(9);
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket.c_str(), sizeof(addr.sun_path) - 1);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) _exit(3);
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, 5000) <= 0) _exit(2);
    char buf[64];
    _exit(read(fd, buf, sizeof(buf)) > 0 ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return static_cast<Admission>(WIFEXITED(status) ? WEXITSTATUS(status) : 9);
}

class SocketAccessTest : public DaemonTest {
 protected:
  void SetUp() override {
    DaemonTest::SetUp();
    if (getuid() != 0) GTEST_SKIP() << "needs root to connect as another uid";
    group* nogroup = getgrnam("nogroup");
    if (nogroup == nullptr) GTEST_SKIP() << "no group 'nogroup'";
    gid_ = nogroup->gr_gid;
    chmod(dir_.path().c_str(), 0755);  // the test's dir, not the daemon's
  }
  void WriteConfig(const std::string& allowed_uids) {
    dir_.Write("rdmad.toml", "[daemon]\nsocket = \"" + socket_ +
                                 "\"\nsocket_group = \"nogroup\"\nallowed_uids = " + allowed_uids +
                                 "\n");
  }
  static constexpr uid_t kNobody = 65534;
  gid_t gid_ = 0;
};

TEST_F(SocketAccessTest, GroupMembersReachTheSocketThroughItsDirectory) {
  WriteConfig("[]");
  auto daemon = StartDaemon();
  struct stat st {};
  ASSERT_EQ(stat(dir_.File("run").c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, gid_);
  EXPECT_EQ(ConnectAs(kNobody, gid_, socket_), Admission::kServed) << daemon->log();
  // The daemon logs the connection on its accept thread, maybe after serving.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (daemon->log().find("client connected: uid 65534") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_NE(daemon->log().find("client connected: uid 65534"), std::string::npos) << daemon->log();
}

TEST_F(SocketAccessTest, OthersCannotOpenTheSocket) {
  WriteConfig("[]");
  auto daemon = StartDaemon();
  EXPECT_EQ(ConnectAs(kNobody, kNobody - 1, socket_), Admission::kNoAccess);
}

TEST_F(SocketAccessTest, UidsOutsideAllowedUidsAreRefused) {
  WriteConfig("[4242]");
  auto daemon = StartDaemon();
  EXPECT_EQ(ConnectAs(kNobody, gid_, socket_), Admission::kClosed) << daemon->log();
  EXPECT_NE(daemon->log().find("refused connection from uid 65534"), std::string::npos)
      << daemon->log();
  auto client = Connect();  // root is always admitted
  ASSERT_NE(client, nullptr);
  EXPECT_TRUE(client->GetStatus().ok());
}

TEST_F(DaemonTest, SocketFlagOverridesTheConfig) {
  std::string other = dir_.File("other.sock");
  Process daemon(RDMAD_BINARY, {"--config", config_, "--socket", other}, {},
                 dir_.File("rdmad.log"));
  ASSERT_TRUE(testing::WaitForPath(other, seconds(10), &daemon)) << daemon.Describe() << "\n"
                                                                 << daemon.log();
  EXPECT_NE(access(socket_.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace rdmad
