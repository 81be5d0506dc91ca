// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/tcp/tcp_socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

namespace rdmad::internal {
namespace {

// Keepalive: probe after 5 s idle, every 2 s, give up after 3 misses. The
// user timeout drops a connection whose sent data goes unacknowledged for
// 30 s (a dead host mid-transfer); a live receiver that is merely slow keeps
// acknowledging window probes and is not affected.
constexpr int kKeepIdleS = 5;
constexpr int kKeepIntervalS = 2;
constexpr int kKeepCount = 3;
constexpr unsigned kUserTimeoutMs = 30000;

Status Lost(int err, const char* what) {
  return Status::Unavailable(std::string("connection lost: ") + what + ": " + std::strerror(err));
}

Status SetInt(int fd, int level, int name, int value, const char* what) {
  if (setsockopt(fd, level, name, &value, sizeof(value)) != 0) {
    return Status::FromErrno(errno, std::string("setsockopt ") + what);
  }
  return Status::Ok();
}

Status SetBlocking(int fd, bool blocking) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0) return Status::FromErrno(errno, "fcntl F_GETFL");
  flags = blocking ? (flags & ~O_NONBLOCK) : (flags | O_NONBLOCK);
  if (fcntl(fd, F_SETFL, flags) != 0) return Status::FromErrno(errno, "fcntl F_SETFL");
  return Status::Ok();
}

// Waits for events on fd until deadline: OK, DEADLINE_EXCEEDED or an error.
Status PollBefore(int fd, short events, Clock::time_point deadline, const char* what) {
  for (;;) {
    pollfd p{fd, events, 0};
    int n = poll(&p, 1, PollTimeoutMs(deadline));
    if (n > 0) return Status::Ok();
    if (n == 0) {
      if (Clock::now() < deadline) continue;  // a wait longer than poll's cap
      return Status::DeadlineExceeded(std::string(what) + ": timed out");
    }
    if (errno != EINTR) return Status::FromErrno(errno, std::string("poll ") + what);
  }
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) reset(other.release());
  return *this;
}

int UniqueFd::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void UniqueFd::reset(int fd) {
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
}

StatusOr<SocketAddress> ParseAddress(const std::string& host, uint16_t port) {
  std::string bare = host;
  if (bare.size() >= 2 && bare.front() == '[' && bare.back() == ']') {
    bare = bare.substr(1, bare.size() - 2);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* result = nullptr;
  std::string service = std::to_string(port);
  int rc = getaddrinfo(bare.c_str(), service.c_str(), &hints, &result);
  if (rc != 0 || result == nullptr) {
    return Status::InvalidArgument("not a numeric IPv4 or IPv6 address: \"" + host + "\"");
  }
  SocketAddress addr;
  std::memcpy(&addr.storage, result->ai_addr, result->ai_addrlen);
  addr.len = result->ai_addrlen;
  freeaddrinfo(result);
  return addr;
}

std::string FormatAddress(const sockaddr* addr) {
  char host[INET6_ADDRSTRLEN + 16] = "?";
  char serv[16] = "?";
  socklen_t len = addr->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (getnameinfo(addr, len, host, sizeof(host), serv, sizeof(serv),
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
    return "?";
  }
  if (addr->sa_family == AF_INET6) return std::string("[") + host + "]:" + serv;
  return std::string(host) + ":" + serv;
}

std::string LocalAddress(int fd) {
  SocketAddress addr;
  addr.len = sizeof(addr.storage);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr.storage), &addr.len) != 0) return "?";
  return FormatAddress(addr.get());
}

std::string PeerAddress(int fd) {
  SocketAddress addr;
  addr.len = sizeof(addr.storage);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&addr.storage), &addr.len) != 0) return "?";
  return FormatAddress(addr.get());
}

