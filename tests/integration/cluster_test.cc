// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Cluster membership through the real binaries and a real etcd on
// loopback: three daemons with no [[peers]] find each other, list each
// other's services, and reach each other by node name; one killed with
// SIGKILL is gone within its lease TTL + 2 s; etcd killed and started
// again: the daemons keep their view meanwhile, say etcd is unreachable,
// and resynchronise after (a daemon started while it was away is seen); a
// member's session closes when unused and opens again on use.

#include <signal.h>

#include <thread>

#include "gtest/gtest.h"
#include "rdmad/client.h"
#include "tests/integration/cluster_fixture.h"

namespace rdmad {
namespace {

using namespace rdmad::testing;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST_F(ClusterTest, ThreeDaemonsFindEachOtherWithoutPeersAndConnectByName) {
  for (const char* node : {"alpha", "beta", "gamma"}) {
    ASSERT_TRUE(Sees(node, {"alpha", "beta", "gamma"})) << node << ": " << Logs();
  }
  // Each daemon's echo service is in its record.
  ASSERT_TRUE(Sees("alpha", {"alpha", "beta", "gamma"}, seconds(15), "rdmad.echo")) << Logs();
  EXPECT_EQ(Members("alpha", "no.such.service"), std::vector<std::string>{});
  auto view = nodes_["alpha"]->client->ListMembers();
  ASSERT_TRUE(view.ok());
  EXPECT_TRUE(view->reachable);
  EXPECT_TRUE(view->members[0].self);
  EXPECT_EQ(view->members[0].name, "alpha");
  // The members are peers ("discovered"), and channels reach them by name.
  auto peers = nodes_["alpha"]->client->ListPeers();
  ASSERT_TRUE(peers.ok());
  ASSERT_EQ(peers->size(), 2u);
  for (const PeerInfo& p : *peers) EXPECT_EQ(p.origin, "discovered") << p.name;
  std::string out;
  int rc = RunCommand(RDMACTL_BINARY,
                      {"--socket", nodes_["alpha"]->socket, "ping", "-c", "2", "gamma"}, &out);
  EXPECT_EQ(rc, 0) << out << Logs();
  rc = RunCommand(RDMACTL_BINARY, {"--socket", nodes_["beta"]->socket, "cluster"}, &out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("alpha"), std::string::npos) << out;
  EXPECT_NE(out.find("beta (this node)"), std::string::npos) << out;
  rc = RunCommand(RDMACTL_BINARY, {"--socket", nodes_["beta"]->socket, "services", "rdmad.echo"},
                  &out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("alpha, beta, gamma"), std::string::npos) << out;
}

TEST_F(ClusterTest, AKilledMemberIsGoneWithinItsTtlAndTwoSeconds) {
  ASSERT_TRUE(Sees("alpha", {"alpha", "beta", "gamma"})) << Logs();
  nodes_["gamma"]->process->Signal(SIGKILL);
  auto killed = Clock::now();
  ASSERT_TRUE(Sees("alpha", {"alpha", "beta"}, seconds(kTtl + 10))) << Logs();
  auto gone = Clock::now() - killed;
  EXPECT_LE(gone, seconds(kTtl + 2)) << std::chrono::duration<double>(gone).count() << " s";
  ASSERT_TRUE(Sees("beta", {"alpha", "beta"}, seconds(2))) << Logs();
  // A clean stop withdraws at once.
  nodes_["beta"]->process->Signal(SIGTERM);
  ASSERT_TRUE(Sees("alpha", {"alpha"}, seconds(2))) << Logs();
}

TEST_F(ClusterTest, TheViewOutlivesEtcdAndRecoversWhenItIsBack) {
  ASSERT_TRUE(Sees("alpha", {"alpha", "beta", "gamma"})) << Logs();
  etcd_.Kill();
  auto until = Clock::now() + seconds(15);
  StatusOr<ClusterView> view = Status::Internal("not asked");
  do {
    std::this_thread::sleep_for(milliseconds(100));
    view = nodes_["alpha"]->client->ListMembers();
  } while (view.ok() && view->reachable && Clock::now() < until);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_FALSE(view->reachable);
  EXPECT_FALSE(view->last_error.empty());
  EXPECT_EQ(Members("alpha"), (std::vector<std::string>{"alpha", "beta", "gamma"}));
  std::string out;
  RunCommand(RDMACTL_BINARY, {"--socket", nodes_["alpha"]->socket, "cluster"}, &out);
  EXPECT_NE(out.find("UNREACHABLE"), std::string::npos) << out;
  // A daemon that starts while etcd is away, then etcd comes back.
  ASSERT_NO_FATAL_FAILURE(StartNode("delta"));
  ASSERT_TRUE(etcd_.Start()) << etcd_.log();
  for (const char* node : {"alpha", "delta"}) {
    EXPECT_TRUE(Sees(node, {"alpha", "beta", "gamma", "delta"}, seconds(20))) << node << Logs();
  }
  view = nodes_["alpha"]->client->ListMembers();
  ASSERT_TRUE(view.ok());
  EXPECT_TRUE(view->reachable);
}

// A member's session closes after daemon.peer_idle_close_s without a
// channel or a use, and opens again when the member is used.
class ClusterIdleTest : public ClusterTest {
 protected:
  ClusterIdleTest() { daemon_extra_ = "peer_idle_close_s = 1\n"; }
};

TEST_F(ClusterIdleTest, AnUnusedMemberSessionClosesAndOpensAgainOnUse) {
  ASSERT_TRUE(Sees("alpha", {"alpha", "beta", "gamma"})) << Logs();
  EXPECT_EQ(PeerStateOf("alpha", "gamma"), "idle");
  auto listener = nodes_["gamma"]->client->Listen("idle.test");
  ASSERT_TRUE(listener.ok()) << listener.status().ToString() << Logs();
  StatusOr<std::unique_ptr<Channel>> accepted = Status::Internal("not accepted");
  std::jthread acceptor([&] { accepted = (*listener)->Accept(seconds(30)); });
  auto channel = nodes_["alpha"]->client->Connect("gamma", "idle.test");
  acceptor.join();
  ASSERT_TRUE(channel.ok()) << channel.status().ToString() << Logs();
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString() << Logs();
  EXPECT_EQ(PeerStateOf("alpha", "gamma"), "up");
  // A channel keeps it in use, well past the idle time.
  std::this_thread::sleep_for(seconds(3));
  EXPECT_EQ(PeerStateOf("alpha", "gamma"), "up") << Logs();
  ASSERT_TRUE((*channel)->Send("ping", 4).ok());
  auto got = (*accepted)->Recv(seconds(10));
  ASSERT_TRUE(got.ok()) << got.status().ToString() << Logs();
  EXPECT_EQ(std::string(got->begin(), got->end()), "ping");
  (*accepted)->Close();
  (*channel)->Close();
  // Then it closes: gamma is an idle member again, still listed.
  EXPECT_TRUE(PeerStateBecomes("alpha", "gamma", "idle", seconds(10))) << Logs();
  EXPECT_NE(nodes_["alpha"]->process->log().find("no channel and no use for 1 s; closing its "
                                                 "session (the member stays listed, idle)"),
            std::string::npos)
      << Logs();
  // Used again: a new session, and the ping gets through.
  std::string out;
  int rc = RunCommand(RDMACTL_BINARY,
                      {"--socket", nodes_["alpha"]->socket, "ping", "-c", "2", "gamma"}, &out);
  EXPECT_EQ(rc, 0) << out << Logs();
  const std::string log = nodes_["alpha"]->process->log();
  size_t opened = 0;
  for (size_t at = 0; (at = log.find("peer gamma: opening a session", at)) != std::string::npos;
       ++at) {
    ++opened;
  }
  EXPECT_EQ(opened, 2u) << log;
}

}  // namespace
}  // namespace rdmad
