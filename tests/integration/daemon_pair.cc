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
    if (started.message().find("Address already in use") == std::string::npos) return started;
  }
  return started;
}

Status DaemonPair::Restart(DaemonNode* n) {
  const DaemonNode& peer = n == &a_ ? b_ : a_;
  n->client.reset();
  if (n->process != nullptr && n->process->running()) {
    n->process->Signal(SIGKILL);
    n->process->WaitExit(std::chrono::seconds(5));
  }
  unlink(n->socket.c_str());  // so that WaitForPath sees the new one
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

// The socket is up before the config's [[peers]] are loaded: wait for them.
Status DaemonPair::WaitForPeer(const DaemonNode& n, const std::string& peer) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    StatusOr<std::vector<PeerInfo>> peers = n.client->ListPeers();
    if (peers.ok()) {
      for (const PeerInfo& p : peers.value()) {
        if (p.name == peer) return Status::Ok();
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::DeadlineExceeded("rdmad " + n.name + " never listed peer " + peer + ":\n" +
                                      n.process->log());
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
                     (ip == "127.0.0.1" ? "" : "\npeer_insecure = true") + "\n\n" + extra_toml +
                     "\n[[peers]]\nname = \"" + peer.name + "\"\naddress = \"" + ip + ":" +
                     std::to_string(peer.port) + "\"\n";
  std::string config = dir_.Write(n->name + ".toml", text);
  n->process = std::make_unique<Process>(
      DaemonBinary(), std::vector<std::string>{"--config", config},
      std::map<std::string, std::string>{{"RDMAD_DAEMON_PEER_PORT", std::to_string(n->port)}},
      dir_.File(log));
  if (!WaitForPath(n->socket, std::chrono::seconds(10))) {
    return Status::Unavailable("rdmad " + n->name + " did not start:\n" + n->process->log());
  }
  ClientOptions options;
  options.socket_path = n->socket;
  // The socket is bound before the daemon serves it; under an emulated
  // CPU its first answer can take longer than Open's own 2 s.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  StatusOr<std::unique_ptr<Client>> client = Client::Open(options);
  while (!client.ok() && std::chrono::steady_clock::now() < deadline) {
    client = Client::Open(options);
  }
  if (!client.ok()) return client.status();
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
