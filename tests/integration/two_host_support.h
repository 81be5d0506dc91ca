// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// What the two-VM lab's application tests (two_host_test.cc and the
// two_host_rails*_test.cc) share: the lab's environment, a link set up or
// down, deterministic bytes, and connecting to node b's application once it
// listens.
//
// Thread safety: functions; one test at a time.

#ifndef RDMAD_TESTS_INTEGRATION_TWO_HOST_SUPPORT_H_
#define RDMAD_TESTS_INTEGRATION_TWO_HOST_SUPPORT_H_

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rdmad/client.h"

namespace rdmad::lab {

inline std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// The two-VM lab with two rails each (tests/lab/channels/rails.sh), a
// daemon on this node: where the TwoHostRails* tests run.
inline bool TwoVmsTwoRails() {
  return Env("LAB_VMS") == "2" && Env("LAB_RAILS") == "2" && !Env("RDMAD_SOCKET").empty();
}

// `ip link set ARGS` ("eth1 down"), failing the test if it fails.
inline void SetLink(const std::string& args) {
  std::string cmd = "ip link set " + args;
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

inline std::vector<uint8_t> Pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> out(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : out) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<uint8_t>(x >> 24);
  }
  return out;
}

// A channel to service on peer, tried for up to a minute while the peer's
// listener is not up yet (NOT_FOUND, UNAVAILABLE); any other error at once.
inline StatusOr<std::unique_ptr<Channel>> ConnectOnceListening(Client& client,
                                                               const std::string& peer,
                                                               const std::string& service) {
  StatusOr<std::unique_ptr<Channel>> channel = Status::NotFound("not tried");
  for (int i = 0; i < 600; ++i) {
    channel = client.Connect(peer, service);
    if (channel.ok() || (channel.status().code() != StatusCode::kNotFound &&
                         channel.status().code() != StatusCode::kUnavailable)) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return channel;
}

}  // namespace rdmad::lab

#endif  // RDMAD_TESTS_INTEGRATION_TWO_HOST_SUPPORT_H_
