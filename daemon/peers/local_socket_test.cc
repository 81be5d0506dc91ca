// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/local_socket.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rdmad {
namespace {

// A listener on 127.0.0.1 (or ::1), closed at the end.
class Listener {
 public:
  explicit Listener(int family) : family_(family) {
    fd_ = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_storage addr = Loopback(0);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), Len()) != 0 || listen(fd_, 8) != 0) {
      close(fd_);
      fd_ = -1;
      return;
    }
    socklen_t len = sizeof(addr);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&addr)->sin_port
                                    : reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  }
  ~Listener() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  uint16_t port() const { return port_; }
  // A connected client socket and the peer string gRPC would print for it.
  int Connect(std::string* from) const {
    int c = socket(family_, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_storage addr = Loopback(port_);
    if (connect(c, reinterpret_cast<sockaddr*>(&addr), Len()) != 0) return -1;
    socklen_t len = sizeof(addr);
    getsockname(c, reinterpret_cast<sockaddr*>(&addr), &len);
    uint16_t port = ntohs(family_ == AF_INET ? reinterpret_cast<sockaddr_in*>(&addr)->sin_port
                                             : reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
    *from = family_ == AF_INET ? "ipv4:127.0.0.1:" + std::to_string(port)
                               : "ipv6:%5B::1%5D:" + std::to_string(port);
    return c;
  }

 private:
  sockaddr_storage Loopback(uint16_t port) const {
    sockaddr_storage s{};
    if (family_ == AF_INET) {
      auto* a = reinterpret_cast<sockaddr_in*>(&s);
      a->sin_family = AF_INET;
      a->sin_port = htons(port);
      a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    } else {
      auto* a = reinterpret_cast<sockaddr_in6*>(&s);
      a->sin6_family = AF_INET6;
      a->sin6_port = htons(port);
      a->sin6_addr = in6addr_loopback;
    }
    return s;
  }
  socklen_t Len() const { return family_ == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6); }
  int family_;
  int fd_ = -1;
  uint16_t port_ = 0;
};

TEST(LocalSocketTest, ParsesWhatGrpcPrints) {
  auto v4 = ParseTransportPeer("ipv4:127.0.0.1:5000");
  ASSERT_TRUE(v4.ok()) << v4.status().ToString();
  EXPECT_EQ(v4->ip, "127.0.0.1");
  EXPECT_EQ(v4->port, 5000);
  auto v6 = ParseTransportPeer("ipv6:%5B::1%5D:6000");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->ip, "::1");
  EXPECT_EQ(v6->port, 6000);
  auto mapped = ParseTransportPeer("ipv6:[::ffff:192.0.2.7]:7000");
  ASSERT_TRUE(mapped.ok());
  EXPECT_EQ(mapped->ip, "192.0.2.7");
  for (const char* bad : {"", "unix:/run/x.sock", "ipv4:127.0.0.1", "ipv4:host:1",
                          "ipv4:127.0.0.1:70000", "ipv6:[::1]"}) {
    EXPECT_EQ(ParseTransportPeer(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(LocalSocketTest, FindsTheConnectingSocketsOwnerAndProcess) {
  for (int family : {AF_INET, AF_INET6}) {
    Listener listener(family);
    if (!listener.ok()) continue;  // no ::1 in this namespace
    std::string from;
    int client = listener.Connect(&from);
    ASSERT_GE(client, 0) << from;
    auto peer = ParseTransportPeer(from);
    ASSERT_TRUE(peer.ok());
    auto owner = FindLocalTcpSocket(*peer, {}, listener.port());
    ASSERT_TRUE(owner.ok()) << from << ": " << owner.status().ToString();
    EXPECT_EQ(owner->uid, geteuid());
    EXPECT_TRUE(ThisProcessHasSocket(owner->inode));
    // Another port: nobody.
    auto none = FindLocalTcpSocket(*peer, {}, listener.port() == 1 ? 2 : 1);
    EXPECT_EQ(none.status().code(), StatusCode::kNotFound) << none.status().ToString();
    close(client);
  }
}

TEST(LocalSocketTest, AnotherUidsSocketIsItsAndNotThisProcesss) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to connect as another uid";
  Listener listener(AF_INET);
  ASSERT_TRUE(listener.ok());
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  pid_t child = fork();
  if (child == 0) {
    // The child: uid 65534, connects, tells its peer string, waits.
    close(report[0]);
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
    std::string from;
    int c = listener.Connect(&from);
    if (c < 0) _exit(3);
    from += "\n";
    if (write(report[1], from.data(), from.size()) < 0) _exit(4);
    pause();  // killed below
    _exit(0);
  }
  close(report[1]);
  char buf[128] = {};
  ssize_t n = read(report[0], buf, sizeof(buf) - 1);
  std::string from(buf, n > 0 ? static_cast<size_t>(n - 1) : 0);
  auto peer = ParseTransportPeer(from);
  StatusOr<SocketOwner> owner = Status::Internal("not looked up");
  if (peer.ok()) owner = FindLocalTcpSocket(*peer, {"127.0.0.1"}, listener.port());
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(report[0]);
  ASSERT_TRUE(peer.ok()) << "the child said \"" << from << "\"";
  ASSERT_TRUE(owner.ok()) << owner.status().ToString();
  EXPECT_EQ(owner->uid, 65534u);
  EXPECT_FALSE(ThisProcessHasSocket(owner->inode));
}

}  // namespace
}  // namespace rdmad
