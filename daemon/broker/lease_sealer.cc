// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/lease_sealer.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>

#include <cstring>
#include <mutex>

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

class LeaseSealer::Mac {
 public:
  // Null when OpenSSL cannot make the keyed context.
  static std::unique_ptr<Mac> Keyed(const std::array<uint8_t, kKeyBytes>& key) {
    std::unique_ptr<Mac> m(new Mac);
    m->mac_ = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    if (m->mac_ == nullptr) return nullptr;
    m->ctx_ = EVP_MAC_CTX_new(m->mac_);
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                           OSSL_PARAM_construct_end()};
    if (m->ctx_ == nullptr || EVP_MAC_init(m->ctx_, key.data(), key.size(), params) != 1) {
      return nullptr;
    }
    return m;
  }
  ~Mac() {
    EVP_MAC_CTX_free(ctx_);
    EVP_MAC_free(mac_);
  }

  // The tag over data; false if OpenSSL failed.
  bool Tag(std::string_view data, std::array<uint8_t, kTagBytes>* tag) {
    std::lock_guard lock(mu_);
    size_t length = 0;
    // A null key starts again from the one given at construction.
    return EVP_MAC_init(ctx_, nullptr, 0, nullptr) == 1 &&
           EVP_MAC_update(ctx_, reinterpret_cast<const unsigned char*>(data.data()),
                          data.size()) == 1 &&
           EVP_MAC_final(ctx_, tag->data(), &length, tag->size()) == 1 && length == kTagBytes;
  }

 private:
  Mac() = default;
  std::mutex mu_;
  EVP_MAC* mac_ = nullptr;
  EVP_MAC_CTX* ctx_ = nullptr;  // guarded by mu_
};

LeaseSealer::LeaseSealer() {
  SecureRandomBytes(key_.data(), key_.size());
  mac_ = Mac::Keyed(key_);
}

LeaseSealer::LeaseSealer(const std::array<uint8_t, kKeyBytes>& key)
    : key_(key), mac_(Mac::Keyed(key_)) {}

LeaseSealer::LeaseSealer(LeaseSealer&&) noexcept = default;
LeaseSealer& LeaseSealer::operator=(LeaseSealer&&) noexcept = default;
LeaseSealer::~LeaseSealer() = default;

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
  if (mac_ != nullptr && mac_->Tag(data, &tag)) return tag;
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
