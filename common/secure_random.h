// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Randomness from the kernel's CSPRNG (getrandom(2)) for everything a peer
// or another local user must not guess: channel ids, instance ids, tokens,
// keys. std::random_device and seeded engines are not for these: an
// engine's consecutive outputs reveal its state.
//
// Thread safety: every function may be called from any thread.

#ifndef RDMAD_COMMON_SECURE_RANDOM_H_
#define RDMAD_COMMON_SECURE_RANDOM_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace rdmad {

// Fills out with n random bytes. getrandom blocks only until the kernel's
// pool is initialised at boot; an error there (never expected) aborts
// rather than hand out a guessable value.
void SecureRandomBytes(void* out, size_t n);

uint64_t SecureRandomU64();

// n random bytes as 2n lowercase hex digits.
std::string SecureRandomHex(size_t n);

}  // namespace rdmad

#endif  // RDMAD_COMMON_SECURE_RANDOM_H_
