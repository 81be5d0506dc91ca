// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "tests/integration/daemon_pair.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <thread>
#include <vector>

namespace rdmad::testing {

std::string DaemonPair::Ip() {
  const char* lab = std::getenv("LAB_IP");
  return lab != nullptr && *lab != 0 ? lab : "127.0.0.1";
}

std::string DaemonPair::DaemonBinary() {
  // This build's rdmad wherever it can be seen (the lab shares the checkout
  // and the build tree at the same paths); else the checkout's build/.
  if (access(RDMAD_BINARY, X_OK) == 0) return RDMAD_BINARY;
  const char* root = std::getenv("LAB_ROOT");
  return root != nullptr && *root != 0 ? std::string(root) + "/build/daemon/rdmad"
                                       : std::string(RDMAD_BINARY);
}

Status DaemonPair::Start(const std::string& a_extra, const std::string& b_extra) {
  Status started;
  // A free port can be taken by a test running alongside before the
  // daemon binds it: then both start again on new ports.
  for (int attempt = 0; attempt < 3; ++attempt) {
    for (DaemonNode* n : {&a_, &b_}) {
      n->client.reset();
      n->process.reset();  // stops a daemon of the attempt before
      n->socket = dir_.File(n->name + "/rdmad.sock");
      unlink(n->socket.c_str());
      n->port = FreeLoopbackPort();
    }
    started = StartNode(&b_, a_, b_extra);
    if (started.ok()) started = StartNode(&a_, b_, a_extra);
    if (started.message().find("Address already in use") == std::string::npos) break;
  }
  if (!started.ok()) return started;
  // Tests begin with both sessions up: a first Hello that timed out on a
  // loaded machine would otherwise fail the test's first Connect.
  started = WaitForPeer(a_, b_.name, /*up=*/true);
  if (started.ok()) started = WaitForPeer(b_, a_.name, /*up=*/true);
  return started;
}

Status DaemonPair::Restart(DaemonNode* n) {
  const DaemonNode& peer = n == &a_ ? b_ : a_;
  n->client.reset();
  if (n->process != nullptr && n->process->running()) {
    n->process->Signal(SIGKILL);
    n->process->WaitExit(std::chrono::seconds(5));
  }
  unlink(n->socket.c_str());  // so that StartNode waits for the new one
  return StartNode(n, peer, n->extra_toml);
}

std::string DaemonPair::BAddress() const { return Ip() + ":" + std::to_string(b_.port); }

bool DaemonPair::WaitForLog(const DaemonNode& node, const std::string& text,
                            std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (node.process->log().find(text) != std::string::npos) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// The socket is up before the config's [[peers]] are loaded: wait for them
// (and, with up, for the session to be up).
Status DaemonPair::WaitForPeer(const DaemonNode& n, const std::string& peer, bool up) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(up ? 30 : 10);
  for (;;) {
    StatusOr<std::vector<PeerInfo>> peers = n.client->ListPeers();
    if (peers.ok()) {
      for (const PeerInfo& p : peers.value()) {
        if (p.name == peer && (!up || p.state == PeerState::kUp)) return Status::Ok();
      }
    }
    if (!n.process->running() || std::chrono::steady_clock::now() >= deadline) {
      return Status::DeadlineExceeded(
          "rdmad " + n.name + (up ? " never had a session up with peer " : " never listed peer ") +
          peer + " (" + n.process->Describe() + "):\n" + n.process->log());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Status DaemonPair::StartNode(DaemonNode* n, const DaemonNode& peer, const std::string& extra_toml) {
  n->extra_toml = extra_toml;
  std::string log = n->name + (n->starts++ == 0 ? "" : "." + std::to_string(n->starts)) + ".log";
  std::string ip = Ip();
  std::string text = "[daemon]\nsocket = \"" + n->socket +
                     "\"\nsocket_group = \"\"\nlog_level = \"debug\"\n"
                     "peer_address = \"" +
                     ip + "\"\npeer_port = " + std::to_string(n->port) +
                     (ip == "127.0.0.1" ? "" : "\npeer_key_file = \"" + WritePeerKey(dir_) + "\"") +
                     "\n\n" + extra_toml + "\n[[peers]]\nname = \"" + peer.name +
                     "\"\naddress = \"" + ip + ":" + std::to_string(peer.port) + "\"\n";
  std::string config = dir_.Write(n->name + ".toml", text);
  n->process = std::make_unique<Process>(
      DaemonBinary(), std::vector<std::string>{"--config", config},
      std::map<std::string, std::string>{{"RDMAD_DAEMON_PEER_PORT", std::to_string(n->port)}},
      dir_.File(log));
  // Up, or the reason why not: every wait below ends early if the daemon
  // exits, and says how it ended with its log.
  auto gone = [&](const std::string& step) -> Status {
    return Status::Unavailable("rdmad " + n->name + " " + step + ": " + n->process->Describe() +
                               "; its log:\n" + n->process->log());
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (access(n->socket.c_str(), F_OK) != 0) {
    if (!n->process->running()) return gone("did not start");
    if (std::chrono::steady_clock::now() >= deadline) return gone("never bound its socket in 10 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ClientOptions options;
  options.socket_path = n->socket;
  // The socket is bound before the daemon serves it; under an emulated
  // CPU its first answer can take longer than Open's own 2 s.
  deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  StatusOr<std::unique_ptr<Client>> client = Client::Open(options);
  while (!client.ok()) {
    if (!n->process->running()) return gone("stopped before it served its socket");
    if (std::chrono::steady_clock::now() >= deadline) {
      return gone("did not answer on its socket in 10 s (" + client.status().ToString() + ")");
    }
    client = Client::Open(options);
  }
  n->client = std::move(client).value();
  return WaitForPeer(*n, peer.name);
}

StatusOr<std::unique_ptr<Channel>> DaemonPair::ConnectAB(const std::string& service,
                                                         const ConnectOptions& options) {
  StatusOr<std::unique_ptr<Channel>> channel = Status::Unavailable("not tried");
  for (int i = 0; i < 50; ++i) {
    channel = a_.client->Connect(b_.name, service, options);
    if (channel.status().code() != StatusCode::kUnavailable) return channel;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return channel;
}

std::string DaemonPair::Logs() const {
  std::string out;
  for (const DaemonNode* n : {&a_, &b_}) {
    out += "--- rdmad " + n->name + " ---\n" + (n->process ? n->process->log() : "") + "\n";
  }
  return out;
}

}  // namespace rdmad::testing
