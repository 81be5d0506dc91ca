// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// A real etcd (Debian's etcd-server) for the cluster tests: one member on
// loopback ports of its own, with its data in a temporary directory. It
// can be killed and started again on the same ports and data. With TLS it
// serves its clients over TLS only, and with a client CA it requires a
// client certificate that CA signed.

#ifndef RDMAD_TESTS_INTEGRATION_ETCD_PROCESS_H_
#define RDMAD_TESTS_INTEGRATION_ETCD_PROCESS_H_

#include <chrono>
#include <memory>
#include <string>

#include "tests/integration/daemon_process.h"

namespace rdmad::testing {

struct EtcdTls {
  std::string cert;  // PEM paths of its server certificate and key
  std::string key;
  std::string client_ca;  // "": any client; else its certificate is required
};

class EtcdProcess {
 public:
  // Picks the ports; Start() runs it.
  explicit EtcdProcess(const TempDir& dir, EtcdTls tls = {});

  // Starts etcd and waits until it serves (false with its log otherwise).
  bool Start(std::chrono::milliseconds timeout = std::chrono::seconds(20));
  void Kill();  // SIGKILL, and wait for it
  // Removes its data (after Kill): the next Start is an empty etcd, every
  // key and lease gone.
  void Wipe();
  bool running() { return process_ && process_->running(); }

  // HOST:PORT of its client endpoint.
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(client_port_); }
  std::string log() const { return process_ ? process_->log() : ""; }

  // Where Debian installs it; "" when it is not installed.
  static std::string Binary();

 private:
  EtcdTls tls_;
  std::string data_dir_;
  std::string log_path_;
  int client_port_;
  int peer_port_;
  std::unique_ptr<Process> process_;
};

}  // namespace rdmad::testing

#endif  // RDMAD_TESTS_INTEGRATION_ETCD_PROCESS_H_
