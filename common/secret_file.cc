// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/secret_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rdmad {

StatusOr<std::string> ReadSecretFile(const std::string& path, size_t max_bytes) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 && errno == ENOENT) return Status::NotFound(path + ": no such file");
  if (fd < 0) {
    return Status::FailedPrecondition(path + ": cannot open: " + std::strerror(errno));
  }
  struct stat st {};
  std::string contents;
  Status status;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    status = Status::FailedPrecondition(path + ": not a regular file");
  } else if (st.st_uid != geteuid()) {
    status = Status::FailedPrecondition(path + ": owned by uid " + std::to_string(st.st_uid) +
                                        ", not rdmad's " + std::to_string(geteuid()));
  } else if ((st.st_mode & 077) != 0) {
    status = Status::FailedPrecondition(path + ": others may read it (chmod 600)");
  } else {
    contents.resize(max_bytes);
    ssize_t n = read(fd, contents.data(), max_bytes);
    if (n < 0) {
      status = Status::FailedPrecondition(path + ": cannot read: " + std::strerror(errno));
    } else {
      contents.resize(static_cast<size_t>(n));
    }
  }
  close(fd);
  if (!status.ok()) return status;
  return contents;
}

Status WriteSecretFile(const std::string& path, const std::string& contents) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 && errno == EEXIST) return Status::AlreadyExists(path + ": exists already");
  if (fd < 0) {
    return Status::FailedPrecondition(path + ": cannot create: " + std::strerror(errno));
  }
  bool written =
      write(fd, contents.data(), contents.size()) == static_cast<ssize_t>(contents.size()) &&
      fsync(fd) == 0;
  int saved = errno;
  close(fd);
  if (!written) {
    unlink(path.c_str());
    return Status::FailedPrecondition(path + ": cannot write: " + std::strerror(saved));
  }
  return Status::Ok();
}

}  // namespace rdmad
