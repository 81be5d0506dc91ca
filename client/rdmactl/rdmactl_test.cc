// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl's command line as a user meets it, through rdmactl::Run: help for
// every command, --version, "did you mean", usage errors with exit 64,
// --json errors as one JSON document on stdout, one channel-id format; and
// docs/operations.md has a row for every command `rdmactl help` lists.

#include "client/rdmactl/rdmactl.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "client/rdmactl/command.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace rdmactl {
namespace {

struct Output {
  int code = -1;
  std::string out;
  std::string err;
};

Output Rdmactl(const std::vector<std::string>& argv) {
  Output o;
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  o.code = Run(argv, out, err);
  for (auto [file, text] : {std::pair{out, &o.out}, std::pair{err, &o.err}}) {
    std::rewind(file);
    for (int c; (c = std::fgetc(file)) != EOF;) text->push_back(char(c));
    std::fclose(file);
  }
  return o;
}

constexpr char kNoDaemon[] = "/nonexistent/rdmad.sock";

TEST(RdmactlTest, EveryCommandHasItsOwnHelp) {
  for (const Command& c : Commands()) {
    for (const std::vector<std::string>& argv :
         {std::vector<std::string>{c.name, "--help"}, {"help", c.name}}) {
      Output o = Rdmactl(argv);
      EXPECT_EQ(o.code, kExitOk) << c.name << ": " << o.err;
      EXPECT_NE(o.out.find(c.help), std::string::npos) << c.name << ":\n" << o.out;
      EXPECT_NE(o.out.find(std::string("Usage: rdmactl ") + c.name), std::string::npos)
          << c.name << ":\n"
          << o.out;
      EXPECT_EQ(o.out.find("Commands:"), std::string::npos)
          << c.name << ": the global help instead of the command's:\n"
          << o.out;
    }
  }
  Output ping = Rdmactl({"ping", "-h"});
  for (const char* option : {"PEER", "-c", "-s", "-i", "-W", "-q", "--tcp"}) {
    EXPECT_NE(ping.out.find(option), std::string::npos) << option << "\n" << ping.out;
  }
  Output overview = Rdmactl({"help"});
  EXPECT_EQ(overview.code, kExitOk);
  EXPECT_NE(overview.out.find("Commands:"), std::string::npos);
  EXPECT_EQ(Rdmactl({}).out, overview.out);
  EXPECT_EQ(Rdmactl({"--help"}).out, overview.out);
  EXPECT_EQ(Rdmactl({"help", "nope"}).code, kExitUsage);
}

TEST(RdmactlTest, VersionAsAFlagAndAsACommand) {
  Output flag = Rdmactl({"--version"});
  EXPECT_EQ(flag.code, kExitOk);
  EXPECT_EQ(flag.out, std::string("rdmactl ") + RDMAD_VERSION + "\n");
  EXPECT_EQ(Rdmactl({"version"}).out, flag.out);
  auto json = nlohmann::json::parse(Rdmactl({"--json", "--version"}).out);
  EXPECT_EQ(json["rdmactl"], RDMAD_VERSION);
}

TEST(RdmactlTest, AMistypedCommandGetsASuggestion) {
  Output o = Rdmactl({"statuss"});
  EXPECT_EQ(o.code, kExitUsage);
  EXPECT_EQ(o.err, "rdmactl: unknown command \"statuss\"; did you mean \"status\"?\n");
  EXPECT_TRUE(o.out.empty());
  EXPECT_NE(Rdmactl({"pnig", "B"}).err.find("did you mean \"ping\"?"), std::string::npos);
  EXPECT_NE(Rdmactl({"--socket", "x", "chan"}).err.find("did you mean \"channels\"?"),
            std::string::npos);
  EXPECT_NE(Rdmactl({"frobnicate"}).err.find("'rdmactl help' lists the commands"),
            std::string::npos);
}

TEST(RdmactlTest, UsageErrorsExit64AndNameTheCommand) {
  for (const std::vector<std::string>& argv :
       std::vector<std::vector<std::string>>{{"route"},
                                             {"route", "192.0.2.2", "--peer-mtu", "big"},
                                             {"counters", "mlx5_0", "x"},
                                             {"counters", "mlx5_0", "0"},
                                             {"devices", "a", "b"},
                                             {"status", "--frob"},
                                             {"close"},
                                             {"close", "xyz"},
                                             {"close", "0"},
                                             {"events", "--count", "-1"},
                                             {"--socket"}}) {
    Output o = Rdmactl(argv);
    EXPECT_EQ(o.code, kExitUsage) << argv[0] << ": " << o.err;
    EXPECT_FALSE(o.err.empty()) << argv[0];
  }
  EXPECT_NE(Rdmactl({"counters", "mlx5_0", "x"}).err.find("rdmactl counters: "), std::string::npos);
}

TEST(RdmactlTest, WithJsonErrorsAreJsonOnStdoutWithTheExitCode) {
  Output usage = Rdmactl({"--json", "ping"});
  EXPECT_EQ(usage.code, kExitUsage);
  EXPECT_TRUE(usage.err.empty()) << usage.err;
  auto json = nlohmann::json::parse(usage.out);
  EXPECT_EQ(json["exit_code"], kExitUsage);
  EXPECT_EQ(json["error"]["code"], "USAGE");
  EXPECT_EQ(json["error"]["command"], "ping");
  EXPECT_NE(json["error"]["message"].get<std::string>().find("PEER"), std::string::npos);

  Output unreachable = Rdmactl({"status", "--json", "--socket", kNoDaemon});
  EXPECT_EQ(unreachable.code, kExitUnreachable);
  EXPECT_TRUE(unreachable.err.empty()) << unreachable.err;
  json = nlohmann::json::parse(unreachable.out);
  EXPECT_EQ(json["exit_code"], kExitUnreachable);
  EXPECT_EQ(json["error"]["code"], "UNAVAILABLE");
  EXPECT_NE(json["error"]["message"].get<std::string>().find("rdmad is not reachable"),
            std::string::npos);

  json = nlohmann::json::parse(Rdmactl({"--json", "statuss"}).out);
  EXPECT_NE(json["error"]["message"].get<std::string>().find("did you mean"), std::string::npos);
}

// A socket file nobody listens on: connecting is refused until the
// deadline.
class UnansweredSocket {
 public:
  UnansweredSocket() {
    char dir[] = "/tmp/rdmactl_test_XXXXXX";
    if (mkdtemp(dir) != nullptr) dir_ = dir;
    path_ = dir_ + "/rdmad.sock";
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path_.c_str());
    bound_ = fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    if (fd >= 0) close(fd);  // never listened: connect() is refused
  }
  ~UnansweredSocket() {
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  bool bound() const { return bound_; }
  const std::string& path() const { return path_; }

 private:
  std::string dir_, path_;
  bool bound_ = false;
};

TEST(RdmactlTest, ConnectTimeoutIsHowLongItWaitsForRdmad) {
  UnansweredSocket sock;
  ASSERT_TRUE(sock.bound()) << sock.path();
  Output o = Rdmactl({"status", "--json", "--connect-timeout", "300", "--socket", sock.path()});
  EXPECT_EQ(o.code, kExitUnreachable);
  auto json = nlohmann::json::parse(o.out);
  const std::string message = json["error"]["message"].get<std::string>();
  EXPECT_NE(message.find("no answer within 300 ms"), std::string::npos) << message;
  o = Rdmactl({"--connect-timeout", "400", "--socket", sock.path(), "status"});
  EXPECT_EQ(o.code, kExitUnreachable) << o.err;
  EXPECT_NE(o.err.find("no answer within 400 ms"), std::string::npos) << o.err;
  for (const char* bad : {"0", "-5", "soon", "3600001"}) {
    o = Rdmactl({"--connect-timeout", bad, "status"});
    EXPECT_EQ(o.code, kExitUsage) << bad << ": " << o.err;
    EXPECT_NE(o.err.find("--connect-timeout"), std::string::npos) << bad << ": " << o.err;
  }
}

TEST(RdmactlTest, OneChannelIdFormat) {
  EXPECT_EQ(rdmad::FormatChannelId(0x4d2), "0x00000000000004d2");
  EXPECT_EQ(rdmad::FormatChannelId(0xbbb48eb8ff539cb1), "0xbbb48eb8ff539cb1");
  for (const char* text : {"0x00000000000004d2", "0x4d2", "0X4D2", "1234", "4d2"}) {
    auto id = rdmad::ParseChannelId(text);
    ASSERT_TRUE(id.ok()) << text << ": " << id.status().ToString();
    EXPECT_EQ(*id, 1234u) << text;
  }
  EXPECT_EQ(*rdmad::ParseChannelId("bbb48eb8ff539cb1"), 0xbbb48eb8ff539cb1u);
  EXPECT_EQ(*rdmad::ParseChannelId("13525592506109238449"), 13525592506109238449u);
  for (const char* text : {"", "0x", "0", "-1", "0x1g", "12 ", "0x10000000000000000"}) {
    EXPECT_EQ(rdmad::ParseChannelId(text).status().code(), rdmad::StatusCode::kInvalidArgument)
        << text;
  }
  // rdmactl close takes every form (and then cannot reach the daemon).
  for (const char* text : {"0x00000000000004d2", "1234", "4d2"}) {
    EXPECT_EQ(Rdmactl({"--socket", kNoDaemon, "close", text}).code, kExitUnreachable) << text;
  }
}

// Every command `rdmactl help` lists has a row in docs/operations.md's
// command table ("| `NAME ...` | ...").
TEST(RdmactlTest, OperationsDocHasARowForEveryCommand) {
  std::ifstream doc(std::string(RDMAD_SOURCE_DIR) + "/docs/operations.md");
  ASSERT_TRUE(doc) << "docs/operations.md";
  std::stringstream text;
  text << doc.rdbuf();
  for (const Command& c : Commands()) {
    std::string row = std::string("| `") + c.name;
    size_t at = text.str().find(row);
    bool found = false;
    for (; at != std::string::npos && !found; at = text.str().find(row, at + 1)) {
      char next = text.str()[at + row.size()];
      found = next == ' ' || next == '`';
    }
    EXPECT_TRUE(found) << "docs/operations.md has no row for rdmactl " << c.name;
  }
}

}  // namespace
}  // namespace rdmactl
