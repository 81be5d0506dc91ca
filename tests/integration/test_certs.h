// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Certificates for the TLS tests, made by openssl in a test's directory:
// a CA (CA.pem, CA.key) and, signed by it, one certificate per name
// (NAME.pem, NAME.key) valid for DNS:NAME and IP:127.0.0.1, for servers
// and clients alike.

#ifndef RDMAD_TESTS_INTEGRATION_TEST_CERTS_H_
#define RDMAD_TESTS_INTEGRATION_TEST_CERTS_H_

#include <string>
#include <vector>

#include "tests/integration/daemon_process.h"

namespace rdmad::testing {

// False (and a test failure for a failing command) when they could not be
// made; false without a failure when openssl is not installed.
bool MakeTestCerts(const TempDir& dir, const std::string& ca,
                   const std::vector<std::string>& names);

}  // namespace rdmad::testing

#endif  // RDMAD_TESTS_INTEGRATION_TEST_CERTS_H_
