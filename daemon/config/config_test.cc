// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ParseConfig, DefaultConfig, LoadConfig, device filters and ValidateConfig.
// Environment overrides are tested in config_env_test.cc.

#include "daemon/config/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace rdmad {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string ReadSourceFile(const std::string& relative) {
  std::ifstream in(std::string(RDMAD_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The error message of parsing text as "t.toml"; fails if it parses.
std::string ErrorOf(std::string_view text) {
  StatusOr<Config> config = ParseConfig(text, "t.toml");
  EXPECT_FALSE(config.ok()) << "parsed: " << text;
  if (config.ok()) return "";
  EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument);
  return config.status().message();
}

Config Parsed(std::string_view text) {
  StatusOr<Config> config = ParseConfig(text, "t.toml");
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return config.ok() ? *config : Config();
}

TEST(DefaultConfigTest, HasTheDocumentedDefaults) {
  Config c = DefaultConfig();
  EXPECT_EQ(c.source, "<defaults>");
  EXPECT_EQ(c.daemon.socket, "/run/rdmad/rdmad.sock");
  EXPECT_EQ(c.daemon.socket_group, "rdma");
  EXPECT_EQ(c.daemon.socket_mode, 0660u);
  EXPECT_TRUE(c.daemon.allowed_uids.empty());
  EXPECT_EQ(c.daemon.log_level, "info");
  EXPECT_EQ(c.daemon.peer_address, "127.0.0.1");
  EXPECT_EQ(c.daemon.peer_port, 7581);
  EXPECT_EQ(c.daemon.peer_key_file, "");
  EXPECT_EQ(c.daemon.state_dir, "");
  EXPECT_EQ(c.daemon.tls_cert, "");
  EXPECT_TRUE(c.devices.include.empty());
  EXPECT_EQ(c.gid.index, -1);
  EXPECT_EQ(c.gid.family, "auto");
  EXPECT_EQ(c.gid.roce_version, "v2");
  EXPECT_EQ(c.gid.overlay_netdevs, (std::vector<std::string>{"docker*", "cni*", "flannel*",
                                                             "calico*", "vxlan*", "tunl0"}));
  EXPECT_EQ(c.mtu.cap, 4096);
  EXPECT_EQ(c.qp.type, "RC");
  EXPECT_EQ(c.qp.timeout, 14);
  EXPECT_EQ(c.qp.min_rnr_timer, 12);
  EXPECT_EQ(c.qp.hop_limit, 64);
  EXPECT_EQ(c.limits.max_channels_per_peer, 256);
  EXPECT_EQ(c.limits.max_channels, 4096);
  EXPECT_EQ(c.limits.idle_timeout_s, 300);
  EXPECT_TRUE(c.peers.empty());
  EXPECT_TRUE(c.pool.empty());
}

TEST(ParseConfigTest, EmptyFileGivesDefaults) {
  Config parsed = Parsed("");
  EXPECT_EQ(parsed.source, "t.toml");
  parsed.source = "<defaults>";
  EXPECT_EQ(parsed, DefaultConfig());
}

TEST(ParseConfigTest, ShippedFileGivesDefaults) {
  std::string text = ReadSourceFile("etc/rdmad/rdmad.toml");
  ASSERT_FALSE(text.empty());
  StatusOr<Config> parsed = ParseConfig(text, "rdmad.toml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  parsed->source = "<defaults>";
  EXPECT_EQ(*parsed, DefaultConfig());
}

// Uncommenting every "# key = value" line and the array examples of the
// shipped file gives a valid file: the defaults plus one peer and one pool.
TEST(ParseConfigTest, ShippedFileUncommentedParses) {
  std::istringstream in(ReadSourceFile("etc/rdmad/rdmad.toml"));
  std::string text;
  for (std::string line; std::getline(in, line);) {
    bool setting = line.starts_with("# ") && line.find(" = ") != line.npos &&
                   line.find(' ', 2) == line.find(" = ");
    if (setting || line.starts_with("# [[")) line = line.substr(2);
    text += line + "\n";
  }
  Config c = Parsed(text);
  ASSERT_EQ(c.peers.size(), 1u);
  ASSERT_EQ(c.pool.size(), 1u);
  EXPECT_EQ(c.pool[0].peer, c.peers[0].name);
  c.peers.clear();
  c.pool.clear();
  c.source = "<defaults>";
  EXPECT_EQ(c, DefaultConfig());
}

constexpr std::string_view kEveryKey = R"toml(
[daemon]
socket = "/run/x/api.sock"
socket_group = ""
socket_mode = 0o600
allowed_uids = [0, 1000]
log_level = "debug"
peer_address = "::1"
peer_port = 9000
peer_key_file = "/etc/rdmad/peer.key"
tls_cert = "/etc/rdmad/cert.pem"
tls_key = "/etc/rdmad/key.pem"
tls_ca = "/etc/rdmad/ca.pem"

[devices]
include = ["mlx5", "=mlx5_0:1"]
exclude = ["bnxt_re0:2"]

[gid]
index = 3
family = "ipv6"
subnet = "2001:db8::/32"
roce_version = "prefer-v2"
overlay_netdevs = ["veth*"]

[mtu]
cap = 1024

[qp]
type = "RC"
timeout = 20
retry_cnt = 5
rnr_retry = 6
min_rnr_timer = 14
traffic_class = 106
service_level = 3
hop_limit = 32
max_inline = 0
send_depth = 512
recv_depth = 256
per_channel = 1
spin_us = 200
relaxed_ordering = 0

[limits]
max_channels_per_peer = 8
max_channels = 16
idle_timeout_s = 0

[echo]
enabled = false

[[peers]]
name = "node2"
address = "[fe80::1]:7582"

[[peers]]
name = "node-3.lab"
address = "192.0.2.3"

[[pool]]
peer = "node2"
service = "ollama/llama3"
channels = 4

[[pool]]
peer = "node-3.lab"
service = "ollama"
)toml";

TEST(ParseConfigTest, EveryKeySetToANonDefault) {
  Config c = Parsed(kEveryKey);
  EXPECT_EQ(c.daemon.socket, "/run/x/api.sock");
  EXPECT_EQ(c.daemon.socket_group, "");
  EXPECT_EQ(c.daemon.socket_mode, 0600u);
  EXPECT_EQ(c.daemon.allowed_uids, (std::vector<int64_t>{0, 1000}));
  EXPECT_EQ(c.daemon.log_level, "debug");
  EXPECT_EQ(c.daemon.peer_address, "::1");
  EXPECT_EQ(c.daemon.peer_port, 9000);
  EXPECT_EQ(c.daemon.peer_key_file, "/etc/rdmad/peer.key");
  EXPECT_EQ(c.daemon.tls_cert, "/etc/rdmad/cert.pem");
  EXPECT_EQ(c.daemon.tls_key, "/etc/rdmad/key.pem");
  EXPECT_EQ(c.daemon.tls_ca, "/etc/rdmad/ca.pem");
  EXPECT_EQ(c.devices.include, (std::vector<DeviceSpec>{{"mlx5", false, 0}, {"mlx5_0", true, 1}}));
  EXPECT_EQ(c.devices.exclude, (std::vector<DeviceSpec>{{"bnxt_re0", false, 2}}));
  EXPECT_EQ(c.gid.index, 3);
  EXPECT_EQ(c.gid.family, "ipv6");
  EXPECT_EQ(c.gid.subnet, "2001:db8::/32");
  EXPECT_EQ(c.gid.roce_version, "prefer-v2");
  EXPECT_EQ(c.gid.overlay_netdevs, (std::vector<std::string>{"veth*"}));
  EXPECT_EQ(c.mtu.cap, 1024);
  EXPECT_EQ(c.qp.type, "RC");
  EXPECT_EQ(c.qp.timeout, 20);
  EXPECT_EQ(c.qp.retry_cnt, 5);
  EXPECT_EQ(c.qp.rnr_retry, 6);
  EXPECT_EQ(c.qp.min_rnr_timer, 14);
  EXPECT_EQ(c.qp.traffic_class, 106);
  EXPECT_EQ(c.qp.service_level, 3);
  EXPECT_EQ(c.qp.hop_limit, 32);
  EXPECT_EQ(c.qp.max_inline, 0);
  EXPECT_EQ(c.qp.send_depth, 512);
  EXPECT_EQ(c.qp.recv_depth, 256);
  EXPECT_EQ(c.qp.per_channel, 1);
  EXPECT_EQ(c.qp.spin_us, 200);
  EXPECT_EQ(c.qp.relaxed_ordering, 0);
  EXPECT_FALSE(c.echo.enabled);
  EXPECT_TRUE(DefaultConfig().echo.enabled);
  EXPECT_EQ(c.limits.max_channels_per_peer, 8);
  EXPECT_EQ(c.limits.max_channels, 16);
  EXPECT_EQ(c.limits.idle_timeout_s, 0);
  EXPECT_EQ(c.peers,
            (std::vector<PeerConfig>{{"node2", "[fe80::1]:7582"}, {"node-3.lab", "192.0.2.3"}}));
  EXPECT_EQ(c.pool,
            (std::vector<PoolTarget>{{"node2", "ollama/llama3", 4}, {"node-3.lab", "ollama", 1}}));
}

TEST(ParseConfigTest, GidIndexAutoOrInteger) {
  EXPECT_EQ(Parsed("[gid]\nindex = \"auto\"\n").gid.index, -1);
  EXPECT_EQ(Parsed("[gid]\nindex = 0\n").gid.index, 0);
  EXPECT_EQ(ErrorOf("[gid]\nindex = \"any\"\n"),
            "t.toml:2:9: gid.index = \"any\" is not allowed; allowed: "
            "\"auto\" or 0..255");
  EXPECT_EQ(ErrorOf("[gid]\nindex = -1\n"),
            "t.toml:2:9: gid.index = -1 is out of range; allowed \"auto\" or "
            "0..255");
}

TEST(ParseConfigErrorTest, SyntaxError) {
  EXPECT_EQ(ErrorOf("[qp]\ntimeout = \n"),
            "t.toml:2:11: Error while parsing key-value pair: expected value, "
            "saw '\\n'");
}

TEST(ParseConfigErrorTest, UnknownKeyWithSuggestion) {
  EXPECT_EQ(ErrorOf("[qp]\n  timout = 3\n"),
            "t.toml:2:3: unknown key \"qp.timout\"; did you mean "
            "\"qp.timeout\"?");
  EXPECT_EQ(ErrorOf("[qp]\nlog_level = \"info\"\n"),
            "t.toml:2:1: unknown key \"qp.log_level\"; did you mean "
            "\"daemon.log_level\"?");
  EXPECT_EQ(ErrorOf("timeout = 3\n"),
            "t.toml:1:1: unknown key \"timeout\"; did you mean "
            "\"qp.timeout\"?");
}

TEST(ParseConfigErrorTest, UnknownKeyListsTheSectionsKeys) {
  EXPECT_EQ(ErrorOf("[mtu]\nzzzzzz = 1\n"),
            "t.toml:2:1: unknown key \"mtu.zzzzzz\"; known keys in [mtu]: cap");
  EXPECT_EQ(ErrorOf("[[pool]]\npeer = \"a\"\nservice = \"s\"\nzzzzzz = 1\n"
                    "[[peers]]\nname = \"a\"\naddress = \"h\"\n"),
            "t.toml:4:1: unknown key \"pool.zzzzzz\"; known keys in [[pool]]: "
            "peer, service, channels");
}

TEST(ParseConfigErrorTest, UnknownSection) {
  EXPECT_EQ(ErrorOf("[qpp]\ntimeout = 3\n"),
            "t.toml:1:2: unknown section \"qpp\"; did you mean \"qp\"?");
  EXPECT_EQ(ErrorOf("[unrelated_things]\n"),
            "t.toml:1:2: unknown section \"unrelated_things\"; known sections: "
            "daemon, devices, gid, mtu, qp, limits, echo, metrics, rails, cluster, peers, pool");
}

TEST(ParseConfigErrorTest, WrongType) {
  EXPECT_EQ(ErrorOf("[qp]\ntimeout = \"14\"\n"),
            "t.toml:2:11: qp.timeout: expected an integer, got a string");
  EXPECT_EQ(ErrorOf("[echo]\nenabled = 1\n"),
            "t.toml:2:11: echo.enabled: expected a boolean, got an integer");
  EXPECT_EQ(ErrorOf("[daemon]\npeer_insecure = true\n"),
            "t.toml:2:1: daemon.peer_insecure was removed: every peer call is authenticated, by "
            "mutual TLS (daemon.tls_*) or a shared key (daemon.peer_key_file; rdmactl peer-key "
            "FILE makes one)");
  EXPECT_EQ(ErrorOf("[devices]\nexclude = \"mlx5_0\"\n"),
            "t.toml:2:11: devices.exclude: expected an array of strings, got a "
            "string");
  EXPECT_EQ(ErrorOf("mtu = 4096\n"), "t.toml:1:7: mtu: expected a table, got an integer");
  EXPECT_EQ(ErrorOf("[peers]\nname = \"a\"\n"),
            "t.toml:1:1: peers: expected an array of tables ([[peers]]), got a "
            "table");
}

TEST(ParseConfigErrorTest, OutOfRange) {
  EXPECT_EQ(ErrorOf("[qp]\ntimeout = 40\n"),
            "t.toml:2:11: qp.timeout = 40 is out of range; allowed 0..31");
  EXPECT_EQ(ErrorOf("[daemon]\nallowed_uids = [0, -1]\n"),
            "t.toml:2:20: daemon.allowed_uids[1] = -1 is out of range; allowed "
            "0..4294967294");
}

TEST(ParseConfigErrorTest, NotAllowed) {
  EXPECT_EQ(ErrorOf("[mtu]\ncap = 1000\n"),
            "t.toml:2:7: mtu.cap = 1000 is not allowed; allowed: 256, 512, "
            "1024, 2048, 4096");
  EXPECT_EQ(ErrorOf("[qp]\ntype = \"UD\"\n"),
            "t.toml:2:8: qp.type = \"UD\" is not allowed; allowed: RC");
  EXPECT_EQ(ErrorOf("[daemon]\nlog_level = \"warning\"\n"),
            "t.toml:2:13: daemon.log_level = \"warning\" is not allowed; "
            "allowed: trace, debug, info, warn, error");
}

TEST(ParseConfigErrorTest, SocketMode) {
  EXPECT_EQ(ErrorOf("[daemon]\nsocket_mode = 0o666\n"),
            "t.toml:2:15: daemon.socket_mode = 0o666 is invalid: it grants "
            "access to others; clear the o bits (e.g. 0o660)");
  EXPECT_EQ(ErrorOf("[daemon]\nsocket_mode = 0o460\n"),
            "t.toml:2:15: daemon.socket_mode = 0o460 is invalid: the owner "
            "needs read and write (0o600)");
  EXPECT_EQ(ErrorOf("[daemon]\nsocket_mode = 0o4660\n"),
            "t.toml:2:15: daemon.socket_mode = 0o4660 is out of range; "
            "allowed 0o0..0o777");
}

TEST(ParseConfigErrorTest, DeviceSpecs) {
  EXPECT_EQ(ErrorOf("[devices]\ninclude = [\"mlx5_0\", \"mlx5_1:0\"]\n"),
            "t.toml:2:22: devices.include[1] = \"mlx5_1:0\" is invalid: the "
            "port must be 1..255");
  EXPECT_EQ(ErrorOf("[devices]\ninclude = [\"^mlx5_0\"]\n"),
            "t.toml:2:12: devices.include[0] = \"^mlx5_0\" is invalid: \"^\" "
            "is not valid inside a list; put the device in devices.exclude");
  EXPECT_THAT(ErrorOf("[devices]\nexclude = [\"mlx 5\"]\n"),
              StartsWith("t.toml:2:12: devices.exclude[0] = \"mlx 5\" is "
                         "invalid: a device name"));
}

TEST(ParseConfigErrorTest, Subnet) {
  EXPECT_EQ(ErrorOf("[gid]\nsubnet = \"192.0.2.0/33\"\n"),
            "t.toml:2:10: gid.subnet = \"192.0.2.0/33\" is invalid: an IPv4 "
            "prefix length must be 0..32");
  EXPECT_EQ(ErrorOf("[gid]\nsubnet = \"2001:db8::/129\"\n"),
            "t.toml:2:10: gid.subnet = \"2001:db8::/129\" is invalid: an IPv6 "
            "prefix length must be 0..128");
  EXPECT_EQ(ErrorOf("[gid]\nsubnet = \"net-a/24\"\n"),
            "t.toml:2:10: gid.subnet = \"net-a/24\" is invalid: not an IPv4 "
            "or IPv6 address before the \"/\"");
  EXPECT_THAT(ErrorOf("[gid]\nsubnet = \"192.0.2.0\"\n"), HasSubstr("expected ADDRESS/PREFIX"));
}

constexpr std::string_view kTwoPeers =
    "[[peers]]\nname = \"a\"\naddress = \"h1\"\n"
    "[[peers]]\nname = \"b\"\naddress = \"h2:7581\"\n";

TEST(ParseConfigErrorTest, PoolNamingAnUnknownPeer) {
  EXPECT_EQ(ErrorOf(std::string(kTwoPeers) + "[[pool]]\npeer = \"c\"\nservice = \"s\"\n"),
            "t.toml:8:8: pool[0].peer = \"c\" is not the name of a [[peers]] "
            "entry; known peers: a, b");
  EXPECT_EQ(ErrorOf("[[pool]]\npeer = \"c\"\nservice = \"s\"\n"),
            "t.toml:2:8: pool[0].peer = \"c\" is not the name of a [[peers]] "
            "entry; none are defined");
}

TEST(ParseConfigErrorTest, DuplicatePeerName) {
  EXPECT_EQ(ErrorOf(std::string(kTwoPeers) + "[[peers]]\nname = \"a\"\naddress = \"h3\"\n"),
            "t.toml:8:8: peers[2].name = \"a\" is a duplicate of the peer at "
            "line 2");
}

TEST(ParseConfigErrorTest, MissingRequiredField) {
  EXPECT_EQ(ErrorOf("[[peers]]\nname = \"a\"\n"),
            "t.toml:1:1: peers[0] ([[peers]]): missing required key "
            "\"address\"");
  EXPECT_EQ(ErrorOf(std::string(kTwoPeers) + "\n[[pool]]\npeer = \"a\"\n"),
            "t.toml:8:1: pool[0] ([[pool]]): missing required key \"service\"");
}

TEST(ParseConfigErrorTest, PeerAddress) {
  EXPECT_EQ(Parsed("[[peers]]\nname = \"a\"\naddress = \"[::1]:7581\"\n").peers[0].address,
            "[::1]:7581");
  EXPECT_EQ(ErrorOf("[[peers]]\nname = \"a\"\naddress = \"h:0\"\n"),
            "t.toml:3:11: peers[0].address = \"h:0\" is invalid: the port must "
            "be 1..65535");
  EXPECT_EQ(ErrorOf("[[peers]]\nname = \"a\"\naddress = \"[::1\"\n"),
            "t.toml:3:11: peers[0].address = \"[::1\" is invalid: missing "
            "\"]\"");
}

TEST(ParseConfigErrorTest, AllErrorsInDocumentOrder) {
  // toml++ orders keys by name; the report follows the file instead.
  EXPECT_EQ(ErrorOf("[qp]\ntimeout = 40\nretry_cnt = 8\n[daemon]\n"
                    "log_level = 3\n"),
            "t.toml:2:11: qp.timeout = 40 is out of range; allowed 0..31\n"
            "t.toml:3:13: qp.retry_cnt = 8 is out of range; allowed 0..7\n"
            "t.toml:5:13: daemon.log_level: expected a string, got an "
            "integer");
}

TEST(LoadConfigTest, MissingFileIsNotFound) {
  std::string path = testing::TempDir() + "/rdmad-no-such-file.toml";
  StatusOr<Config> config = LoadConfig(path, EmptyEnv());
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status(),
            Status::NotFound("cannot read " + path + ": No such file or directory"));
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(LoadConfigTest, UnreadableFileIsPermissionDenied) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads every file";
  std::string path = WriteTemp("rdmad-unreadable.toml", "");
  ASSERT_EQ(chmod(path.c_str(), 0), 0);
  StatusOr<Config> config = LoadConfig(path, EmptyEnv());
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status(),
            Status::PermissionDenied("cannot read " + path + ": Permission denied"));
  unlink(path.c_str());
}

