// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Socket helpers for the TCP channel: an owning fd, numeric address parsing
// and printing, the stream options every channel socket gets, a connect
// with a timeout, and whole-buffer send/receive. Every I/O error on a
// connected socket is UNAVAILABLE ("connection lost: ..."): the connection
// is gone whatever the errno.
//
// Thread safety: UniqueFd is a move-only value; the functions are reentrant.

#ifndef RDMAD_CLIENT_SRC_TCP_TCP_SOCKET_H_
#define RDMAD_CLIENT_SRC_TCP_TCP_SOCKET_H_

#include <sys/socket.h>
#include <sys/uio.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "rdmad/status.h"

namespace rdmad::internal {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t len = 0;
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
};

using Clock = std::chrono::steady_clock;

// A numeric IPv4 or IPv6 host ("192.0.2.1", "::1", "[::1]", "fe80::1%eth0")
// and a port; INVALID_ARGUMENT for anything else (no name resolution).
StatusOr<SocketAddress> ParseAddress(const std::string& host, uint16_t port);

// "192.0.2.1:40123" or "[::1]:40123".
std::string FormatAddress(const sockaddr* addr);
// The local or remote address of a socket, formatted; "?" when unknown.
std::string LocalAddress(int fd);
std::string PeerAddress(int fd);

// TCP_NODELAY, SO_KEEPALIVE with short intervals, TCP_USER_TIMEOUT.
Status ConfigureStreamSocket(int fd);

// A blocking, close-on-exec socket connected to addr, or DEADLINE_EXCEEDED
// once deadline passes, or UNAVAILABLE with the connect error.
StatusOr<UniqueFd> ConnectBefore(const SocketAddress& addr, Clock::time_point deadline);

// Sends every byte of iov[0..count) (modified as it goes); MSG_NOSIGNAL.
Status SendAll(int fd, iovec* iov, int count);
Status SendAll(int fd, const void* buf, size_t len);
// The same without blocking past deadline: a send the socket cannot take at
// once (EAGAIN: its buffer full, or the kernel short of socket memory)
// waits for POLLOUT until then, else DEADLINE_EXCEEDED.
Status SendAllBefore(int fd, iovec* iov, int count, Clock::time_point deadline);

// Receives exactly len bytes. UNAVAILABLE on EOF ("EOF after N of M bytes")
// or on an error; *received (if given) says how many bytes did arrive.
// idle: for a socket with SO_RCVTIMEO, called (with the bytes received so
// far) each time a read timed out; true ends the read as an EOF would.
Status RecvExact(int fd, void* buf, size_t len, size_t* received = nullptr,
                 const std::function<bool(size_t)>& idle = {});
// The same, giving up with DEADLINE_EXCEEDED at deadline.
Status RecvExactBefore(int fd, void* buf, size_t len, Clock::time_point deadline);

// Milliseconds from now to deadline for poll(): 0 if past, capped.
int PollTimeoutMs(Clock::time_point deadline);

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_TCP_TCP_SOCKET_H_
