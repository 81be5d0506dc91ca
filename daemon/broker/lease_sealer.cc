// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/lease_sealer.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstring>

#include "common/secret_file.h"
#include "common/secure_random.h"

namespace rdmad {
namespace {

constexpr std::string_view kMagic = "RDL1";

Status KeyFileError(const std::string& what) {
  return Status::FailedPrecondition("lease key " + what +
                                    " (the daemon's state directory: daemon.state_dir)");
}

}  // namespace

LeaseSealer::LeaseSealer() { SecureRandomBytes(key_.data(), key_.size()); }

StatusOr<LeaseSealer> LeaseSealer::FromDirectory(const std::string& dir) {
  std::string path = dir + "/lease.key";
  std::array<uint8_t, kKeyBytes> key{};
  StatusOr<std::string> stored = ReadSecretFile(path, kKeyBytes + 1);
  if (stored.status().code() == StatusCode::kNotFound) {
    // First start: a new key.
    SecureRandomBytes(key.data(), key.size());
    Status written =
        WriteSecretFile(path, std::string(reinterpret_cast<const char*>(key.data()), key.size()));
    if (!written.ok()) return KeyFileError(written.message());
    return LeaseSealer(key);
  }
  if (!stored.ok()) return KeyFileError(stored.status().message());
  if (stored->size() != kKeyBytes) {
    return KeyFileError(path + ": not " + std::to_string(kKeyBytes) +
                        " bytes (delete it for a new key; channels held across this restart "
                        "then fail to re-attach)");
  }
  std::memcpy(key.data(), stored->data(), kKeyBytes);
  return LeaseSealer(key);
}

std::array<uint8_t, LeaseSealer::kTagBytes> LeaseSealer::Tag(std::string_view data) const {
  std::array<uint8_t, kTagBytes> tag{};
  unsigned int length = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), tag.data(), &length);
  return tag;
}

std::string LeaseSealer::Seal(std::string_view payload) const {
  std::string sealed(kMagic);
  sealed.append(payload);
  auto tag = Tag(sealed);
  sealed.append(reinterpret_cast<const char*>(tag.data()), tag.size());
  return sealed;
}

StatusOr<std::string> LeaseSealer::Open(std::string_view sealed) const {
  Status refused = Status::NotFound("lease: not a lease this daemon gave");
  if (sealed.size() < kMagic.size() + kTagBytes || sealed.substr(0, kMagic.size()) != kMagic) {
    return refused;
  }
  std::string_view body = sealed.substr(0, sealed.size() - kTagBytes);
  auto tag = Tag(body);
  if (CRYPTO_memcmp(tag.data(), sealed.data() + body.size(), kTagBytes) != 0) return refused;
  return std::string(body.substr(kMagic.size()));
}

}  // namespace rdmad