TEST(LoadConfigTest, ParsesAndAppliesTheEnvironment) {
  std::string path = WriteTemp("rdmad-load.toml", "[qp]\ntimeout = 20\n");
  EnvMap env(std::map<std::string, std::string, std::less<>>{{"RDMAD_QP_RETRY_CNT", "3"}});
  StatusOr<Config> config = LoadConfig(path, env);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->source, path);
  EXPECT_EQ(config->qp.timeout, 20);
  EXPECT_EQ(config->qp.retry_cnt, 3);
  unlink(path.c_str());
}

TEST(LoadConfigTest, FileErrorsNameThePath) {
  std::string path = WriteTemp("rdmad-bad.toml", "[qp]\ntimeout = 40\n");
  StatusOr<Config> config = LoadConfig(path, EmptyEnv());
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            path + ":2:11: qp.timeout = 40 is out of range; allowed 0..31");
  unlink(path.c_str());
}

TEST(ValidateConfigTest, PeerListenerNeedsTlsOffLoopback) {
  Config c = DefaultConfig();
  EXPECT_TRUE(ValidateConfig(c).ok());
  c.daemon.peer_address = "0.0.0.0";
  Status status = ValidateConfig(c);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), StartsWith("<defaults>: daemon.peer_address = \"0.0.0.0\" is not "
                                           "a loopback address"));
  c.daemon.peer_key_file = "/etc/rdmad/peer.key";
  EXPECT_TRUE(ValidateConfig(c).ok());
  c.daemon.peer_key_file = "";
  c.daemon.tls_cert = "/c.pem";
  c.daemon.tls_key = "/k.pem";
  EXPECT_THAT(ValidateConfig(c).message(), HasSubstr("go together"));
  c.daemon.tls_ca = "/ca.pem";
  EXPECT_TRUE(ValidateConfig(c).ok());
}

