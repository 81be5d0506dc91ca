// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The TCP fallback transport: how its channels are set up. The acceptor's
// library listens on an ephemeral port and hands its TcpEndpoint (address,
// port, the daemon's one-time token) to the initiator through the daemons;
// the initiator connects and sends the 32-byte token first. The channel
// itself (the Channel API, the frame format, the error codes) is described
// in tcp_channel_impl.h and tcp_frame.h. In short: a channel closed by the
// peer, or whose peer process died, fails with UNAVAILABLE ("closed by
// peer", "connection lost: ..."); a local Close() gives CANCELLED.
//
// Sockets are close-on-exec, TCP_NODELAY, with keepalive probes after 5 s
// idle every 2 s (a dead peer is noticed within about 11 s).
//
// Thread safety: a TcpAcceptor is used by one thread at a time; TcpConnect
// is reentrant.

#ifndef RDMAD_CLIENT_SRC_TCP_TCP_CHANNEL_H_
#define RDMAD_CLIENT_SRC_TCP_TCP_CHANNEL_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "client/src/tcp/tcp_socket.h"
#include "common/endpoint.h"
#include "rdmad/channel.h"
#include "rdmad/status.h"

namespace rdmad::internal {

// How long an accepted connection has to present its token.
inline constexpr std::chrono::milliseconds kTokenDeadline{2000};

class TcpAcceptor {
 public:
  // Listens on an ephemeral port of bind_host (a numeric IPv4 or IPv6
  // address) for the one connection that presents token.
  static StatusOr<std::unique_ptr<TcpAcceptor>> Listen(const std::string& bind_host,
                                                       const std::array<uint8_t, 32>& token);
  TcpAcceptor(const TcpAcceptor&) = delete;
  TcpAcceptor& operator=(const TcpAcceptor&) = delete;

  // What the initiator needs: the bound host and port, and the token.
  TcpEndpoint local() const { return local_; }

  // Accepts connections until one sends the right token within
  // kTokenDeadline; others are closed and logged (a warning with their
  // address). Then closes the listening socket and returns the channel.
  // DEADLINE_EXCEEDED after timeout (negative: none); FAILED_PRECONDITION
  // once a channel was accepted.
  StatusOr<std::unique_ptr<Channel>> Accept(std::chrono::milliseconds timeout, ChannelInfo info);

 private:
  TcpAcceptor(UniqueFd fd, TcpEndpoint local)
      : listen_fd_(std::move(fd)), local_(std::move(local)) {}

  // The connection if it presents the token before deadline, else why not.
  StatusOr<UniqueFd> CheckToken(UniqueFd fd, Clock::time_point deadline) const;

  UniqueFd listen_fd_;
  TcpEndpoint local_;
};

// Connects to endpoint (non-blocking connect, within timeout; negative: the
// system's connect timeout), sends the token and returns the channel.
// UNAVAILABLE when the connection fails, DEADLINE_EXCEEDED on timeout.
StatusOr<std::unique_ptr<Channel>> TcpConnect(const TcpEndpoint& endpoint, ChannelInfo info,
                                              std::chrono::milliseconds timeout);

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_TCP_TCP_CHANNEL_H_
