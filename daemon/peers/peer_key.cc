// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/peer_key.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <charconv>
#include <vector>

#include "common/secret_file.h"
#include "common/secure_random.h"

namespace rdmad {
namespace {

constexpr std::string_view kVersion = "v1";

std::string Hex(const unsigned char* data, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 0xf];
  }
  return out;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int64_t Millis(PeerKey::Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (size_t at; (at = s.find(sep)) != std::string_view::npos; s.remove_prefix(at + 1)) {
    parts.push_back(s.substr(0, at));
  }
  parts.push_back(s);
  return parts;
}

Status Refused(const std::string& why) { return Status::Unauthenticated("peer key proof: " + why); }

}  // namespace

StatusOr<PeerKey> PeerKey::FromHex(std::string_view hex) {
  while (!hex.empty() && (hex.back() == '\n' || hex.back() == ' ')) hex.remove_suffix(1);
  std::array<uint8_t, kKeyBytes> key{};
  if (hex.size() != 2 * kKeyBytes) {
    return Status::InvalidArgument("a peer key is " + std::to_string(2 * kKeyBytes) +
                                   " hex digits");
  }
  for (size_t i = 0; i < kKeyBytes; ++i) {
    int high = HexValue(hex[2 * i]), low = HexValue(hex[2 * i + 1]);
    if (high < 0 || low < 0) return Status::InvalidArgument("a peer key is hex digits only");
    key[i] = static_cast<uint8_t>(high << 4 | low);
  }
  return PeerKey(key);
}

StatusOr<PeerKey> PeerKey::Load(const std::string& path) {
  auto error = [](const std::string& what) {
    return Status::FailedPrecondition("peer key " + what + " (daemon.peer_key_file)");
  };
  StatusOr<std::string> text = ReadSecretFile(path, 256);
  if (!text.ok()) return error(text.status().message());
  auto key = FromHex(*text);
  if (!key.ok()) return error(path + ": " + key.status().message());
  return key;
}

std::string PeerKey::Mac(std::string_view text) const {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(text.data()), text.size(), mac, &length);
  return Hex(mac, length);
}

std::string PeerKey::Sign(std::string_view method, std::string_view node,
                          Clock::time_point now) const {
  std::string signed_part = std::string(kVersion) + ":" + std::string(node) + ":" +
                            std::to_string(Millis(now)) + ":" + SecureRandomHex(16);
  return signed_part + ":" + Mac(std::string(method) + "\n" + signed_part);
}

StatusOr<std::string> PeerKey::Verify(std::string_view method, std::string_view proof,
                                      Clock::time_point now) {
  if (proof.empty()) return Refused("none (this daemon requires the deployment's peer key)");
  if (proof.size() > 512) return Refused("too long");
  std::vector<std::string_view> parts = Split(proof, ':');
  if (parts.size() != 5 || parts[0] != kVersion || parts[1].empty() || parts[3].size() != 32) {
    return Refused("malformed");
  }
  std::string_view signed_part = proof.substr(0, proof.rfind(':'));
  std::string expected = Mac(std::string(method) + "\n" + std::string(signed_part));
  if (parts[4].size() != expected.size() ||
      CRYPTO_memcmp(parts[4].data(), expected.data(), expected.size()) != 0) {
    return Refused("wrong MAC (another key, or another call's proof)");
  }
  int64_t when = 0;
  auto [end, ec] = std::from_chars(parts[2].data(), parts[2].data() + parts[2].size(), when);
  int64_t now_ms = Millis(now);
  int64_t skew_ms = std::chrono::duration_cast<std::chrono::milliseconds>(kMaxSkew).count();
  if (ec != std::errc() || end != parts[2].data() + parts[2].size()) return Refused("malformed");
  if (when < now_ms - skew_ms || when > now_ms + skew_ms) {
    return Refused("its time is " + std::to_string((when - now_ms) / 1000) +
                   " s off this daemon's clock (at most " + std::to_string(kMaxSkew.count()) +
                   " s)");
  }
  std::lock_guard lock(mu_);
  // Forget what is out of the window: it would be refused for its time.
  while (!nonces_by_time_.empty() && nonces_by_time_.begin()->first < now_ms - skew_ms) {
    nonces_.erase(nonces_by_time_.begin()->second);
    nonces_by_time_.erase(nonces_by_time_.begin());
  }
  std::string nonce(parts[3]);
  if (nonces_.count(nonce) != 0) return Refused("replayed");
  if (nonces_.size() >= kMaxNonces) return Refused("too many calls within the window; try again");
  nonces_.emplace(nonce, when);
  nonces_by_time_.emplace(when, nonce);
  return std::string(parts[1]);
}

}  // namespace rdmad
