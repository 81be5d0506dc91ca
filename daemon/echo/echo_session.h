// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// One channel of the echo service: reads the client's header
// (common/echo_protocol.h), answers it with an ack, then serves the
// mode (ECHO, SINK, REGION) until the channel ends. A malformed header gets
// an error ack and the channel is closed; nothing a client sends can crash
// the daemon.
//
// Thread safety: ServeEchoChannel runs on one thread per channel and uses
// both of the channel's sides; another thread may Close() the channel to
// end it early (the service does when it stops).

#ifndef RDMAD_DAEMON_ECHO_ECHO_SESSION_H_
#define RDMAD_DAEMON_ECHO_ECHO_SESSION_H_

#include <chrono>
#include <cstdint>

#include "rdmad/channel.h"
#include "rdmad/status.h"

namespace rdmad {

struct EchoSessionOptions {
  // How long a new channel may take to send its header.
  std::chrono::milliseconds header_timeout{10000};
  // After an error ack, how long to wait for the client to close before
  // closing here (so the ack is not cut off).
  std::chrono::milliseconds refuse_linger{2000};
};

struct EchoSessionResult {
  Status status;          // why it ended: the peer's close, an error ack, ...
  uint64_t messages = 0;  // received after the header
  uint64_t bytes = 0;
  uint64_t notifications = 0;  // REGION: received (and echoed back)
};

// Serves channel until it ends; closes it before returning.
EchoSessionResult ServeEchoChannel(Channel& channel, const EchoSessionOptions& options);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_ECHO_ECHO_SESSION_H_
