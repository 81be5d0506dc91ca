// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// A writer of the cluster's etcd prefix cannot make a daemon talk to the
// wrong host by name: a member's record that points at another daemon of
// the deployment (which answers with its own, proven, name), or at a
// daemon without the deployment's peer key, is not used; the member's
// record that points at itself is. Real etcd, real daemons on loopback,
// the records forged through etcd's API as such a writer would.

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "daemon/cluster/member_record.h"
#include "daemon/rpc/etcd_store.h"
#include "gtest/gtest.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/etcd_process.h"
#include "tests/integration/etcd_store_fixture.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::EtcdProcess;
using Clock = std::chrono::steady_clock;

constexpr char kPrefix[] = "/rdmad/v1/";

class ClusterTrustTest : public testing::EtcdStoreFixture {
 protected:
  void SetUp() override {
    EtcdStoreFixture::SetUp();
    if (HasFatalFailure()) return;
    key_ = "peer_key_file = \"" + testing::WritePeerKey(dir_) + "\"\n";
    ASSERT_NO_FATAL_FAILURE(Start("hub", key_, true));
    ASSERT_NO_FATAL_FAILURE(Start("gamma", key_, true));
    // A daemon without the deployment's key, not in the cluster.
    ASSERT_NO_FATAL_FAILURE(Start("mallory", "", false));
  }

  void Start(const std::string& name, const std::string& extra, bool member) {
    std::string socket = dir_.File(name + "/rdmad.sock");
    int port = testing::FreeLoopbackPort();
    std::string config = "[daemon]\nsocket = \"" + socket +
                         "\"\nsocket_group = \"\"\npeer_address = \"127.0.0.1\"\n"
                         "log_level = \"debug\"\nnode_name = \"" +
                         name + "\"\n" + extra;
    if (member) config += "\n[cluster]\nendpoints = [\"" + etcd_.endpoint() + "\"]\n";
    auto process = testing::StartPeeredDaemon(dir_.Write(name + ".toml", config), port,
                                              dir_.File(name + ".log"));
    ASSERT_TRUE(testing::WaitForPath(socket, seconds(10), process.get()))
        << process->Describe() << "\n"
        << process->log();
    sockets_[name] = socket;
    ports_[name] = port;
    daemons_[name] = std::move(process);
  }

  // rdmactl [--json] COMMAND on node's socket: its exit code and output.
  int Ctl(const std::string& node, const std::vector<std::string>& command, std::string* out) {
    std::vector<std::string> args = {"--socket", sockets_[node]};
    args.insert(args.end(), command.begin(), command.end());
    return testing::RunCommand(RDMACTL_BINARY, args, out);
  }

  // The record gamma published, renamed: what a writer of the prefix
  // would put to send `name`'s traffic to port.
  bool Forge(const std::string& name, int port) {
    auto listed = store_->List(MemberKey(kPrefix, "gamma"));
    if (!listed.ok() || listed->entries.empty()) return false;
    auto record = DecodeMemberRecord(listed->entries[0].value);
    if (!record.ok()) return false;
    record->name = name;
    record->peer_address = "127.0.0.1:" + std::to_string(port);
    return store_->Put(MemberKey(kPrefix, name), EncodeMemberRecord(*record), 0).ok();
  }

  // Waits until hub's view lists names.
  bool HubSees(const std::vector<std::string>& names) {
    auto deadline = Clock::now() + seconds(15);
    while (Clock::now() < deadline) {
      std::string out;
      if (Ctl("hub", {"--json", "cluster"}, &out) == 0) {
        auto view = nlohmann::json::parse(out, nullptr, false);
        size_t found = 0;
        if (view.is_object()) {
          for (const auto& m : view["members"]) {
            for (const auto& n : names) found += m["name"] == n;
          }
        }
        if (found == names.size()) return true;
      }
      std::this_thread::sleep_for(milliseconds(100));
    }
    return false;
  }

  // hub's peer `name` as `rdmactl --json peers` shows it (null if absent).
  nlohmann::json HubPeer(const std::string& name) {
    std::string out;
    if (Ctl("hub", {"--json", "peers"}, &out) != 0) return nullptr;
    auto peers = nlohmann::json::parse(out, nullptr, false);
    if (!peers.is_object()) return nullptr;
    for (const auto& p : peers["peers"]) {
      if (p["name"] == name) return p;
    }
    return nullptr;
  }

  std::string Logs() {
    std::string all;
    for (auto& [name, d] : daemons_) all += "--- " + name + "\n" + d->log() + "\n";
    return all;
  }

  std::string key_;
  std::map<std::string, std::string> sockets_;
  std::map<std::string, int> ports_;
  std::map<std::string, std::unique_ptr<testing::Process>> daemons_;
};

TEST_F(ClusterTrustTest, AMemberIsUsedOnlyWhenTheDaemonThereProvesItsName) {
  ASSERT_TRUE(HubSees({"hub", "gamma"})) << Logs();
  // Allowed: gamma's own record leads to gamma.
  std::string out;
  EXPECT_EQ(Ctl("hub", {"ping", "-c", "2", "gamma"}, &out), 0) << out << Logs();

  // "beta" points at gamma, a daemon of the deployment with its own name;
  // "delta" points at mallory, a daemon without the peer key.
  ASSERT_TRUE(Forge("beta", ports_["gamma"]));
  ASSERT_TRUE(Forge("delta", ports_["mallory"]));
  ASSERT_TRUE(HubSees({"beta", "delta"})) << Logs();
  EXPECT_NE(Ctl("hub", {"ping", "-c", "1", "beta"}, &out), 0) << out;
  EXPECT_NE(Ctl("hub", {"ping", "-c", "1", "delta"}, &out), 0) << out;
  struct Want {
    const char* peer;
    const char* says;
  };
  for (const Want& want : {Want{"beta", "is gamma, not the cluster member beta"},
                           Want{"delta", "did not prove the peer key"}}) {
    SCOPED_TRACE(want.peer);
    nlohmann::json peer = HubPeer(want.peer);
    ASSERT_TRUE(peer.is_object()) << Logs();
    EXPECT_NE(peer["state"], "up") << peer.dump();
    EXPECT_NE(peer["last_error"].get<std::string>().find(want.says), std::string::npos)
        << peer.dump();
  }
  // Nothing of it reached gamma or mallory as a channel, and gamma is
  // still reached by its own name.
  EXPECT_EQ(Ctl("hub", {"ping", "-c", "1", "gamma"}, &out), 0) << out << Logs();
  for (const auto& [name, d] : daemons_) EXPECT_TRUE(d->running()) << name << "\n" << Logs();
}

}  // namespace
}  // namespace rdmad
