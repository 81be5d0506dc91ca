// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Test helpers for the TCP transport: channel pairs on loopback, and raw
// sockets that play a peer speaking (or garbling) the frame protocol.
// Header-only: every .cc under client/src/ that is not a test goes into the
// library.
//
// Thread safety: plain functions.

#ifndef RDMAD_CLIENT_SRC_TCP_TCP_TEST_UTIL_H_
#define RDMAD_CLIENT_SRC_TCP_TCP_TEST_UTIL_H_

#include <netinet/in.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "client/src/channel_suite.h"
#include "client/src/tcp/tcp_channel.h"
#include "client/src/tcp/tcp_frame.h"
#include "client/src/tcp/tcp_socket.h"
#include "gtest/gtest.h"

namespace rdmad::internal {

inline std::array<uint8_t, 32> RandomToken() {
  std::array<uint8_t, 32> token{};
  EXPECT_EQ(getrandom(token.data(), token.size(), 0), 32);
  return token;
}

// A connected pair on host: (the initiator's channel, the acceptor's).
// FAILED_PRECONDITION (the suite then skips) when host cannot be bound.
inline StatusOr<ChannelPair> MakeTcpPair(const std::string& host) {
  StatusOr<std::unique_ptr<TcpAcceptor>> acceptor = TcpAcceptor::Listen(host, RandomToken());
  if (!acceptor.ok()) {
    return Status::FailedPrecondition("cannot listen on " + host + ": " +
                                      acceptor.status().ToString());
  }
  ChannelInfo info;
  info.service = "conformance";
  // The kernel completes the connection in the backlog, so connect first.
  StatusOr<std::unique_ptr<Channel>> initiator =
      TcpConnect((*acceptor)->local(), info, std::chrono::seconds(5));
  if (!initiator.ok()) return initiator.status();
  StatusOr<std::unique_ptr<Channel>> accepted = (*acceptor)->Accept(std::chrono::seconds(5), info);
  if (!accepted.ok()) return accepted.status();
  return ChannelPair(std::move(*initiator), std::move(*accepted));
}

// A blocking socket connected to endpoint (no token sent); invalid on error.
inline UniqueFd RawConnect(const TcpEndpoint& endpoint) {
  StatusOr<SocketAddress> addr = ParseAddress(endpoint.host, endpoint.port);
  if (!addr.ok()) return UniqueFd();
  StatusOr<UniqueFd> fd = ConnectBefore(*addr, Clock::now() + std::chrono::seconds(5));
  EXPECT_TRUE(fd.ok()) << fd.status().ToString();
  return fd.ok() ? std::move(*fd) : UniqueFd();
}

inline bool ConnectsTo(const TcpEndpoint& endpoint) {
  StatusOr<SocketAddress> addr = ParseAddress(endpoint.host, endpoint.port);
  return addr.ok() && ConnectBefore(*addr, Clock::now() + std::chrono::seconds(5)).ok();
}

// True once the peer closed fd (EOF or reset) within timeout.
inline bool WaitForEof(int fd, std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  uint8_t byte;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, PollTimeoutMs(deadline)) <= 0) return false;
    ssize_t n = recv(fd, &byte, 1, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return true;
  }
}

// A port nobody listens on (just released).
inline uint16_t UnusedPort() {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);
}

// One message each way.
inline void ExpectRoundTrip(Channel& a, Channel& b) {
  ASSERT_TRUE(a.Send("ping", 4).ok());
  StatusOr<std::vector<uint8_t>> got = b.Recv(std::chrono::seconds(5));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::string(got->begin(), got->end()), "ping");
  ASSERT_TRUE(b.Send("pong", 4).ok());
  got = a.Recv(std::chrono::seconds(5));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::string(got->begin(), got->end()), "pong");
}

// A channel whose peer is a raw socket that already sent the token.
struct RawPeer {
  std::unique_ptr<Channel> channel;
  UniqueFd raw;
};

inline StatusOr<RawPeer> MakeRawPeer() {
  const std::array<uint8_t, 32> token = RandomToken();
  StatusOr<std::unique_ptr<TcpAcceptor>> acceptor = TcpAcceptor::Listen("127.0.0.1", token);
  if (!acceptor.ok()) return acceptor.status();
  RawPeer peer;
  peer.raw = RawConnect((*acceptor)->local());
  RDMAD_RETURN_IF_ERROR(SendAll(peer.raw.get(), token.data(), token.size()));
  StatusOr<std::unique_ptr<Channel>> accepted = (*acceptor)->Accept(std::chrono::seconds(5), {});
  if (!accepted.ok()) return accepted.status();
  peer.channel = std::move(*accepted);
  return peer;
}

inline Status SendRawFrame(int fd, const FrameHeader& header, const std::string& payload = "") {
  RawFrameHeader raw = EncodeFrameHeader(header);
  RDMAD_RETURN_IF_ERROR(SendAll(fd, raw.data(), raw.size()));
  return SendAll(fd, payload.data(), payload.size());
}

struct RawFrame {
  FrameHeader header;
  std::string payload;
};

// The next frame the channel sent to the raw socket.
inline StatusOr<RawFrame> ReadRawFrame(int fd) {
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(5);
  RawFrameHeader raw;
  RDMAD_RETURN_IF_ERROR(RecvExactBefore(fd, raw.data(), raw.size(), deadline));
  StatusOr<FrameHeader> header = DecodeFrameHeader(raw);
  if (!header.ok()) return header.status();
  RawFrame frame{*header, std::string(header->payload_len, '\0')};
  RDMAD_RETURN_IF_ERROR(RecvExactBefore(fd, frame.payload.data(), frame.payload.size(), deadline));
  return frame;
}

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_TCP_TCP_TEST_UTIL_H_
