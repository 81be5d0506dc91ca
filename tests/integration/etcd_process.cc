// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "tests/integration/etcd_process.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

namespace rdmad::testing {
namespace {

bool Accepts(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

}  // namespace

EtcdProcess::EtcdProcess(const TempDir& dir, EtcdTls tls)
    : tls_(std::move(tls)),
      data_dir_(dir.File("etcd.data")),
      log_path_(dir.File("etcd.log")),
      client_port_(FreeLoopbackPort()),
      peer_port_(FreeLoopbackPort()) {}

std::string EtcdProcess::Binary() {
  return access("/usr/bin/etcd", X_OK) == 0 ? "/usr/bin/etcd" : "";
}

bool EtcdProcess::Start(std::chrono::milliseconds timeout) {
  std::string scheme = tls_.cert.empty() ? "http://" : "https://";
  std::string client = scheme + "127.0.0.1:" + std::to_string(client_port_);
  std::string peer = "http://127.0.0.1:" + std::to_string(peer_port_);
  std::vector<std::string> args = {"--name",
                                   "t",
                                   "--data-dir",
                                   data_dir_,
                                   "--listen-client-urls",
                                   client,
                                   "--advertise-client-urls",
                                   client,
                                   "--listen-peer-urls",
                                   peer,
                                   "--initial-advertise-peer-urls",
                                   peer,
                                   "--initial-cluster",
                                   "t=" + peer,
                                   "--log-level",
                                   "warn"};
  if (!tls_.cert.empty()) {
    args.insert(args.end(), {"--cert-file", tls_.cert, "--key-file", tls_.key});
  }
  if (!tls_.client_ca.empty()) {
    args.insert(args.end(), {"--client-cert-auth", "--trusted-ca-file", tls_.client_ca});
  }
  process_ =
      std::make_unique<Process>(Binary(), args, std::map<std::string, std::string>{}, log_path_);
  auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    if (!process_->running()) return false;
    if (Accepts(client_port_)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

void EtcdProcess::Kill() {
  if (!process_) return;
  process_->Signal(SIGKILL);
  process_->WaitExit(std::chrono::seconds(10));
}

void EtcdProcess::Wipe() {
  std::error_code ignored;
  std::filesystem::remove_all(data_dir_, ignored);
}

}  // namespace rdmad::testing
