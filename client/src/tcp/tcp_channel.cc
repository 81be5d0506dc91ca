// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/tcp/tcp_channel.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "client/src/client_log.h"
#include "client/src/tcp/tcp_channel_impl.h"

namespace rdmad::internal {
namespace {

constexpr int kListenBacklog = 16;

Clock::time_point DeadlineAfter(std::chrono::milliseconds timeout) {
  if (timeout.count() < 0) return Clock::time_point::max();
  return Clock::now() + timeout;
}

// Compares in time independent of where the tokens differ.
bool SameToken(const std::array<uint8_t, 32>& a, const std::array<uint8_t, 32>& b) {
  volatile uint8_t diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff = diff | (a[i] ^ b[i]);
  return diff == 0;
}

// Errors of accept() that concern one connection, not the listener.
bool TransientAcceptError(int err) {
  return err == EINTR || err == EAGAIN || err == ECONNABORTED || err == EPROTO || err == EPERM ||
         err == ENETDOWN || err == EHOSTUNREACH || err == ENETUNREACH;
}

StatusOr<std::unique_ptr<Channel>> StartChannel(UniqueFd fd, ChannelInfo info) {
  RDMAD_RETURN_IF_ERROR(ConfigureStreamSocket(fd.get()));
  StatusOr<std::unique_ptr<TcpChannel>> channel = TcpChannel::Start(std::move(fd), std::move(info));
  if (!channel.ok()) return channel.status();
  return std::unique_ptr<Channel>(std::move(*channel));
}

}  // namespace

StatusOr<std::unique_ptr<TcpAcceptor>> TcpAcceptor::Listen(const std::string& bind_host,
                                                           const std::array<uint8_t, 32>& token) {
  StatusOr<SocketAddress> addr = ParseAddress(bind_host, 0);
  if (!addr.ok()) return addr.status();
  const int family = addr->storage.ss_family;
  UniqueFd fd(socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return Status::FromErrno(errno, "socket");
  if (family == AF_INET6) {
    int on = 1;
    setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
  }
  if (bind(fd.get(), addr->get(), addr->len) != 0) {
    return Status::FromErrno(errno, "bind " + bind_host);
  }
  if (listen(fd.get(), kListenBacklog) != 0) return Status::FromErrno(errno, "listen");
  SocketAddress bound;
  bound.len = sizeof(bound.storage);
  if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound.storage), &bound.len) != 0) {
    return Status::FromErrno(errno, "getsockname");
  }
  TcpEndpoint local;
  local.host = bind_host;
  if (local.host.size() >= 2 && local.host.front() == '[') {
    local.host = local.host.substr(1, local.host.size() - 2);
  }
  local.port = ntohs(family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound.storage)->sin6_port
                                        : reinterpret_cast<sockaddr_in*>(&bound.storage)->sin_port);
  local.token = token;
  return std::unique_ptr<TcpAcceptor>(new TcpAcceptor(std::move(fd), std::move(local)));
}

StatusOr<std::unique_ptr<Channel>> TcpAcceptor::Accept(std::chrono::milliseconds timeout,
                                                       ChannelInfo info) {
  if (!listen_fd_.valid()) {
    return Status::FailedPrecondition("this TCP acceptor already accepted its channel");
  }
  const std::string where = local_.host + " port " + std::to_string(local_.port);
  const Clock::time_point deadline = DeadlineAfter(timeout);
  for (;;) {
    pollfd p{listen_fd_.get(), POLLIN, 0};
    int n = poll(&p, 1, PollTimeoutMs(deadline));
    if (n < 0 && errno != EINTR) return Status::FromErrno(errno, "poll");
    if (n == 0 && Clock::now() >= deadline) {
      return Status::DeadlineExceeded("no connection with the right token on " + where +
                                      " within " + std::to_string(timeout.count()) + " ms");
    }
    if (n <= 0) continue;
    UniqueFd fd(accept4(listen_fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!fd.valid()) {
      if (TransientAcceptError(errno)) continue;
      return Status::FromErrno(errno, "accept on " + where);
    }
    const std::string remote = PeerAddress(fd.get());
    StatusOr<UniqueFd> checked =
        CheckToken(std::move(fd), std::min(deadline, Clock::now() + kTokenDeadline));
    if (!checked.ok()) {
      ClientLog().warn("TCP channel acceptor on {}: rejected the connection from {}: {}", where,
                       remote, checked.status().message());
      continue;
    }
    listen_fd_.reset();
    return StartChannel(std::move(*checked), std::move(info));
  }
}

StatusOr<UniqueFd> TcpAcceptor::CheckToken(UniqueFd fd, Clock::time_point deadline) const {
  std::array<uint8_t, 32> presented{};
  Status read = RecvExactBefore(fd.get(), presented.data(), presented.size(), deadline);
  if (!read.ok()) return Status(read.code(), "no token: " + read.message());
  if (!SameToken(presented, local_.token)) return Status::PermissionDenied("wrong token");
  return fd;
}

StatusOr<std::unique_ptr<Channel>> TcpConnect(const TcpEndpoint& endpoint, ChannelInfo info,
                                              std::chrono::milliseconds timeout) {
  if (endpoint.port == 0) return Status::InvalidArgument("TCP endpoint without a port");
  StatusOr<SocketAddress> addr = ParseAddress(endpoint.host, endpoint.port);
  if (!addr.ok()) return addr.status();
  StatusOr<UniqueFd> fd = ConnectBefore(*addr, DeadlineAfter(timeout));
  if (!fd.ok()) return fd.status();
  RDMAD_RETURN_IF_ERROR(SendAll(fd->get(), endpoint.token.data(), endpoint.token.size()));
  return StartChannel(std::move(*fd), std::move(info));
}

}  // namespace rdmad::internal
