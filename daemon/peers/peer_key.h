// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// PeerKey: the shared secret of one deployment's daemons, for peers
// without TLS (daemon.peer_key_file). Every peer call carries a proof
// (Sign): the calling node, the time, a nonce and HMAC-SHA256 under the
// key over those and the call's method. The server checks it (Verify):
// the MAC, a time within kMaxSkew of its own, and a nonce it has not seen
// within that window (a captured proof cannot be replayed). The key proves
// that the caller belongs to the deployment, not which node it is: a key
// holder may claim any node name (mutual TLS names nodes; docs/security.md).
// The proof does not cover the request's body, and nothing is encrypted.
//
// The key file holds 64 hex digits (32 bytes; rdmactl peer-key new FILE
// writes one), is the daemon's uid's, and others may not read it.
//
// Thread safety: Sign and Verify may be called from any thread.

#ifndef RDMAD_DAEMON_PEERS_PEER_KEY_H_
#define RDMAD_DAEMON_PEERS_PEER_KEY_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "rdmad/status.h"

namespace rdmad {

class PeerKey {
 public:
  static constexpr size_t kKeyBytes = 32;
  static constexpr std::chrono::seconds kMaxSkew{60};
  static constexpr size_t kMaxNonces = 200000;  // remembered within the window
  using Clock = std::chrono::system_clock;

  // The key in path: FAILED_PRECONDITION naming the file when it cannot be
  // read, is not 64 hex digits, is not the daemon's uid's, or others may
  // read it.
  static StatusOr<PeerKey> Load(const std::string& path);
  // From 64 hex digits (tests, and Load).
  static StatusOr<PeerKey> FromHex(std::string_view hex);

  PeerKey(const PeerKey& other) : key_(other.key_) {}

  // The proof for a call of method (its name, "OpenChannel") by node.
  std::string Sign(std::string_view method, std::string_view node,
                   Clock::time_point now = Clock::now()) const;
  // The node a proof names when it is valid for method now;
  // UNAUTHENTICATED saying why otherwise.
  StatusOr<std::string> Verify(std::string_view method, std::string_view proof,
                               Clock::time_point now = Clock::now());

 private:
  explicit PeerKey(const std::array<uint8_t, kKeyBytes>& key) : key_(key) {}
  std::string Mac(std::string_view text) const;  // hex

  std::array<uint8_t, kKeyBytes> key_{};
  std::mutex mu_;
  std::multimap<int64_t, std::string> nonces_by_time_;  // guarded by mu_
  std::map<std::string, int64_t> nonces_;               // nonce -> its time; guarded by mu_
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_PEERS_PEER_KEY_H_
