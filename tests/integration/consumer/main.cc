// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// A small application built against an installed rdmad (find_package or
// pkg-config; tests/integration/consumer_test.sh): it uses the public API
// and prints what it got, so the test sees that it linked and ran.

#include <cstdio>

#include "rdmad/client.h"

int main(int argc, char** argv) {
  rdmad::SetClientLogLevel(rdmad::LogLevel::kError);
  rdmad::ClientOptions options;
  options.socket_path = argc > 1 ? argv[1] : "/nonexistent/rdmad.sock";
  options.connect_timeout = std::chrono::milliseconds(200);
  rdmad::StatusOr<std::unique_ptr<rdmad::Client>> client = rdmad::Client::Open(options);
  std::printf(
      "log level %s; connect: %s\n",
      std::string(rdmad::LogLevelName(rdmad::ClientLogLevel())).c_str(),
      client.ok() ? "OK" : std::string(rdmad::StatusCodeName(client.status().code())).c_str());
  return 0;
}
