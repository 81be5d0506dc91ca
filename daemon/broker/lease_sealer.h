// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// LeaseSealer: a channel lease (what an application hands back to re-attach
// a channel after rdmad restarted) is sealed with an HMAC-SHA256 under a
// key only this daemon reads, so that a process cannot write itself a lease
// for a channel it never had, nor edit one (its uid, its peer). The key
// lives in the state directory (lease.key, 32 random bytes, mode 0600,
// owned by the daemon's uid) and survives restarts, as the leases must.
//
// The HMAC is keyed once, at construction (OpenSSL's one-shot HMAC()
// fetches the digest and sets the key up again on every call: about three
// times the work of a tag, paid several times per channel opened).
//
// Thread safety: the key is immutable after construction; Seal and Open
// may be called from any thread (they share the keyed HMAC behind a
// mutex).

#ifndef RDMAD_DAEMON_BROKER_LEASE_SEALER_H_
#define RDMAD_DAEMON_BROKER_LEASE_SEALER_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "rdmad/status.h"

namespace rdmad {

class LeaseSealer {
 public:
  static constexpr size_t kKeyBytes = 32;
  static constexpr size_t kTagBytes = 32;

  // A fresh random key held in memory (tests; leases then die with the
  // process).
  LeaseSealer();
  LeaseSealer(LeaseSealer&&) noexcept;
  LeaseSealer& operator=(LeaseSealer&&) noexcept;
  ~LeaseSealer();

  // The key in dir/lease.key, created there (random, 0600) when missing.
  // FAILED_PRECONDITION naming the file when it cannot be created or read,
  // is not 32 bytes, is not the daemon's uid's, or others may read it.
  static StatusOr<LeaseSealer> FromDirectory(const std::string& dir);

  // "RDL1", payload, and the tag over both.
  std::string Seal(std::string_view payload) const;
  // The payload of what Seal made under this key; NOT_FOUND for anything
  // else (forged, edited, another daemon's key, not a sealed lease).
  StatusOr<std::string> Open(std::string_view sealed) const;

 private:
  class Mac;  // the keyed HMAC-SHA256 and its mutex

  explicit LeaseSealer(const std::array<uint8_t, kKeyBytes>& key);
  std::array<uint8_t, kTagBytes> Tag(std::string_view data) const;

  std::array<uint8_t, kKeyBytes> key_{};
  std::unique_ptr<Mac> mac_;  // null: HMAC() each time (OpenSSL would not key one)
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_BROKER_LEASE_SEALER_H_
