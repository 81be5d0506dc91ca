// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "tests/integration/test_certs.h"

#include <unistd.h>

#include "gtest/gtest.h"

namespace rdmad::testing {

bool MakeTestCerts(const TempDir& dir, const std::string& ca,
                   const std::vector<std::string>& names) {
  constexpr char kOpenssl[] = "/usr/bin/openssl";
  if (access(kOpenssl, X_OK) != 0) return false;
  std::string out;
  auto run = [&](std::vector<std::string> args) {
    int code = RunCommand(kOpenssl, args, &out);
    EXPECT_EQ(code, 0) << out;
    return code == 0;
  };
  if (!run({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", dir.File(ca + ".key"), "-out", dir.File(ca + ".pem"), "-days", "2", "-subj",
            "/CN=rdmad test " + ca, "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
            "keyUsage=critical,keyCertSign,cRLSign"})) {
    return false;
  }
  for (const std::string& name : names) {
    std::string ext = dir.Write(name + ".cnf", "subjectAltName = DNS:" + name +
                                                   ", IP:127.0.0.1\n"
                                                   "basicConstraints = CA:FALSE\n"
                                                   "extendedKeyUsage = serverAuth, clientAuth\n");
    if (!run({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
              "-keyout", dir.File(name + ".key"), "-out", dir.File(name + ".csr"), "-subj",
              "/CN=127.0.0.1"}) ||
        !run({"x509", "-req", "-in", dir.File(name + ".csr"), "-CA", dir.File(ca + ".pem"),
              "-CAkey", dir.File(ca + ".key"), "-CAcreateserial", "-out", dir.File(name + ".pem"),
              "-days", "2", "-extfile", ext})) {
      return false;
    }
  }
  return true;
}

}  // namespace rdmad::testing
