// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The client library's own log. The library runs inside the application (an
// inference server, say), so it is quiet there: by default it writes only
// warnings and errors, to stderr, never to stdout, and it leaves the
// application's own logging (spdlog's default logger included) alone.
//
// The application may set the level and a sink of its own, process-wide,
// here or through ClientOptions; RDMAD_CLIENT_LOG_LEVEL (trace, debug,
// info, warn, error, off) in the environment, when set, wins over both, so
// an operator can turn the library's log up without a rebuild.
//
// Thread safety: every function may be called from any thread. The sink is
// called from the library's threads, one message at a time.

#ifndef RDMAD_CLIENT_INCLUDE_RDMAD_LOG_H_
#define RDMAD_CLIENT_INCLUDE_RDMAD_LOG_H_

#include <functional>
#include <optional>
#include <string_view>

#include "rdmad/export.h"

namespace rdmad {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kOff };

// "trace", "debug", "info", "warn", "error", "off".
RDMAD_EXPORT std::string_view LogLevelName(LogLevel level);
// The level named name (as LogLevelName writes it; "warning" too), if any.
RDMAD_EXPORT std::optional<LogLevel> ParseLogLevel(std::string_view name);

// Receives each message the library logs at or above the level: one line,
// without a trailing newline.
using LogSink = std::function<void(LogLevel level, std::string_view message)>;

// The least severe level the library logs (default kWarn). Ignored while
// RDMAD_CLIENT_LOG_LEVEL is set.
RDMAD_EXPORT void SetClientLogLevel(LogLevel level);
RDMAD_EXPORT LogLevel ClientLogLevel();

// Where the library's messages go; an empty sink restores the default
// (stderr, "rdmadclient: LEVEL: message").
RDMAD_EXPORT void SetClientLogSink(LogSink sink);

}  // namespace rdmad

#endif  // RDMAD_CLIENT_INCLUDE_RDMAD_LOG_H_
