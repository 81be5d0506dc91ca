// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// A plain HTTP GET on loopback, for the tests that scrape /metrics or ask
// a Prometheus server's API.
//
// Thread safety: stateless functions.

#ifndef RDMAD_TESTS_INTEGRATION_HTTP_GET_H_
#define RDMAD_TESTS_INTEGRATION_HTTP_GET_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <string>

namespace rdmad {

// GET path from 127.0.0.1:port; the body, or "" when nothing answers.
inline std::string HttpGet(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (write(fd, request.data(), request.size()) == ssize_t(request.size())) {
      char buf[65536];
      for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) response.append(buf, size_t(n));
    }
  }
  close(fd);
  size_t body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace rdmad

#endif  // RDMAD_TESTS_INTEGRATION_HTTP_GET_H_