TEST(ValidateConfigTest, OnlyLoopbackMayGoWithoutTls) {
  Config c = DefaultConfig();
  for (const char* loopback : {"127.0.0.1", "127.1.2.3", "::1", "localhost"}) {
    c.daemon.peer_address = loopback;
    EXPECT_TRUE(ValidateConfig(c).ok()) << loopback;
  }
  for (const char* open :
       {"0.0.0.0", "::", "192.0.2.10", "node1.example.net", "::ffff:127.0.0.1"}) {
    c.daemon.peer_address = open;
    EXPECT_EQ(ValidateConfig(c).code(), StatusCode::kInvalidArgument) << open;
  }
  c.daemon.peer_key_file = "/k";  // with TLS as well: fine, TLS is used
  c.daemon.tls_cert = "/c.pem";
  c.daemon.tls_key = "/k.pem";
  c.daemon.tls_ca = "/ca.pem";
  EXPECT_TRUE(ValidateConfig(c).ok());
}

TEST(ValidateConfigTest, ClusterTlsFilesGoTogether) {
  Config c = DefaultConfig();
  c.cluster.tls_cert = "/c.pem";
  EXPECT_THAT(ValidateConfig(c).message(),
              HasSubstr("cluster.tls_cert and cluster.tls_key go together"));
  c.cluster.tls_key = "/k.pem";
  EXPECT_THAT(ValidateConfig(c).message(), HasSubstr("cluster.tls_cert needs cluster.tls_ca"));
  c.cluster.tls_ca = "/ca.pem";
  EXPECT_TRUE(ValidateConfig(c).ok());
  c.cluster.tls_cert = c.cluster.tls_key = "";  // server-verified TLS only
  EXPECT_TRUE(ValidateConfig(c).ok());
}

