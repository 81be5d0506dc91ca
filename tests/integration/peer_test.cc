// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Peer sessions between two real rdmad processes on loopback (different
// sockets and peer ports, each listing the other in [[peers]]), seen
// through `rdmactl --json peers`: up with an RTT, down when one is frozen
// (SIGSTOP) and up again, version mismatch, reload, mutual TLS with certs
// made by openssl here, and the refusal of plaintext off loopback.

#include <signal.h>
#include <unistd.h>

#include <thread>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "rdmad/client.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/test_certs.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::Process;
using testing::RunCommand;
using testing::TempDir;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Node {
  std::string name;
  std::string socket;
  int port = 0;
  std::string config;
  std::unique_ptr<Process> process;
};

class PeerTest : public ::testing::Test {
 protected:
  Node MakeNode(const std::string& name) {
    Node n;
    n.name = name;
    n.socket = dir_.File(name + "/rdmad.sock");
    n.port = testing::FreeLoopbackPort();
    return n;
  }

  // Writes node's config: its socket and peer port, extra [daemon] keys,
  // then a [[peers]] entry per peer.
  void WriteConfig(Node* n, const std::vector<const Node*>& peers,
                   const std::string& daemon_extra = "") {
    std::string text = "[daemon]\nsocket = \"" + n->socket +
                       "\"\nsocket_group = \"\"\nlog_level = \"debug\"\n"
                       "peer_address = \"127.0.0.1\"\npeer_port = " +
                       std::to_string(n->port) + "\n" + daemon_extra;
    for (const Node* p : peers) {
      text += "\n[[peers]]\nname = \"" + p->name +
              "\"\naddress = \"127.0.0.1:" + std::to_string(p->port) + "\"\n";
    }
    n->config = dir_.Write(n->name + ".toml", text);
  }

  void Start(Node* n, std::map<std::string, std::string> env = {}) {
    env["RDMAD_DAEMON_PEER_PORT"] = std::to_string(n->port);
    n->process =
        std::make_unique<Process>(RDMAD_BINARY, std::vector<std::string>{"--config", n->config},
                                  env, dir_.File(n->name + ".log"));
    ASSERT_TRUE(testing::WaitForPath(n->socket, seconds(10), n->process.get()))
        << n->process->Describe() << "\n"
        << n->process->log();
  }

  // `rdmactl --json peers` of node n (an empty array when it fails).
  Json Peers(const Node& n) {
    std::string out;
    int code = RunCommand(RDMACTL_BINARY, {"--socket", n.socket, "--json", "peers"}, &out);
    if (code != 0) return Json::array();
    Json json = Json::parse(out, nullptr, false);
    return json.is_object() && json["peers"].is_array() ? json["peers"] : Json::array();
  }

  // The entry of peer `name` in n's list, once it is in state within
  // timeout; null JSON otherwise (the last list is in *last).
  Json WaitForState(const Node& n, const std::string& name, const std::string& state,
                    Clock::duration timeout, Json* last = nullptr) {
    auto deadline = Clock::now() + timeout;
    Json peers;
    do {
      peers = Peers(n);
      for (const Json& p : peers) {
        if (p["name"] == name && p["state"] == state) return p;
      }
      std::this_thread::sleep_for(milliseconds(100));
    } while (Clock::now() < deadline);
    if (last) *last = peers;
    return Json();
  }

  std::string Logs(const Node& a, const Node& b) {
    return "--- " + a.name + ":\n" + a.process->log() + "\n--- " + b.name + ":\n" +
           b.process->log();
  }

  // Makes a CA and a certificate for each name: the node NAME at 127.0.0.1
  // (SAN DNS:NAME, IP:127.0.0.1).
  bool MakeCerts(const std::string& ca, const std::vector<std::string>& names) {
    return testing::MakeTestCerts(dir_, ca, names);
  }

  // The [daemon] keys of node `node` with the certificate of `cert`.
  std::string TlsKeys(const std::string& node, const std::string& ca,
                      const std::string& cert = "") {
    const std::string& c = cert.empty() ? node : cert;
    return "node_name = \"" + node + "\"\ntls_cert = \"" + dir_.File(c + ".pem") +
           "\"\ntls_key = \"" + dir_.File(c + ".key") + "\"\ntls_ca = \"" + dir_.File(ca + ".pem") +
           "\"\n";
  }

