// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/lease_sealer.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/secure_random.h"

namespace rdmad {
namespace {

constexpr std::string_view kMagic = "RDL1";

Status KeyFileError(const std::string& path, const std::string& what) {
  return Status::FailedPrecondition("lease key " + path + ": " + what +
                                    " (the daemon's state directory: daemon.state_dir)");
}

}  // namespace

LeaseSealer::LeaseSealer() { SecureRandomBytes(key_.data(), key_.size()); }

StatusOr<LeaseSealer> LeaseSealer::FromDirectory(const std::string& dir) {
  std::string path = dir + "/lease.key";
  std::array<uint8_t, kKeyBytes> key{};
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 && errno == ENOENT) {
    // First start: a new key, written whole before anyone may read it.
    SecureRandomBytes(key.data(), key.size());
    std::string temp = path + ".new";
    int out = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (out < 0) return KeyFileError(path, std::string("cannot create: ") + std::strerror(errno));
    bool written =
        write(out, key.data(), key.size()) == static_cast<ssize_t>(key.size()) && fsync(out) == 0;
    close(out);
    if (!written || rename(temp.c_str(), path.c_str()) != 0) {
      unlink(temp.c_str());
      return KeyFileError(path, std::string("cannot write: ") + std::strerror(errno));
    }
    return LeaseSealer(key);
  }
  if (fd < 0) return KeyFileError(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  Status status;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    status = KeyFileError(path, "not a regular file");
  } else if (st.st_uid != geteuid()) {
    status = KeyFileError(path, "owned by uid " + std::to_string(st.st_uid) + ", not rdmad's " +
                                    std::to_string(geteuid()));
  } else if ((st.st_mode & 077) != 0) {
    status = KeyFileError(path, "others may read it (chmod 600)");
  } else if (read(fd, key.data(), key.size()) != static_cast<ssize_t>(key.size()) ||
             st.st_size != static_cast<off_t>(key.size())) {
    status = KeyFileError(path, "not " + std::to_string(kKeyBytes) + " bytes");
  }
  close(fd);
  if (!status.ok()) return status;
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
