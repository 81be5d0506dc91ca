// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/discovery/route_lookup.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

namespace rdmad {
namespace {

// Closes the socket when it goes out of scope.
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() {
    if (fd_ >= 0) close(fd_);
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

struct AddrInfoFree {
  void operator()(addrinfo* ai) const { freeaddrinfo(ai); }
};

// "192.0.2.1" or "2001:db8::1" for a bound socket address.
std::string AddressText(const sockaddr_storage& addr) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof(buf));
  } else {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof(buf));
  }
  return buf;
}

}  // namespace

StatusOr<std::string> KernelSourceAddress(const std::string& peer_ip) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* raw = nullptr;
  // Port 9 (discard): connect() needs one; nothing is ever sent.
  int rc = getaddrinfo(peer_ip.c_str(), "9", &hints, &raw);
  std::unique_ptr<addrinfo, AddrInfoFree> info(raw);
  if (rc != 0 || info == nullptr) {
    return Status::InvalidArgument("\"" + peer_ip + "\" is not a numeric IPv4 or IPv6 address");
  }
  ScopedFd fd(socket(info->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return Status::FromErrno(errno, "socket");
  if (connect(fd.get(), info->ai_addr, info->ai_addrlen) != 0) {
    return Status(StatusCode::kUnavailable,
                  Status::FromErrno(errno, "no route to " + peer_ip).message());
  }
  sockaddr_storage local{};
  socklen_t len = sizeof(local);
  if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &len) != 0) {
    return Status::FromErrno(errno, "getsockname");
  }
  return AddressText(local);
}

std::optional<int> KernelPrefixLength(const std::string& local_ip) {
  in_addr want{};
  if (inet_pton(AF_INET, local_ip.c_str(), &want) != 1) return std::nullopt;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return std::nullopt;
  std::optional<int> prefix;
  for (ifaddrs* ifa = list; ifa != nullptr && !prefix; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || ifa->ifa_netmask == nullptr) continue;
    if (ifa->ifa_addr->sa_family != AF_INET) continue;
    const auto* addr = reinterpret_cast<const sockaddr_in*>(ifa->ifa_addr);
    if (addr->sin_addr.s_addr != want.s_addr) continue;
    const auto* mask = reinterpret_cast<const sockaddr_in*>(ifa->ifa_netmask);
    prefix = __builtin_popcount(ntohl(mask->sin_addr.s_addr));
  }
  freeifaddrs(list);
  return prefix;
}

namespace {

class KernelLookup final : public SourceAddressLookup {
 public:
  std::optional<std::string> SourceAddressFor(const std::string& peer_ip) const override {
    StatusOr<std::string> source = KernelSourceAddress(peer_ip);
    if (source.ok()) return source.value();
    spdlog::debug("no source address for reaching {}: {}", peer_ip, source.status().message());
    return std::nullopt;
  }
  std::optional<int> PrefixLength(const std::string& local_ip) const override {
    return KernelPrefixLength(local_ip);
  }
};

}  // namespace

const SourceAddressLookup& KernelSourceAddresses() {
  static const KernelLookup kernel;
  return kernel;
}

}  // namespace rdmad
