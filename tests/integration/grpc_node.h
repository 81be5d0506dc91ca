// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// For the tests that drive the local API with raw gRPC calls
// (channel_broker_test.cc, isolation_test.cc): an rdmad process with a stub
// on its socket, and a TCP endpoint to hand it.
//
// Thread safety: plain values; a stub may be used from any thread.

#ifndef RDMAD_TESTS_INTEGRATION_GRPC_NODE_H_
#define RDMAD_TESTS_INTEGRATION_GRPC_NODE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "rdmad/v1/rdmad.grpc.pb.h"
#include "tests/integration/daemon_process.h"

namespace rdmad::testing {

struct GrpcNode {
  std::string name;
  std::string socket;
  int port = 0;  // its peer port
  std::unique_ptr<Process> process;
  std::unique_ptr<v1::Rdmad::Stub> stub;
};

// A TCP endpoint on 127.0.0.1:port with a fixed 32-byte token.
inline v1::Endpoint TcpEndpoint(uint32_t port) {
  v1::Endpoint e;
  e.mutable_tcp()->set_host("127.0.0.1");
  e.mutable_tcp()->set_port(port);
  e.mutable_tcp()->set_token(std::string(32, '\x5a'));
  return e;
}

}  // namespace rdmad::testing

#endif  // RDMAD_TESTS_INTEGRATION_GRPC_NODE_H_
