// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Local clients are isolated by uid (docs/security.md), between two real
// rdmad processes on loopback whose sockets the group "nogroup" may use.
// The owner's side runs in this process (root, raw gRPC); the other uid
// (nobody, 65534, in nogroup) runs local_api_probe or rdmactl after fork,
// setuid and exec. For every call that names an object (Connect, Accept,
// Reject, HoldChannel, ReleaseChannel, Prewarm, ReportPool) the other uid
// gets NOT_FOUND and nothing changes, while the owner's calls go through;
// ListChannels and ListPools show each uid its own rows; root and the
// members of daemon.admin_group see and close everything (rdmactl close).

#include <fcntl.h>
#include <grp.h>
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "rdmad/v1/rdmad.grpc.pb.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/grpc_node.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::Process;
using testing::TcpEndpoint;
using testing::TempDir;
using Node = testing::GrpcNode;

constexpr uid_t kNobody = 65534;

// What argv printed on stdout, run as uid and gid (0: as this process).
std::string RunAs(uid_t uid, gid_t gid, const std::vector<std::string>& argv) {
  int out[2];
  if (pipe(out) != 0) return "pipe failed";
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    close(out[1]);
    if (uid != 0 && (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0)) {
      _exit(9);
    }
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) text.append(buf, size_t(n));
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) return text + " (killed)";
  return text +
         (WEXITSTATUS(status) == 0 ? "" : " (exit " + std::to_string(WEXITSTATUS(status)) + ")");
}

// B's application (root): listens on "svc" and answers each request when
// the test says so.
class RootListener {
 public:
  // Returns once B registered the service (or after 10 s).
  explicit RootListener(v1::Rdmad::Stub* stub) : stub_(stub) {
    thread_ = std::thread([this] { Run(); });
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, seconds(10), [this] { return registered_; });
  }
  ~RootListener() {
    ctx_.TryCancel();
    thread_.join();
  }
  // The next request's id, once it came (0 after 10 s).
  uint64_t NextRequest() {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, seconds(10), [this] { return request_ != 0; });
    return request_;
  }
  // How many requests came so far.
  int requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  grpc::Status Accept(uint64_t request_id) {
    grpc::ClientContext ctx;
    v1::AcceptRequest req;
    req.set_request_id(request_id);
    *req.add_endpoints() = TcpEndpoint(2222);
    v1::AcceptResponse out;
    return stub_->Accept(&ctx, req, &out);
  }

 private:
  void Run() {
    v1::ListenRequest req;
    req.set_service("svc");
    auto reader = stub_->Listen(&ctx_, req);
    v1::ListenEvent event;
    while (reader->Read(&event)) {
      if (event.has_registered()) {
        std::lock_guard lock(mu_);
        registered_ = true;
        cv_.notify_all();
      }
      if (!event.has_incoming()) continue;
      std::lock_guard lock(mu_);
      ++requests_;
      request_ = event.incoming().request_id();
      cv_.notify_all();
    }
    reader->Finish();
  }
  v1::Rdmad::Stub* stub_;
  grpc::ClientContext ctx_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t request_ = 0;     // guarded by mu_
  int requests_ = 0;         // guarded by mu_
  bool registered_ = false;  // guarded by mu_
};

class IsolationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (getuid() != 0) GTEST_SKIP() << "needs root to run a client as another uid";
    group* nogroup = getgrnam("nogroup");
    if (nogroup == nullptr) GTEST_SKIP() << "no group 'nogroup'";
    gid_ = nogroup->gr_gid;
    chmod(dir_.path().c_str(), 0755);  // nobody reaches the sockets' directories
    a_.name = "A";
    b_.name = "B";
    for (Node* n : {&a_, &b_}) {
      n->socket = dir_.File(n->name + "/rdmad.sock");
      n->port = testing::FreeLoopbackPort();
    }
  }

  void Start(const std::string& a_admin_group = "") {
    StartNode(&b_, a_, "");
    StartNode(&a_, b_, a_admin_group);
    // Each session up before a test connects across it: a Connect while
    // a session's first dial is being retried fails at once (UNAVAILABLE
    // with the failed dial's error), which is not what these tests test.
    ASSERT_TRUE(SessionUp(a_, b_.name)) << Logs();
    ASSERT_TRUE(SessionUp(b_, a_.name)) << Logs();
  }

  // n's session to the peer named peer is up, within 10 s.
  bool SessionUp(const Node& n, const std::string& peer) {
    const auto until = std::chrono::steady_clock::now() + seconds(10);
    for (;;) {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + seconds(2));
      v1::ListPeersResponse peers;
      if (n.stub->ListPeers(&ctx, v1::ListPeersRequest(), &peers).ok()) {
        for (const v1::Peer& p : peers.peers()) {
          if (p.name() == peer && p.state() == v1::PEER_UP) return true;
        }
      }
      if (std::chrono::steady_clock::now() >= until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  void StartNode(Node* n, const Node& peer, const std::string& admin_group) {
    std::string keys =
        "socket_group = \"nogroup\"\nadmin_group = \"" + admin_group + "\"" + extra_keys_;
    std::string config =
        dir_.Write(n->name + ".toml",
                   testing::LoopbackPeerConfig(n->socket, n->port, keys, peer.name, peer.port));
    n->process = testing::StartPeeredDaemon(config, n->port, dir_.File(n->name + ".log"));
    ASSERT_TRUE(testing::WaitForPath(n->socket, seconds(10), n->process.get()))
        << n->process->Describe() << "\n"
        << n->process->log();
    n->stub = v1::Rdmad::NewStub(
        grpc::CreateChannel("unix:" + n->socket, grpc::InsecureChannelCredentials()));
  }

  // local_api_probe's line for call on node, as nobody (or root).
  std::string Probe(const Node& n, const std::vector<std::string>& call, bool as_root = false) {
    std::vector<std::string> argv{LOCAL_API_PROBE, n.socket};
    argv.insert(argv.end(), call.begin(), call.end());
    return RunAs(as_root ? 0 : kNobody, gid_, argv);
  }
  // peer_api_probe's line for call to node's peer port, as nobody (or root).
  std::string PeerProbe(const Node& n, const std::vector<std::string>& call, bool as_root) {
    std::vector<std::string> argv{PEER_API_PROBE, "127.0.0.1:" + std::to_string(n.port)};
    argv.insert(argv.end(), call.begin(), call.end());
    return RunAs(as_root ? 0 : kNobody, gid_, argv);
  }
  std::string Rdmactl(const Node& n, const std::vector<std::string>& args, bool as_root) {
    std::vector<std::string> argv{RDMACTL_BINARY, "--socket", n.socket};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunAs(as_root ? 0 : kNobody, gid_, argv);
  }

  // A plans a channel to B's "svc" as root (retrying while A's session to
  // B comes up).
  uint64_t PlanAsRoot() {
    for (int i = 0; i < 50; ++i) {
      grpc::ClientContext ctx;
      v1::PlanChannelRequest req;
      req.set_peer("B");
      req.set_service("svc");
      v1::PlanChannelResponse out;
      if (a_.stub->PlanChannel(&ctx, req, &out).ok()) return out.channel_ids(0);
      std::this_thread::sleep_for(milliseconds(100));
    }
    return 0;
  }

  std::string Logs() { return a_.process->log() + "\n---\n" + b_.process->log(); }

  // A's root connects the planned channel id to B's root listener, which
  // accepts it; reply is A's answer.
  ::testing::AssertionResult ConnectAsRoot(uint64_t id, RootListener& listener,
                                           v1::ConnectResponse* reply) {
    std::optional<grpc::Status> connected;
    grpc::ClientContext connect_ctx;
    std::jthread connect([&] {
      v1::ConnectRequest req;
      v1::ChannelOpening* c = req.add_channels();
      c->set_channel_id(id);
      *c->mutable_endpoint() = TcpEndpoint(1111);
      connected = a_.stub->Connect(&connect_ctx, req, reply);
    });
    uint64_t request = listener.NextRequest();
    if (request == 0) connect_ctx.TryCancel();
    grpc::Status accepted = request == 0 ? grpc::Status(grpc::StatusCode::UNKNOWN, "no request")
                                         : listener.Accept(request);
    connect.join();
    if (!accepted.ok() || !connected || !connected->ok()) {
      return ::testing::AssertionFailure()
             << "accept: " << accepted.error_message()
             << "; connect: " << (connected ? connected->error_message() : "no answer") << "\n"
             << Logs();
    }
    return ::testing::AssertionSuccess();
  }

  TempDir dir_;
  std::string extra_keys_;  // more [daemon] keys for both daemons' configs
  gid_t gid_ = 0;
  Node a_;
  Node b_;
};

bool Says(const std::string& line, const std::string& code) {
  return line.rfind("PROBE " + code, 0) == 0;
}

// Rail plans (docs/topology.md): another uid sees how many plans a device
// carries, never whose they are; its own plan is its own process's, and
// ends with it.
TEST_F(IsolationTest, AnotherUidSeesItsOwnRailPlansOnly) {
  extra_keys_ = "\n[rails]\ntopology_xml = \"" + std::string(RDMAD_SOURCE_DIR) +
                "/tests/fixtures/topology/gpu8-nic8-2socket.xml\"";
  Start();
  grpc::ClientContext ctx;
  v1::PlanRailsRequest req;
  req.set_gpu("0");
  v1::RailPlan mine;
  ASSERT_TRUE(a_.stub->PlanRails(&ctx, req, &mine).ok());
  ASSERT_EQ(mine.rails(0).device(), "mlx5_0");
  const std::string root_plan = std::to_string(getpid()) + ":gpu 0000:11:00.0,";
  // nobody: root's plan is counted on mlx5_0 but not shown.
  EXPECT_EQ(Probe(a_, {"rail-plans"}), "PROBE OK plans= load=mlx5_0:1,\n");
  // nobody's own plan, on GPU 0 too: shown to it, with its own pid.
  std::string own = Probe(a_, {"plan-rails", "0"});
  EXPECT_TRUE(Says(own, "OK plans=")) << own;
  EXPECT_NE(own.find(":gpu 0000:11:00.0, load=mlx5_0:2,\n"), std::string::npos) << own;
  EXPECT_EQ(own.find(root_plan), std::string::npos) << own;
  // Root sees its own; the probe's plan ended with its process.
  EXPECT_EQ(Probe(a_, {"rail-plans"}, true), "PROBE OK plans=" + root_plan + " load=mlx5_0:1,\n");
}

TEST_F(IsolationTest, AnotherUidNeitherSeesNorTouchesAChannel) {
  Start();
  RootListener listener(b_.stub.get());
  uint64_t id = PlanAsRoot();
  ASSERT_NE(id, 0u) << Logs();
  std::string sid = std::to_string(id);
  // Planned: nobody cannot connect it (take it over).
  EXPECT_TRUE(Says(Probe(a_, {"connect", sid}), "NOT_FOUND")) << Probe(a_, {"connect", sid});
  // Root connects; B's listener gets the request.
  std::optional<grpc::Status> connected;
  v1::ConnectResponse reply;
  grpc::ClientContext connect_ctx;
  std::jthread connect([&] {
    v1::ConnectRequest req;
    v1::ChannelOpening* c = req.add_channels();
    c->set_channel_id(id);
    *c->mutable_endpoint() = TcpEndpoint(1111);
    connected = a_.stub->Connect(&connect_ctx, req, &reply);
  });
  uint64_t request = listener.NextRequest();
  if (request == 0) {
    connect_ctx.TryCancel();
    connect.join();
    FAIL() << "no request reached B's listener: " << (connected ? connected->error_message() : "")
           << "\n"
           << Logs();
  }
  std::string rid = std::to_string(request);
  // The request is root's listener's: nobody can neither accept nor reject it.
  EXPECT_TRUE(Says(Probe(b_, {"accept", rid}), "NOT_FOUND"));
  EXPECT_TRUE(Says(Probe(b_, {"reject", rid}), "NOT_FOUND"));
  grpc::Status accepted = listener.Accept(request);
  EXPECT_TRUE(accepted.ok()) << accepted.error_message();
  connect.join();
  ASSERT_TRUE(connected && connected->ok()) << Logs();
  EXPECT_EQ(reply.channels(0).peer().tcp().port(), 2222u) << "root's own answer went through";

  // Established, on both sides: nobody does not see it, cannot hold or
  // close it; root sees it with its owner.
  for (const Node* n : {&a_, &b_}) {
    EXPECT_EQ(Probe(*n, {"list-channels"}), "PROBE OK ids=\n") << n->name;
    EXPECT_TRUE(Says(Probe(*n, {"hold", sid}), "NOT_FOUND")) << n->name;
    EXPECT_TRUE(Says(Probe(*n, {"release", sid}), "NOT_FOUND")) << n->name;
    EXPECT_TRUE(Says(Probe(*n, {"report-rails", sid}), "NOT_FOUND")) << n->name;
    // Nor account for it: its forged traffic is skipped, counted nowhere.
    EXPECT_EQ(Probe(*n, {"report-traffic", sid}), "PROBE OK skipped=2\n") << n->name;
    EXPECT_EQ(Probe(*n, {"list-channels"}, true), "PROBE OK ids=" + sid + ",\n") << n->name;
  }
  std::string listed = Rdmactl(a_, {"channels", "--json"}, true);
  EXPECT_EQ(listed.find("1099511627776"), std::string::npos) << "nobody's forged bytes counted\n"
                                                             << listed;
  EXPECT_NE(listed.find("\"traffic\""), std::string::npos) << listed;
  std::string table = Rdmactl(a_, {"channels"}, true);
  EXPECT_NE(table.find("uid 0 pid " + std::to_string(getpid())), std::string::npos) << table;
  // Nobody's own channel: it sees that one only; root sees both.
  std::string mine = Probe(a_, {"plan", "B", "svc"});
  ASSERT_TRUE(Says(mine, "OK id=")) << mine;
  std::string nobody_id = mine.substr(std::string("PROBE OK id=").size());
  nobody_id.pop_back();  // '\n'
  EXPECT_EQ(Probe(a_, {"list-channels"}), "PROBE OK ids=" + nobody_id + ",\n");
  EXPECT_NE(Probe(a_, {"list-channels"}, true).find(nobody_id), std::string::npos);
  EXPECT_NE(Rdmactl(a_, {"channels"}, true).find("uid 65534"), std::string::npos);
  // rdmactl close: nobody cannot close root's channel, root closes nobody's.
  std::string refused = Rdmactl(a_, {"close", sid}, false);
  EXPECT_NE(refused.find("(exit"), std::string::npos) << refused;
  char hex[32];
  std::snprintf(hex, sizeof hex, "%#018llx", std::stoull(nobody_id));
  EXPECT_EQ(Rdmactl(a_, {"close", nobody_id}, true), std::string("closed channel ") + hex + "\n");
  EXPECT_NE(Probe(a_, {"list-channels"}, true).find(sid), std::string::npos)
      << "root's own channel is still there";
  EXPECT_NE(a_.process->log().find("closed by admin"), std::string::npos) << a_.process->log();
}

TEST_F(IsolationTest, APoolClientIsItsUids) {
  Start();
  grpc::ClientContext watch;
  v1::WatchPoolRequest req;
  auto reader = a_.stub->WatchPool(&watch, req);
  v1::PoolEvent first;
  ASSERT_TRUE(reader->Read(&first)) << Logs();
  std::string client = std::to_string(first.client_id());
  EXPECT_TRUE(Says(Probe(a_, {"prewarm", client}), "NOT_FOUND"));
  EXPECT_TRUE(Says(Probe(a_, {"report", client}), "NOT_FOUND"));
  EXPECT_TRUE(Says(Probe(a_, {"prewarm", client}, true), "OK"));
  EXPECT_TRUE(Says(Probe(a_, {"report", client}, true), "OK"));
  EXPECT_EQ(Probe(a_, {"list-pools"}), "PROBE OK ids=\n");
  EXPECT_TRUE(Says(Probe(a_, {"list-pools"}, true), "OK ids=" + client + ","));
  watch.TryCancel();
  while (reader->Read(&first)) {
  }
  reader->Finish();
}

TEST_F(IsolationTest, TheAdminGroupSeesAndClosesEverything) {
  Start(/*a_admin_group=*/"nogroup");
  uint64_t id = PlanAsRoot();
  ASSERT_NE(id, 0u) << Logs();
  std::string sid = std::to_string(id);
  EXPECT_EQ(Probe(a_, {"list-channels"}), "PROBE OK ids=" + sid + ",\n");
  // An admin closes, but does not take over.
  EXPECT_TRUE(Says(Probe(a_, {"connect", sid}), "NOT_FOUND"));
  EXPECT_TRUE(Says(Probe(a_, {"hold", sid}), "NOT_FOUND"));
  std::string closed = Rdmactl(a_, {"close", sid}, false);
  EXPECT_EQ(closed.rfind("closed channel", 0), 0u) << closed;
  EXPECT_NE(a_.process->log().find("closed by admin"), std::string::npos) << a_.process->log();
  // B's admins are root only: nobody sees nothing there.
  EXPECT_EQ(Probe(b_, {"list-channels"}), "PROBE OK ids=\n");
}

// Without TLS (the default, on loopback) the peer port serves only the
// daemons' own uid on this host: another local uid is UNAUTHENTICATED in
// every call, and its OpenChannel never reaches B's listener, whichever
// peer it says it is. A process of the daemons' uid is admitted, but
// cannot speak as B itself (its instance is public through Hello).
TEST_F(IsolationTest, DoctorNamesTheSocketsGroupToAUserOutsideIt) {
  Start();
  // nobody with another primary group (and none besides): the socket is
  // nogroup's, 0660.
  group* other = getgrnam("daemon");
  if (other == nullptr) GTEST_SKIP() << "no group 'daemon'";
  std::string out =
      RunAs(kNobody, other->gr_gid, {RDMACTL_BINARY, "--socket", a_.socket, "--json", "doctor"});
  auto json = nlohmann::json::parse(out.substr(0, out.rfind('}') + 1), nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << out;
  EXPECT_NE(out.find("(exit 2)"), std::string::npos) << out;
  ASSERT_EQ(json["checks"][0]["name"], "socket") << out;
  EXPECT_EQ(json["checks"][0]["status"], "fail") << out;
  EXPECT_NE(json["checks"][0]["detail"].get<std::string>().find("group nogroup"), std::string::npos)
      << out;
  EXPECT_EQ(json["checks"][0]["fix"], "sudo usermod -aG nogroup $USER, then log in again") << out;
  // In the group, it gets through.
  out = RunAs(kNobody, gid_, {RDMACTL_BINARY, "--socket", a_.socket, "--json", "doctor"});
  json = nlohmann::json::parse(out.substr(0, out.rfind('}') + 1), nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << out;
  EXPECT_EQ(json["checks"][0]["status"], "ok") << out;
}

TEST_F(IsolationTest, AnotherUidIsNobodyOnThePeerPort) {
  Start();
  RootListener listener(b_.stub.get());
  ASSERT_NE(PlanAsRoot(), 0u) << Logs();  // A's session to B is up
  std::string hello = PeerProbe(b_, {"hello", "A", "-"}, false);
  EXPECT_TRUE(Says(hello, "UNAUTHENTICATED")) << hello;
  EXPECT_NE(hello.find("uid 65534"), std::string::npos) << hello;
  for (std::vector<std::string> call :
       {std::vector<std::string>{"open", "svc", "A", "-"},
        {"close", "1", std::string(32, 'a')},
        {"reclaim", "1", std::string(32, 'a'), std::string(32, 'b')}}) {
    std::string line = PeerProbe(b_, call, false);
    EXPECT_TRUE(Says(line, "UNAUTHENTICATED")) << call[0] << ": " << line;
  }
  EXPECT_EQ(listener.requests(), 0) << "an unauthenticated OpenChannel reached the listener";
  EXPECT_NE(b_.process->log().find("peer port: refused a call from"), std::string::npos)
      << b_.process->log();

  // The daemons' uid, from another process: admitted, as any node but B.
  std::string root_hello = PeerProbe(b_, {"hello", "C", "-"}, true);
  ASSERT_TRUE(Says(root_hello, "OK instance=")) << root_hello;
  std::string b_instance = root_hello.substr(std::string("PROBE OK instance=").size(), 32);
  std::string as_b = PeerProbe(b_, {"hello", "B", b_instance}, true);
  EXPECT_TRUE(Says(as_b, "PERMISSION_DENIED")) << as_b;
  EXPECT_NE(as_b.find("is this daemon's own"), std::string::npos) << as_b;
  std::string open_as_b = PeerProbe(b_, {"open", "svc", "B", b_instance}, true);
  EXPECT_TRUE(Says(open_as_b, "PERMISSION_DENIED")) << open_as_b;
  EXPECT_EQ(listener.requests(), 0) << "an OpenChannel as B itself reached the listener";
}

// A lease is the daemon's word: sealed with its key, so a process can
// neither write one for a channel it never had (as any uid, its own
// included) nor edit a real one; both are NOT_FOUND, as for a channel that
// does not exist. The real lease, unedited, re-attaches.
TEST_F(IsolationTest, ALeaseCannotBeForgedNorEdited) {
  Start();
  RootListener listener(b_.stub.get());
  uint64_t id = PlanAsRoot();
  ASSERT_NE(id, 0u) << Logs();
  v1::ConnectResponse reply;
  ASSERT_TRUE(ConnectAsRoot(id, listener, &reply));
  ASSERT_FALSE(reply.channels(0).lease().empty());
  std::string hex;
  for (unsigned char c : reply.channels(0).lease()) {
    char two[3];
    std::snprintf(two, sizeof two, "%02x", c);
    hex += two;
  }

  // A lease written by the caller, for a channel id A never saw.
  std::string forged_id = std::to_string(id ^ 0x5a5a5a5a5a5a5a5aULL);
  for (bool as_root : {false, true}) {
    std::string forged = Probe(a_, {"forge-hold", forged_id}, as_root);
    EXPECT_TRUE(Says(forged, "NOT_FOUND")) << (as_root ? "root: " : "nobody: ") << forged;
  }
  // The real lease with one byte changed (its owner uid, its peer, ...).
  for (size_t at : {size_t{4}, hex.size() / 2, hex.size() - 2}) {
    std::string edited = hex;
    edited[at] = edited[at] == '0' ? '1' : '0';
    std::string line = Probe(a_, {"hold-lease", std::to_string(id), edited}, true);
    EXPECT_TRUE(Says(line, "NOT_FOUND")) << "edited at " << at << ": " << line;
  }
  EXPECT_NE(Probe(a_, {"list-channels"}, true).find(std::to_string(id)), std::string::npos);
  EXPECT_EQ(Probe(a_, {"list-channels"}, true).find(forged_id), std::string::npos)
      << "a forged lease made a channel";
  // The real one: held (the probe's hold stays open until its deadline).
  std::string real = Probe(a_, {"hold-lease", std::to_string(id), hex}, true);
  EXPECT_TRUE(Says(real, "DEADLINE_EXCEEDED")) << real;
}

// With a peer key (daemon.peer_key_file, made by rdmactl peer-key), every
// peer call proves it, whoever calls: a process of the daemons' own uid
// without the key, or with another key, is UNAUTHENTICATED; with the key a
// proof is good once (a captured one cannot be replayed). The daemons'
// own calls carry proofs: a channel opens as before.
TEST_F(IsolationTest, WithAPeerKeyEveryCallProvesIt) {
  std::string key = dir_.File("peer.key"), other = dir_.File("other.key");
  for (const std::string& path : {key, other}) {
    std::string made = Rdmactl(a_, {"peer-key", path}, true);
    ASSERT_NE(made.find("wrote a new peer key to " + path), std::string::npos) << made;
  }
  struct stat st {};
  ASSERT_EQ(stat(key.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_size, 65);
  std::string again = Rdmactl(a_, {"peer-key", key}, true);
  EXPECT_NE(again.find("(exit"), std::string::npos) << "overwrote a key: " << again;
  extra_keys_ = "\npeer_key_file = \"" + key + "\"";
  Start();
  RootListener listener(b_.stub.get());
  uint64_t id = PlanAsRoot();
  ASSERT_NE(id, 0u) << Logs();
  v1::ConnectResponse reply;
  ASSERT_TRUE(ConnectAsRoot(id, listener, &reply)) << "the daemons' own calls carry proofs";

  std::string bare = PeerProbe(b_, {"hello", "C", "-"}, true);
  EXPECT_TRUE(Says(bare, "UNAUTHENTICATED")) << "root without the key: " << bare;
  setenv("RDMAD_PEER_KEY_FILE", other.c_str(), 1);
  std::string wrong = PeerProbe(b_, {"hello", "C", "-"}, true);
  EXPECT_TRUE(Says(wrong, "UNAUTHENTICATED")) << wrong;
  EXPECT_NE(wrong.find("wrong MAC"), std::string::npos) << wrong;
  setenv("RDMAD_PEER_KEY_FILE", key.c_str(), 1);
  setenv("RDMAD_PEER_REPLAY", "1", 1);
  std::string twice = PeerProbe(b_, {"hello", "C", "-"}, true);
  unsetenv("RDMAD_PEER_KEY_FILE");
  unsetenv("RDMAD_PEER_REPLAY");
  EXPECT_TRUE(Says(twice, "OK instance=")) << twice;
  EXPECT_NE(twice.find("UNAUTHENTICATED rdmad peer port: peer key proof: replayed"),
            std::string::npos)
      << twice;
  EXPECT_EQ(listener.requests(), 1) << "only the daemons' own OpenChannel reached B";
}

// A uid that opens every connection it can takes its own quota only: its
// extra connections are closed at once, before any thread or gRPC state is
// spent on them, and root (and other uids) are served meanwhile.
TEST_F(IsolationTest, AUidCannotTakeEveryConnectionOfTheSocket) {
  extra_keys_ = "\n[limits]\nmax_connections_per_uid = 8";
  Start();
  std::string hog;
  std::thread hogger([&] { hog = Probe(a_, {"hog", "40", "3"}); });
  std::this_thread::sleep_for(milliseconds(1500));  // while nobody holds its connections
  for (int i = 0; i < 3; ++i) {
    auto stub = v1::Rdmad::NewStub(
        grpc::CreateChannel("unix:" + a_.socket, grpc::InsecureChannelCredentials()));
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + seconds(5));
    v1::GetStatusResponse status;
    EXPECT_TRUE(stub->GetStatus(&ctx, v1::GetStatusRequest(), &status).ok()) << Logs();
  }
  hogger.join();
  EXPECT_EQ(hog, "PROBE HOG open=8 closed=32 call=UNAVAILABLE\n") << Logs();
  EXPECT_NE(Logs().find("its limit (limits.max_connections_per_uid = 8)"), std::string::npos);
  // Its connections closed, nobody is served again.
  EXPECT_TRUE(Says(Probe(a_, {"list-channels"}), "OK")) << Logs();
}

// Planning channels to addresses opens peer sessions on demand; one uid's
// count is bounded before anything is dialled, and root still plans.
TEST_F(IsolationTest, AUidOpensPeerSessionsOnDemandWithinItsQuota) {
  extra_keys_ = "\n[limits]\nmax_peer_sessions_per_uid = 3";
  Start();
  for (int i = 1; i <= 3; ++i) {
    std::string address = "127.0.0." + std::to_string(10 + i) + ":9";
    std::string planned = Probe(a_, {"plan", address, "svc"});  // OK, or the peer is down
    EXPECT_FALSE(Says(planned, "RESOURCE_EXHAUSTED")) << address << ": " << planned;
  }
  std::string refused = Probe(a_, {"plan", "127.0.0.20:9", "svc"});
  EXPECT_TRUE(Says(refused, "RESOURCE_EXHAUSTED")) << refused;
  EXPECT_NE(refused.find("limits.max_peer_sessions_per_uid = 3"), std::string::npos) << refused;
  EXPECT_EQ(Logs().find("127.0.0.20"), std::string::npos) << "it was dialled";
  EXPECT_FALSE(Says(Probe(a_, {"plan", "127.0.0.11:9", "svc"}), "RESOURCE_EXHAUSTED"))
      << "a session it has";
  EXPECT_FALSE(Says(Probe(a_, {"plan", "127.0.0.20:9", "svc"}, true), "RESOURCE_EXHAUSTED"))
      << "root's own quota";
}

}  // namespace
}  // namespace rdmad
