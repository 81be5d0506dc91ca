// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "tests/integration/daemon_pair.h"

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
  const char* root = std::getenv("LAB_ROOT");
  return root != nullptr && *root != 0 ? std::string(root) + "/build/daemon/rdmad"
                                       : std::string(RDMAD_BINARY);
}

Status DaemonPair::Start(const std::string& extra_toml) {
  for (DaemonNode* n : {&a_, &b_}) {
    n->socket = dir_.File(n->name + "/rdmad.sock");
    n->port = FreeLoopbackPort();
  }
  RDMAD_RETURN_IF_ERROR(StartNode(&a_, b_, extra_toml));
  return StartNode(&b_, a_, extra_toml);
}

Status DaemonPair::StartNode(DaemonNode* n, const DaemonNode& peer,
                             const std::string& extra_toml) {
  std::string ip = Ip();
  std::string text = "[daemon]\nsocket = \"" + n->socket +
                     "\"\nsocket_group = \"\"\nlog_level = \"debug\"\n"
                     "peer_address = \"" + ip + "\"\npeer_port = " + std::to_string(n->port) +
                     (ip == "127.0.0.1" ? "" : "\npeer_insecure = true") + "\n\n" + extra_toml +
                     "\n[[peers]]\nname = \"" + peer.name + "\"\naddress = \"" + ip + ":" +
                     std::to_string(peer.port) + "\"\n";
  std::string config = dir_.Write(n->name + ".toml", text);
  n->process = std::make_unique<Process>(
      DaemonBinary(), std::vector<std::string>{"--config", config},
      std::map<std::string, std::string>{{"RDMAD_DAEMON_PEER_PORT", std::to_string(n->port)}},
      dir_.File(n->name + ".log"));
  if (!WaitForPath(n->socket, std::chrono::seconds(10))) {
    return Status::Unavailable("rdmad " + n->name + " did not start:\n" + n->process->log());
  }
  ClientOptions options;
  options.socket_path = n->socket;
  StatusOr<std::unique_ptr<Client>> client = Client::Connect(options);
  if (!client.ok()) return client.status();
  n->client = std::move(client).value();
  return Status::Ok();
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
