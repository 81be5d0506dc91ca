// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Two real rdmad processes peered with each other ("A" and "B"), each with
// its own socket and peer port, and a client connected to each. Off the lab
// they listen on 127.0.0.1 (channels fall back to TCP); in the lab (LAB_IP
// set) on the VM's address, so that the path policy finds the rxe device and
// channels come up over RDMA.
//
// Thread safety: Start() once, from one thread; then the clients may be used
// from any thread (rdmad::Client is thread-safe).

#ifndef RDMAD_TESTS_INTEGRATION_DAEMON_PAIR_H_
#define RDMAD_TESTS_INTEGRATION_DAEMON_PAIR_H_

#include <chrono>
#include <memory>
#include <string>

#include "rdmad/client.h"
#include "tests/integration/daemon_process.h"

namespace rdmad::testing {

struct DaemonNode {
  std::string name;
  std::string socket;
  int port = 0;
  std::unique_ptr<Process> process;
  std::unique_ptr<Client> client;
  std::string extra_toml;  // as given to Start
  int starts = 0;          // how many times this node was started
};

class DaemonPair {
 public:
  // Starts B, then A, and returns once each has its socket up and its
  // session with the other up; or says why not (a daemon's exit status and
  // log), at once when a daemon exits. Starts both again on new ports when
  // one lost its peer port to another test. a_extra and b_extra are TOML appended to each
  // config after [daemon] (e.g. "[echo]\nenabled = false\n").
  Status Start(const std::string& a_extra = "", const std::string& b_extra = "");

  // Kills node (SIGKILL) if it still runs and starts it again with the same
  // config, socket and peer port; returns once it is up and knows its peer.
  Status Restart(DaemonNode* node);

  // Waits until node's log has a line containing text.
  static bool WaitForLog(const DaemonNode& node, const std::string& text,
                         std::chrono::milliseconds timeout = std::chrono::seconds(10));

  DaemonNode& a() { return a_; }
  DaemonNode& b() { return b_; }

  // "127.0.0.1:PORT" (LAB_IP in the lab): where B's peer listener is.
  std::string BAddress() const;

  // A channel from a's application to service on B, retrying while A's
  // session to B comes up (UNAVAILABLE) for up to 5 s.
  StatusOr<std::unique_ptr<Channel>> ConnectAB(const std::string& service,
                                               const ConnectOptions& options = {});

  // Both daemons' logs, for failure messages.
  std::string Logs() const;

  // The address both daemons use: LAB_IP in the lab, else 127.0.0.1.
  static std::string Ip();
  // The rdmad binary (the lab's build tree in the lab).
  static std::string DaemonBinary();

 private:
  Status StartNode(DaemonNode* n, const DaemonNode& peer, const std::string& extra_toml);
  static Status WaitForPeer(const DaemonNode& n, const std::string& peer, bool up = false);

  TempDir dir_;
  DaemonNode a_ = Named("A");
  DaemonNode b_ = Named("B");

  static DaemonNode Named(const char* name) {
    DaemonNode n;
    n.name = name;
    return n;
  }
};

}  // namespace rdmad::testing

#endif  // RDMAD_TESTS_INTEGRATION_DAEMON_PAIR_H_
