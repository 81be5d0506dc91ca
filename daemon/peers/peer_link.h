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
// Thread safety: every method may be called from any thread. Completions
// and a stream's observer are called from the transport's threads, or
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
// returns once the observer's OnStreamEnd has run.
class PeerStream {
 public:
  virtual ~PeerStream() = default;
};

// What a Session stream tells whoever opened it: each event in order, then
// its end exactly once (OK: the peer closed it). The stream keeps its
// observer alive until the end has run.
class PeerStreamObserver {
 public:
  virtual ~PeerStreamObserver() = default;
  virtual void OnStreamEvent(const PeerEvent& event) = 0;
  virtual void OnStreamEnd(const Status& status) = 0;
};

// A call's completion: run exactly once with the call's result. A one-shot
// continuation of one call, which is why it is a callback and not an
// interface (the stream's repeated events are PeerStreamObserver).
template <typename Result>
using Completion = std::function<void(Result)>;

// One peer daemon's API, as the transport (daemon/rpc/peer_link_grpc.cc)
// or a fake gives it. Its calls are asynchronous; each takes its
// Completion.
class PeerLink {
 public:
  using HelloDone = Completion<StatusOr<PeerHello>>;

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

  // Opens the Session stream, which tells observer what comes.
  virtual std::unique_ptr<PeerStream> OpenSession(const SessionOpen& open,
                                                  std::shared_ptr<PeerStreamObserver> observer) = 0;

  // The channel broker's calls, async like Hello. OpenChannel's done gets
  // the acceptor's endpoints, one per channel of the call (the broker
  // validates them), or the peer's status (NOT_FOUND no such service,
  // PERMISSION_DENIED rejected, ...). The defaults answer UNIMPLEMENTED
  // (transports and fakes without a broker).
  using OpenDone = Completion<StatusOr<ChannelEndpoints>>;
  using CloseDone = Completion<const Status&>;
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

// Makes the peer transport: rpc/ implements it with gRPC
// (GrpcPeerTransportFactory), the peer hub calls it once at start.
class PeerTransportFactory {
 public:
  virtual ~PeerTransportFactory() = default;
  // Starts the listener (serving inbound) and makes the connector; an error
  // (address in use, unreadable TLS files) is FAILED_PRECONDITION or
  // INVALID_ARGUMENT naming the setting, and the daemon does not start.
  virtual StatusOr<PeerTransport> Make(const PeerTransportOptions& options,
                                       PeerInbound* inbound) const = 0;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_PEERS_PEER_LINK_H_
