// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/secure_random.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rdmad {

void SecureRandomBytes(void* out, size_t n) {
  auto* p = static_cast<unsigned char*>(out);
  while (n > 0) {
    ssize_t got = getrandom(p, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "rdmad: getrandom failed: %s\n", std::strerror(errno));
      std::abort();
    }
    p += got;
    n -= static_cast<size_t>(got);
  }
}

uint64_t SecureRandomU64() {
  uint64_t value = 0;
  SecureRandomBytes(&value, sizeof(value));
  return value;
}

std::string SecureRandomHex(size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string bytes(n, '\0');
  SecureRandomBytes(bytes.data(), n);
  std::string out;
  out.reserve(2 * n);
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  return out;
}

}  // namespace rdmad
