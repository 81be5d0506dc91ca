// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Files that hold secrets (the lease key, the shared peer key): readable
// only when they are regular files of this process's uid that nobody else
// may read, and written whole with mode 0600, never over another file.
//
// Thread safety: plain functions.

#ifndef RDMAD_COMMON_SECRET_FILE_H_
#define RDMAD_COMMON_SECRET_FILE_H_

#include <cstddef>
#include <string>

#include "rdmad/status.h"

namespace rdmad {

// The file's contents (at most max_bytes are read). NOT_FOUND when it
// does not exist; FAILED_PRECONDITION saying why when it is not a regular
// file, is another uid's, others may read it, or cannot be read.
StatusOr<std::string> ReadSecretFile(const std::string& path, size_t max_bytes);

// Writes contents to path with mode 0600, and fsyncs it. ALREADY_EXISTS when
// path exists; FAILED_PRECONDITION saying why it cannot be written
// (nothing is left behind then).
Status WriteSecretFile(const std::string& path, const std::string& contents);

}  // namespace rdmad

#endif  // RDMAD_COMMON_SECRET_FILE_H_
