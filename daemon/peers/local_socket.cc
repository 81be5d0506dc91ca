// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/local_socket.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace rdmad {
namespace {

constexpr uint64_t kNoCookie = ~uint64_t{0};

struct Address {
  int family = AF_UNSPEC;
  uint32_t words[4] = {};  // network byte order, as inet_diag_sockid
};

bool ParseIp(const std::string& ip, Address* out) {
  in6_addr v6{};
  in_addr v4{};
  if (inet_pton(AF_INET, ip.c_str(), &v4) == 1) {
    out->family = AF_INET;
    out->words[0] = v4.s_addr;
    return true;
  }
  if (inet_pton(AF_INET6, ip.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_V4MAPPED(&v6)) {
      out->family = AF_INET;
      std::memcpy(&out->words[0], &v6.s6_addr[12], 4);
    } else {
      out->family = AF_INET6;
      std::memcpy(out->words, v6.s6_addr, 16);
    }
    return true;
  }
  return false;
}

// One exact sock_diag lookup (NLM_F_REQUEST without DUMP): the socket with
// source src:sport and destination dst:dport.
StatusOr<SocketOwner> Lookup(const Address& src, uint16_t sport, const Address& dst,
                             uint16_t dport) {
  int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return Status::FromErrno(errno, "sock_diag: socket");
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } message{};
  message.header.nlmsg_len = sizeof(message);
  message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  message.header.nlmsg_flags = NLM_F_REQUEST;
  message.request.sdiag_family = static_cast<uint8_t>(src.family);
  message.request.sdiag_protocol = IPPROTO_TCP;
  message.request.idiag_states = ~0u;
  message.request.id.idiag_sport = htons(sport);
  message.request.id.idiag_dport = htons(dport);
  std::memcpy(message.request.id.idiag_src, src.words, sizeof(src.words));
  std::memcpy(message.request.id.idiag_dst, dst.words, sizeof(dst.words));
  std::memcpy(message.request.id.idiag_cookie, &kNoCookie, sizeof(kNoCookie));
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (sendto(fd, &message, sizeof(message), 0, reinterpret_cast<sockaddr*>(&kernel),
             sizeof(kernel)) < 0) {
    Status failed = Status::FromErrno(errno, "sock_diag: send");
    close(fd);
    return failed;
  }
  alignas(nlmsghdr) char buf[8192];
  ssize_t n;
  do {
    n = recv(fd, buf, sizeof(buf), 0);
  } while (n < 0 && errno == EINTR);
  int saved = errno;
  close(fd);
  if (n < 0) return Status::FromErrno(saved, "sock_diag: recv");
  for (auto* h = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(h, static_cast<uint32_t>(n));
       h = NLMSG_NEXT(h, n)) {
    if (h->nlmsg_type == NLMSG_ERROR) {
      auto* error = static_cast<nlmsgerr*>(NLMSG_DATA(h));
      if (error->error == -ENOENT) return Status::NotFound("no such local socket");
      return Status::FromErrno(-error->error, "sock_diag");
    }
    if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
        h->nlmsg_len >= NLMSG_LENGTH(sizeof(inet_diag_msg))) {
      auto* found = static_cast<inet_diag_msg*>(NLMSG_DATA(h));
      return SocketOwner{found->idiag_uid, found->idiag_inode};
    }
  }
  return Status::NotFound("no such local socket");
}

}  // namespace

StatusOr<TransportPeer> ParseTransportPeer(const std::string& from) {
  std::string s = from;
  for (const char* prefix : {"ipv4:", "ipv6:"}) {
    if (s.rfind(prefix, 0) == 0) s = s.substr(5);
  }
  for (auto [enc, dec] : {std::pair{"%5B", "["}, std::pair{"%5D", "]"}}) {
    for (size_t at; (at = s.find(enc)) != std::string::npos;) s.replace(at, 3, dec);
  }
  TransportPeer peer;
  std::string port;
  if (!s.empty() && s[0] == '[') {
    size_t end = s.find("]:");
    if (end == std::string::npos) return Status::InvalidArgument("no port in " + from);
    peer.ip = s.substr(1, end - 1);
    port = s.substr(end + 2);
  } else {
    size_t colon = s.rfind(':');
    if (colon == std::string::npos) return Status::InvalidArgument("no port in " + from);
    peer.ip = s.substr(0, colon);
    port = s.substr(colon + 1);
  }
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), peer.port);
  Address parsed;
  if (ec != std::errc() || end != port.data() + port.size() || !ParseIp(peer.ip, &parsed)) {
    return Status::InvalidArgument("not an IP address and port: " + from);
  }
  if (parsed.family == AF_INET && peer.ip.find(':') != std::string::npos) {
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &parsed.words[0], text, sizeof(text));
    peer.ip = text;  // ::ffff:a.b.c.d
  }
  return peer;
}

StatusOr<SocketOwner> FindLocalTcpSocket(const TransportPeer& peer,
                                         const std::vector<std::string>& server_ips,
                                         uint16_t server_port) {
  Address src;
  if (!ParseIp(peer.ip, &src)) return Status::InvalidArgument("not an IP address: " + peer.ip);
  std::vector<std::string> tried = {peer.ip};
  tried.insert(tried.end(), server_ips.begin(), server_ips.end());
  for (const std::string& ip : tried) {
    Address dst;
    if (!ParseIp(ip, &dst) || dst.family != src.family) continue;
    auto owner = Lookup(src, peer.port, dst, server_port);
    if (owner.ok() || owner.status().code() != StatusCode::kNotFound) return owner;
  }
  return Status::NotFound("no socket of this host is " + peer.ip + ":" + std::to_string(peer.port));
}

bool ThisProcessHasSocket(uint64_t inode) {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return false;
  std::string wanted = "socket:[" + std::to_string(inode) + "]";
  bool found = false;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    char target[64] = {};
    std::string path = std::string("/proc/self/fd/") + entry->d_name;
    ssize_t n = readlink(path.c_str(), target, sizeof(target) - 1);
    if (n > 0 && wanted == std::string(target, static_cast<size_t>(n))) {
      found = true;
      break;
    }
  }
  closedir(dir);
  return found;
}

}  // namespace rdmad
