// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// EchoService: rdmad's built-in echo service, "rdmad.echo", which rdmactl
// connect, ping and bench talk to. The daemon runs it as an ordinary
// application of its own local API: it connects to the daemon's socket with
// rdmad::Client, Listens on rdmad.echo and serves each accepted channel on a
// thread of its own (echo_session.h), so the data path is the client
// library's, RDMA or TCP, as for any application. Beyond max_channels
// channels at once, requests are rejected with the reason (the Listener API
// cannot peek at a request, so one that arrives within accept_poll after a
// channel ends at the limit may still be rejected).
//
// Thread safety: Start and Stop from one thread (the daemon's main
// thread); the service's own threads are an accept loop and one per
// channel. Stop closes every channel (waking their blocked calls), joins
// every thread and drops the registration; it returns within about
// accept_poll, unless a channel setup is in progress (bounded by the client
// library's handshake timeout).

#ifndef RDMAD_DAEMON_ECHO_ECHO_SERVICE_H_
#define RDMAD_DAEMON_ECHO_ECHO_SERVICE_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "daemon/broker/builtin_service.h"
#include "daemon/echo/echo_factory.h"
#include "daemon/echo/echo_session.h"
#include "rdmad/client.h"

namespace rdmad {

struct EchoServiceOptions {
  size_t max_channels = 64;
  // How often the accept loop looks at Stop.
  std::chrono::milliseconds accept_poll{200};
  EchoSessionOptions session;
};

class EchoService final : public BuiltinService {
 public:
  // Listens on rdmad.echo through client (ALREADY_EXISTS when another
  // application holds the name) and starts accepting.
  static StatusOr<std::unique_ptr<EchoService>> Start(std::unique_ptr<Client> client,
                                                      const EchoServiceOptions& options);
  ~EchoService() override;

  void Stop() override;
  size_t active_channels() const;

 private:
  struct Session {
    std::unique_ptr<Channel> channel;
    std::thread thread;
    bool done = false;  // guarded by mu_
  };

  EchoService(std::unique_ptr<Client> client, std::unique_ptr<Listener> listener,
              const EchoServiceOptions& options);
  void AcceptLoop();
  void AcceptOne();
  void RejectOne();
  void StartSession(std::unique_ptr<Channel> channel);
  void Reap();
  bool stopping() const;

  const EchoServiceOptions options_;
  std::unique_ptr<Client> client_;
  std::unique_ptr<Listener> listener_;  // the accept loop's only
  std::thread accept_thread_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;        // guarded by mu_
  std::list<Session> sessions_;  // guarded by mu_
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_ECHO_ECHO_SERVICE_H_
