// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/pem_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace rdmad {

StatusOr<std::string> ReadPem(const std::string& path, const char* setting) {
  std::ifstream in(path);
  if (!in) {
    return Status::FailedPrecondition(std::string("cannot read ") + setting + " " + path + ": " +
                                      std::strerror(errno));
  }
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().find("-----BEGIN ") == std::string::npos) {
    return Status::FailedPrecondition(std::string(setting) + " " + path + " is not a PEM file");
  }
  return text.str();
}

}  // namespace rdmad
