// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The cluster tests' fixture (cluster_test.cc, cluster_outage_test.cc):
// a real etcd on loopback and three daemons (alpha, beta, gamma) with no
// [[peers]], members of it with a lease of kTtl seconds, each with a
// client. Logs() has etcd's and every daemon's log for a failure.
//
// Thread safety: as a gtest fixture, from the test's thread.

#ifndef RDMAD_TESTS_INTEGRATION_CLUSTER_FIXTURE_H_
#define RDMAD_TESTS_INTEGRATION_CLUSTER_FIXTURE_H_

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "rdmad/client.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/etcd_process.h"

namespace rdmad::testing {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

constexpr int kTtl = 2;  // seconds: the members' lease

struct Node {
  std::string name;
  std::string socket;
  int port = 0;
  std::unique_ptr<Process> process;
  std::unique_ptr<Client> client;
};

class ClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(EtcdProcess::Binary().empty())
        << "the cluster tests need Debian's etcd-server (scripts/bootstrap installs it)";
    ASSERT_TRUE(etcd_.Start()) << etcd_.log();
    for (const char* name : {"alpha", "beta", "gamma"}) {
      ASSERT_NO_FATAL_FAILURE(StartNode(name));
    }
  }

  void StartNode(const std::string& name) {
    auto node = std::make_unique<Node>();
    node->name = name;
    node->socket = dir_.File(name + "/rdmad.sock");
    node->port = FreeLoopbackPort();
    std::string config = dir_.Write(
        name + ".toml", "[daemon]\nsocket = \"" + node->socket +
                            "\"\nsocket_group = \"\"\nlog_level = \"debug\"\n"
                            "peer_address = \"127.0.0.1\"\nnode_name = \"" +
                            name + "\"\n" + daemon_extra_ + "\n[cluster]\nendpoints = [\"" +
                            etcd_.endpoint() + "\"]\nlease_ttl_s = " + std::to_string(kTtl) + "\n");
    node->process = StartPeeredDaemon(config, node->port, dir_.File(name + ".log"));
    ASSERT_TRUE(WaitForPath(node->socket, seconds(10), node->process.get()))
        << node->process->Describe() << "\n"
        << node->process->log();
    ClientOptions options;
    options.socket_path = node->socket;
    auto client = Client::Open(options);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    node->client = std::move(client).value();
    nodes_[name] = std::move(node);
  }

  // The member names node sees (itself included), sorted.
  std::vector<std::string> Members(const std::string& node, const std::string& service = "") {
    auto view = nodes_[node]->client->ListMembers(service);
    if (!view.ok()) return {"error: " + view.status().ToString()};
    std::vector<std::string> names;
    for (const ClusterMember& m : view->members) names.push_back(m.name);
    std::sort(names.begin(), names.end());
    return names;
  }

  // Waits up to timeout until node sees exactly names.
  bool Sees(const std::string& node, std::vector<std::string> names,
            milliseconds timeout = seconds(15), const std::string& service = "") {
    std::sort(names.begin(), names.end());
    auto until = Clock::now() + timeout;
    while (Members(node, service) != names) {
      if (Clock::now() > until) return false;
      std::this_thread::sleep_for(milliseconds(50));
    }
    return true;
  }

  std::string Logs() {
    std::string out = "etcd:\n" + etcd_.log();
    for (auto& [name, node] : nodes_) out += "\n--- " + name + ":\n" + node->process->log();
    return out;
  }

  // The state node sees peer in (PeerStateName), "" when not listed.
  std::string PeerStateOf(const std::string& node, const std::string& peer) {
    auto peers = nodes_[node]->client->ListPeers();
    if (!peers.ok()) return "error: " + peers.status().ToString();
    for (const PeerInfo& p : *peers) {
      if (p.name == peer) return std::string(PeerStateName(p.state));
    }
    return "";
  }

  bool PeerStateBecomes(const std::string& node, const std::string& peer, const std::string& state,
                        milliseconds timeout) {
    auto until = Clock::now() + timeout;
    while (PeerStateOf(node, peer) != state) {
      if (Clock::now() > until) return false;
      std::this_thread::sleep_for(milliseconds(50));
    }
    return true;
  }

  std::string daemon_extra_;  // more [daemon] keys, set before SetUp
  TempDir dir_;
  EtcdProcess etcd_{dir_};
  std::map<std::string, std::unique_ptr<Node>> nodes_;
};

}  // namespace rdmad::testing

#endif  // RDMAD_TESTS_INTEGRATION_CLUSTER_FIXTURE_H_
