// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The library's logger (rdmad/log.h): every file of the client library logs
// through ClientLog(), never spdlog's default logger, which belongs to the
// application.
//
// Thread safety: ClientLog() and the logger are thread-safe.

#ifndef RDMAD_CLIENT_SRC_CLIENT_LOG_H_
#define RDMAD_CLIENT_SRC_CLIENT_LOG_H_

#include <spdlog/logger.h>

namespace rdmad::internal {

spdlog::logger& ClientLog();

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_CLIENT_LOG_H_