TEST(ClusterConfigTest, KeysParseAndBadOnesNameTheLine) {
  auto config = ParseConfig(
      "[cluster]\nendpoints = [\"127.0.0.1:2379\", \"etcd2\"]\nprefix = \"/lab/\"\n"
      "lease_ttl_s = 5\n",
      "t.toml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_THAT(config->cluster.endpoints, ElementsAre("127.0.0.1:2379", "etcd2"));
  EXPECT_EQ(config->cluster.prefix, "/lab/");
  EXPECT_EQ(config->cluster.lease_ttl_s, 5);
  EXPECT_TRUE(DefaultConfig().cluster.endpoints.empty());
  EXPECT_EQ(DefaultConfig().cluster.prefix, "/rdmad/v1/");
  EXPECT_EQ(DefaultConfig().cluster.lease_ttl_s, 10);
  auto bad = ParseConfig("[cluster]\nprefix = \"rdmad\"\n", "t.toml");
  EXPECT_THAT(bad.status().message(), StartsWith("t.toml:2:"));
  EXPECT_THAT(bad.status().message(), HasSubstr("starts and ends with"));
  bad = ParseConfig("[cluster]\nlease_ttl_s = 1\n", "t.toml");
  EXPECT_THAT(bad.status().message(), StartsWith("t.toml:2:"));
  bad = ParseConfig("[cluster]\nendpoints = [\"etcd:99999\"]\n", "t.toml");
  EXPECT_THAT(bad.status().message(), StartsWith("t.toml:2:"));
}

}  // namespace
}  // namespace rdmad