  TempDir dir_;
};

TEST_F(PeerTest, TwoDaemonsSeeEachOtherUp) {
  Node a = MakeNode("a"), b = MakeNode("b");
  WriteConfig(&a, {&b});
  WriteConfig(&b, {&a});
  ASSERT_NO_FATAL_FAILURE(Start(&a));
  ASSERT_NO_FATAL_FAILURE(Start(&b));
  Json last;
  Json ab = WaitForState(a, "b", "up", seconds(15), &last);
  ASSERT_FALSE(ab.is_null()) << last.dump() << Logs(a, b);
  Json ba = WaitForState(b, "a", "up", seconds(15), &last);
  ASSERT_FALSE(ba.is_null()) << last.dump() << Logs(a, b);
  EXPECT_GT(ab["rtt_ms"].get<double>(), 0.0) << ab.dump();
  EXPECT_EQ(ab["address"], "127.0.0.1:" + std::to_string(b.port));
  EXPECT_EQ(ab["remote_protocol"], "2.0");
  EXPECT_EQ(ab["remote_version"], RDMAD_VERSION);
  EXPECT_FALSE(ab["remote_host"].get<std::string>().empty());
  EXPECT_EQ(ab["last_error"], "");
  EXPECT_TRUE(ab["configured"].get<bool>());

  std::string table;
  ASSERT_EQ(RunCommand(RDMACTL_BINARY, {"--socket", a.socket, "peers"}, &table), 0) << table;
  EXPECT_NE(table.find("127.0.0.1:" + std::to_string(b.port)), std::string::npos) << table;
  EXPECT_NE(table.find("  up  "), std::string::npos) << table;
  // route takes the peer's name as ping and connect do: its address's IP
  // (loopback here, which has no RDMA path: exit 1, and it says so).
  std::string route;
  EXPECT_EQ(RunCommand(RDMACTL_BINARY, {"--socket", a.socket, "route", "b"}, &route), 1) << route;
  EXPECT_NE(route.find("no RDMA path to b (127.0.0.1)"), std::string::npos) << route;

  ClientOptions options;
  options.socket_path = a.socket;
  auto client = Client::Open(options);
  ASSERT_TRUE(client.ok());
  EXPECT_EQ((*client)->GetStatus()->peer_count, 1u);

  // Both stop cleanly, within the 5 s budget, with their sessions open.
  a.process->Signal(SIGTERM);
  b.process->Signal(SIGTERM);
  EXPECT_EQ(a.process->WaitExit(seconds(5)), 0) << Logs(a, b);
  EXPECT_EQ(b.process->WaitExit(seconds(5)), 0) << Logs(a, b);
}

TEST_F(PeerTest, AFrozenPeerIsDownAndComesBack) {
  Node a = MakeNode("a"), b = MakeNode("b");
  WriteConfig(&a, {&b});
  WriteConfig(&b, {&a});
  ASSERT_NO_FATAL_FAILURE(Start(&a));
  ASSERT_NO_FATAL_FAILURE(Start(&b));
  ASSERT_FALSE(WaitForState(a, "b", "up", seconds(15)).is_null()) << Logs(a, b);

  b.process->Signal(SIGSTOP);
  auto frozen = Clock::now();
  Json last;
  Json down = WaitForState(a, "b", "down", seconds(10), &last);
  auto took = std::chrono::duration_cast<milliseconds>(Clock::now() - frozen);
  b.process->Signal(SIGCONT);
  ASSERT_FALSE(down.is_null()) << last.dump() << Logs(a, b);
  // Keepalive (1 s ping, 2 s timeout) finds it in about 3 s.
  EXPECT_LE(took.count(), 7000) << down.dump();
  std::printf("frozen peer reported down after %lld ms: %s\n", (long long)took.count(),
              down["last_error"].get<std::string>().c_str());
  EXPECT_FALSE(down["last_error"].get<std::string>().empty());

  ASSERT_FALSE(WaitForState(a, "b", "up", seconds(20), &last).is_null())
      << last.dump() << Logs(a, b);
}