Status ConfigureStreamSocket(int fd) {
  RDMAD_RETURN_IF_ERROR(SetInt(fd, IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY"));
  RDMAD_RETURN_IF_ERROR(SetInt(fd, SOL_SOCKET, SO_KEEPALIVE, 1, "SO_KEEPALIVE"));
  RDMAD_RETURN_IF_ERROR(SetInt(fd, IPPROTO_TCP, TCP_KEEPIDLE, kKeepIdleS, "TCP_KEEPIDLE"));
  RDMAD_RETURN_IF_ERROR(SetInt(fd, IPPROTO_TCP, TCP_KEEPINTVL, kKeepIntervalS, "TCP_KEEPINTVL"));
  RDMAD_RETURN_IF_ERROR(SetInt(fd, IPPROTO_TCP, TCP_KEEPCNT, kKeepCount, "TCP_KEEPCNT"));
  return SetInt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, kUserTimeoutMs, "TCP_USER_TIMEOUT");
}

StatusOr<UniqueFd> ConnectBefore(const SocketAddress& addr, Clock::time_point deadline) {
  UniqueFd fd(socket(addr.storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd.valid()) return Status::FromErrno(errno, "socket");
  const std::string where = FormatAddress(addr.get());
  if (connect(fd.get(), addr.get(), addr.len) != 0) {
    if (errno != EINPROGRESS) return Lost(errno, ("connect to " + where).c_str());
    Status waited = PollBefore(fd.get(), POLLOUT, deadline, ("connect to " + where).c_str());
    if (!waited.ok()) return waited;
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) return Lost(err, ("connect to " + where).c_str());
  }
  RDMAD_RETURN_IF_ERROR(SetBlocking(fd.get(), true));
  return fd;
}

namespace {

// Sends every byte; with a deadline, without blocking past it (EAGAIN
// waits for POLLOUT until then).
Status Send(int fd, iovec* iov, int count, std::optional<Clock::time_point> deadline) {
  while (count > 0) {
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(count);
    ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL | (deadline ? MSG_DONTWAIT : 0));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (!deadline || (errno != EAGAIN && errno != EWOULDBLOCK)) return Lost(errno, "send");
      RDMAD_RETURN_IF_ERROR(PollBefore(fd, POLLOUT, *deadline, "send"));
      continue;
    }
    size_t sent = static_cast<size_t>(n);
    while (count > 0 && sent >= iov->iov_len) {
      sent -= iov->iov_len;
      ++iov;
      --count;
    }
    if (count > 0) {
      iov->iov_base = static_cast<uint8_t*>(iov->iov_base) + sent;
      iov->iov_len -= sent;
    }
  }
  return Status::Ok();
}

}  // namespace

Status SendAll(int fd, iovec* iov, int count) { return Send(fd, iov, count, std::nullopt); }

Status SendAllBefore(int fd, iovec* iov, int count, Clock::time_point deadline) {
  return Send(fd, iov, count, deadline);
}

Status SendAll(int fd, const void* buf, size_t len) {
  iovec iov{const_cast<void*>(buf), len};
  return SendAll(fd, &iov, 1);
}

Status RecvExact(int fd, void* buf, size_t len, size_t* received,
                 const std::function<bool(size_t)>& idle) {
  size_t got = 0;
  Status status;
  while (got < len) {
    ssize_t n = recv(fd, static_cast<uint8_t*>(buf) + got, len - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n == 0 ||
               (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && idle && idle(got))) {
      status = Status::Unavailable("EOF after " + std::to_string(got) + " of " +
                                   std::to_string(len) + " bytes");
      break;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!idle) {
        status = Lost(errno, "recv");
        break;
      }
    } else if (errno != EINTR) {
      status = Lost(errno, "recv");
      break;
    }
  }
  if (received != nullptr) *received = got;
  return status;
}

Status RecvExactBefore(int fd, void* buf, size_t len, Clock::time_point deadline) {
  size_t got = 0;
  while (got < len) {
    RDMAD_RETURN_IF_ERROR(PollBefore(fd, POLLIN, deadline, "receive"));
    ssize_t n = recv(fd, static_cast<uint8_t*>(buf) + got, len - got, MSG_DONTWAIT);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n == 0) {
      return Status::Unavailable("EOF after " + std::to_string(got) + " of " + std::to_string(len) +
                                 " bytes");
    } else if (errno != EINTR && errno != EAGAIN) {
      return Lost(errno, "recv");
    }
  }
  return Status::Ok();
}

int PollTimeoutMs(Clock::time_point deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, 24 * 3600 * 1000));
}

}  // namespace rdmad::internal
