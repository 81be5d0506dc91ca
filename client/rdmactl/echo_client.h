// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl's side of rdmad's echo service (common/echo_protocol.h):
// opening a channel to a peer's rdmad.echo in a given mode, the messages
// for its failures, and one verified ECHO round trip. Shared by connect,
// ping and bench.
//
// Thread safety: plain functions; a channel is used by one thread at a
// time here.

#ifndef RDMAD_CLIENT_RDMACTL_ECHO_CLIENT_H_
#define RDMAD_CLIENT_RDMACTL_ECHO_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/echo_protocol.h"
#include "rdmad/client.h"

namespace rdmactl {

struct EchoOpenOptions {
  bool force_tcp = false;
  // How long to keep retrying while the daemon's session to the peer is
  // still coming up (UNAVAILABLE); a session opened on demand for an
  // address takes a moment.
  std::chrono::milliseconds session_wait{5000};
  std::chrono::milliseconds ack_timeout{10000};
};

// A channel to the peer's echo service, after a successful handshake.
struct EchoChannel {
  std::unique_ptr<rdmad::Channel> channel;
  std::vector<uint8_t> ack;  // the ack's payload (REGION: the descriptor)
};

// Opens a channel to peer's rdmad.echo and sends header. The status of a
// failure is the client library's or the server's ack ("echo service: ...").
rdmad::StatusOr<EchoChannel> OpenEcho(rdmad::Client& client, const std::string& peer,
                                      const rdmad::echo::Header& header,
                                      const EchoOpenOptions& options);

// The line rdmactl prints for a failed OpenEcho, without the "rdmactl
// VERB: " prefix: says what went wrong and, where it helps, what to check
// ("no such service ... is echo.enabled false on PEER?").
std::string EchoOpenError(const std::string& peer, const rdmad::Status& status);

// One ECHO round trip of a PatternPayload(seq, size): its time in
// microseconds. DEADLINE_EXCEEDED without a reply within timeout (replies
// to earlier sequence numbers that arrive meanwhile are dropped);
// DATA_LOSS when the reply differs from the request (naming the first
// differing byte); the channel's status when it fails.
rdmad::StatusOr<double> EchoRoundTrip(rdmad::Channel& channel, uint64_t seq, size_t size,
                                      std::chrono::milliseconds timeout);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_ECHO_CLIENT_H_
