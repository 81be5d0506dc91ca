// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The daemon-to-daemon transport as the core sees it. The daemon implements
// it with gRPC in daemon/rpc (peer_link_grpc.cc, peer_server.cc); the
// unit tests with fakes. The core never sees a gRPC type.
//
//   PeerConnector  makes a PeerLink to "HOST:PORT" (lazily; never blocks).
//   PeerLink       one connection to one peer daemon: Hello, the Session
//                  stream, and later the broker's OpenChannel/CloseChannel.
//   PeerStream     an open Session stream; destroying it cancels it.
//   PeerServer     the listener that serves peers (calls into PeerInbound).
//
// Thread safety: every method may be called from any thread. Callbacks
// (HelloDone, on_event, on_end) come from the transport's threads, or
// inline from the call that started them; they must not block and must not
// call back into the link.

#ifndef RDMAD_DAEMON_PEERS_PEER_LINK_H_
#define RDMAD_DAEMON_PEERS_PEER_LINK_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "daemon/peers/channel_endpoint.h"
#include "daemon/peers/peer_protocol.h"
#include "rdmad/status.h"

namespace rdmad {

class PeerInbound;

// An open Session stream. The destructor cancels it if it is still open and
// returns once on_end has run (so the callbacks never outlive it).
class PeerStream {
 public:
  virtual ~PeerStream() = default;
};

// One peer daemon's API, as the transport (daemon/rpc/peer_link_grpc.cc)
// or a fake gives it. Its calls are asynchronous; each takes its
// completion as a callback: a one-shot continuation of that call, run on
// the transport's thread, which is why they are callbacks and not an
// interface (the session's stream events are the one repeated one).
class PeerLink {
 public:
  using HelloDone = std::function<void(StatusOr<PeerHello>)>;
  using EventCallback = std::function<void(const PeerEvent&)>;
  using EndCallback = std::function<void(const Status&)>;

  // Cancels the calls still in flight (their callbacks still run, with
  // CANCELLED) before returning.
  virtual ~PeerLink() = default;

  // "HOST:PORT" as dialled.
  virtual const std::string& target() const = 0;

  // Sends self and calls done exactly once with the peer's Hello, already
  // checked with ValidateHello (a malformed reply is an error), or why the
  // call failed (UNAVAILABLE with the transport's reason, DEADLINE_EXCEEDED
  // after timeout, ...).
  virtual void Hello(const PeerHello& self, std::chrono::milliseconds timeout, HelloDone done) = 0;

  // Opens the Session stream: on_event for each event (in order), then
  // on_end exactly once with why it ended (OK: the peer closed it).
  virtual std::unique_ptr<PeerStream> OpenSession(const SessionOpen& open, EventCallback on_event,
                                                  EndCallback on_end) = 0;

  // The channel broker's calls, async like Hello. OpenChannel's done gets
  // the acceptor's endpoints, one per channel of the call (the broker
  // validates them), or the peer's status (NOT_FOUND no such service,
  // PERMISSION_DENIED rejected, ...). The defaults answer UNIMPLEMENTED
  // (transports and fakes without a broker).
  using OpenDone = std::function<void(StatusOr<ChannelEndpoints>)>;
  using CloseDone = std::function<void(const Status&)>;
  virtual void OpenChannel(const OpenChannelCall& call, std::chrono::milliseconds timeout,
                           OpenDone done) {
    done(Status::Unimplemented("this peer link has no OpenChannel"));
  }
  virtual void CloseChannel(const CloseChannelCall& call, CloseDone done) {
    done(Status::Unimplemented("this peer link has no CloseChannel"));
  }
  // A restarted daemon takes a channel back (done: OK, or NOT_FOUND with
  // why the peer no longer has it).
  virtual void ReclaimChannel(const ReclaimChannelCall& call, CloseDone done) {
    done(Status::Unimplemented("this peer link has no ReclaimChannel"));
  }
};

class PeerConnector {
 public:
  virtual ~PeerConnector() = default;
  // A link to target ("HOST:PORT", see NormalizePeerAddress). Connecting
  // happens on the first call; an error here is a bad target or bad TLS
  // material, not an unreachable peer.
  virtual StatusOr<std::shared_ptr<PeerLink>> Connect(const std::string& target) = 0;
};

class PeerServer {
 public:
  virtual ~PeerServer() = default;
  // The TCP port it listens on.
  virtual int port() const = 0;
  // Stops accepting, waits for open calls up to deadline, cancels the rest.
  virtual void Shutdown(std::chrono::milliseconds deadline) = 0;
};

// How the daemon talks to peers: config daemon.peer_* and daemon.tls_*.
struct PeerTransportOptions {
  std::string listen_address;  // daemon.peer_address
  int listen_port = 0;         // daemon.peer_port (0: any, for tests)
  // PEM files; all three set: mutual TLS, all empty: plaintext.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_ca;
  // daemon.peer_key_file (without TLS: every call proves the key), and
  // the node name the proofs give.
  std::string peer_key_file;
  std::string node_name;
};

struct PeerTransport {
  std::unique_ptr<PeerServer> server;  // serves inbound
  std::shared_ptr<PeerConnector> connector;
};

// Starts the listener (serving inbound) and makes the connector; an error
// (address in use, unreadable TLS files) is FAILED_PRECONDITION or
// INVALID_ARGUMENT naming the setting, and the daemon does not start.
using PeerTransportFactory = std::function<StatusOr<PeerTransport>(
    const PeerTransportOptions& options, PeerInbound* inbound)>;

}  // namespace rdmad

#endif  // RDMAD_DAEMON_PEERS_PEER_LINK_H_