TEST_F(PeerTest, AnotherMajorVersionIsAMismatch) {
  Node a = MakeNode("a"), b = MakeNode("b");
  WriteConfig(&a, {&b});
  WriteConfig(&b, {&a});
  ASSERT_NO_FATAL_FAILURE(Start(&a));
  ASSERT_NO_FATAL_FAILURE(Start(&b, {{"RDMAD_TEST_PROTOCOL_MAJOR", "3"}}));
  Json last;
  Json ab = WaitForState(a, "b", "version-mismatch", seconds(15), &last);
  ASSERT_FALSE(ab.is_null()) << last.dump() << Logs(a, b);
  EXPECT_EQ(ab["last_error"], "peer b speaks rdmad protocol 3.0, this daemon 2.0");
  EXPECT_EQ(ab["remote_protocol"], "3.0");
  Json ba = WaitForState(b, "a", "version-mismatch", seconds(15), &last);
  ASSERT_FALSE(ba.is_null()) << last.dump() << Logs(a, b);
  EXPECT_EQ(ba["last_error"], "peer a speaks rdmad protocol 2.0, this daemon 3.0");
}

TEST_F(PeerTest, ReloadFollowsThePeerList) {
  Node a = MakeNode("a"), b = MakeNode("b");
  WriteConfig(&a, {});
  WriteConfig(&b, {});
  ASSERT_NO_FATAL_FAILURE(Start(&a));
  ASSERT_NO_FATAL_FAILURE(Start(&b));
  EXPECT_TRUE(Peers(a).empty());
  WriteConfig(&a, {&b});
  a.process->Signal(SIGHUP);
  Json last;
  ASSERT_FALSE(WaitForState(a, "b", "up", seconds(15), &last).is_null())
      << last.dump() << Logs(a, b);
  WriteConfig(&a, {});
  a.process->Signal(SIGHUP);
  auto deadline = Clock::now() + seconds(10);
  while (!Peers(a).empty() && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_TRUE(Peers(a).empty()) << Logs(a, b);
}

TEST_F(PeerTest, PlaintextOffLoopbackIsRefused) {
  std::string config =
      dir_.Write("off.toml", "[daemon]\nsocket = \"" + dir_.File("off/rdmad.sock") +
                                 "\"\npeer_address = \"192.0.2.10\"\n");
  std::string out;
  EXPECT_EQ(RunCommand(RDMAD_BINARY, {"--check-config", config}, &out), 1) << out;
  EXPECT_NE(out.find("daemon.peer_address = \"192.0.2.10\" is not a loopback address"),
            std::string::npos)
      << out;
  // Starting is refused the same way, before anything is bound.
  EXPECT_EQ(RunCommand(RDMAD_BINARY, {"--config", config}, &out), 1) << out;
  EXPECT_NE(out.find("refusing to start"), std::string::npos) << out;
  EXPECT_NE(out.find("is not a loopback address"), std::string::npos) << out;

  dir_.Write("off.toml", "[daemon]\nsocket = \"" + dir_.File("off/rdmad.sock") +
                             "\"\npeer_address = \"192.0.2.10\"\npeer_key_file = \"" +
                             testing::WritePeerKey(dir_) + "\"\n");
  EXPECT_EQ(RunCommand(RDMAD_BINARY, {"--check-config", config}, &out), 0) << out;
  // The removed peer_insecure is a clear error, not a silent downgrade.
  dir_.Write("off.toml", "[daemon]\nsocket = \"" + dir_.File("off/rdmad.sock") +
                             "\"\npeer_address = \"192.0.2.10\"\npeer_insecure = true\n");
  EXPECT_EQ(RunCommand(RDMAD_BINARY, {"--check-config", config}, &out), 1) << out;
  EXPECT_NE(out.find("daemon.peer_insecure was removed"), std::string::npos) << out;
}

TEST_F(PeerTest, MutualTlsBringsPeersUp) {
  if (!MakeCerts("ca", {"a", "b"})) GTEST_SKIP() << "openssl is not installed";
  Node a = MakeNode("a"), b = MakeNode("b");
  WriteConfig(&a, {&b}, TlsKeys("a", "ca"));
  WriteConfig(&b, {&a}, TlsKeys("b", "ca"));
  ASSERT_NO_FATAL_FAILURE(Start(&a));
  ASSERT_NO_FATAL_FAILURE(Start(&b));
  Json last;
  ASSERT_FALSE(WaitForState(a, "b", "up", seconds(15), &last).is_null())
      << last.dump() << Logs(a, b);
  ASSERT_FALSE(WaitForState(b, "a", "up", seconds(15), &last).is_null())
      << last.dump() << Logs(a, b);
  EXPECT_NE(a.process->log().find("with mutual TLS"), std::string::npos) << a.process->log();
}

TEST_F(PeerTest, ACertificateFromAnotherCaIsRefused) {
  if (!MakeCerts("ca", {"a"}) || !MakeCerts("other-ca", {"b"})) {
    GTEST_SKIP() << "openssl is not installed";
  }
  Node a = MakeNode("a"), b = MakeNode("b");
  WriteConfig(&a, {&b}, TlsKeys("a", "ca"));
  WriteConfig(&b, {&a}, TlsKeys("b", "other-ca"));
  ASSERT_NO_FATAL_FAILURE(Start(&a));
  ASSERT_NO_FATAL_FAILURE(Start(&b));
  // Down at first because b is not listening yet, then because of TLS.
  auto is_tls = [](const std::string& e) {
    return e.find("SSL") != std::string::npos || e.find("ssl") != std::string::npos ||
           e.find("certificate") != std::string::npos || e.find("handshake") != std::string::npos;
  };
  Json ab;
  auto deadline = Clock::now() + seconds(15);
  while (Clock::now() < deadline) {
    for (const Json& p : Peers(a)) {
      if (p["name"] == "b" && p["state"] == "down" && is_tls(p["last_error"])) ab = p;
    }
    if (!ab.is_null()) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_FALSE(ab.is_null()) << Peers(a).dump() << Logs(a, b);
  std::printf("a certificate from another CA: %s\n", ab["last_error"].get<std::string>().c_str());
  // It stays down: no later attempt gets through.
  std::this_thread::sleep_for(seconds(2));
  for (const Json& p : Peers(a)) EXPECT_NE(p["state"], "up") << p.dump();
}

// b presents a's certificate (signed by the same CA) while calling itself
// b: neither side takes it for b. a refuses b's Hello, and b's answer to
// a's Hello; both say why.
TEST_F(PeerTest, ACertificateCannotSpeakForAnotherNode) {
  if (!MakeCerts("ca", {"a", "b"})) GTEST_SKIP() << "openssl is not installed";
  Node a = MakeNode("a"), b = MakeNode("b");
  WriteConfig(&a, {&b}, TlsKeys("a", "ca"));
  WriteConfig(&b, {&a}, TlsKeys("b", "ca", /*cert=*/"a"));
  ASSERT_NO_FATAL_FAILURE(Start(&a));
  ASSERT_NO_FATAL_FAILURE(Start(&b));
  const std::string why = "the peer's certificate is for a, 127.0.0.1, not b";
  auto down_with = [&](const Node& n, const std::string& peer) {
    auto deadline = Clock::now() + seconds(15);
    while (Clock::now() < deadline) {
      for (const Json& p : Peers(n)) {
        if (p["name"] == peer && p["state"] == "down" &&
            p["last_error"].get<std::string>().find(why) != std::string::npos) {
          return true;
        }
      }
      std::this_thread::sleep_for(milliseconds(100));
    }
    return false;
  };
  EXPECT_TRUE(down_with(a, "b")) << Peers(a).dump() << Logs(a, b);
  EXPECT_TRUE(down_with(b, "a")) << Peers(b).dump() << Logs(a, b);
  EXPECT_NE(a.process->log().find("peer Hello from"), std::string::npos) << a.process->log();
  std::this_thread::sleep_for(seconds(1));
  for (const Json& p : Peers(a)) EXPECT_NE(p["state"], "up") << p.dump();
  for (const Json& p : Peers(b)) EXPECT_NE(p["state"], "up") << p.dump();
}

}  // namespace
}  // namespace rdmad
