// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Logging setup: spdlog to stderr. Under systemd (JOURNAL_STREAM set, or
// forced) lines carry a "<N>" syslog priority prefix and no timestamp so
// journald keeps the levels and adds its own time.
//
// Thread safety: call SetupLogging from main before other threads start;
// SetLogLevel may be called at any time.

#ifndef RDMAD_DAEMON_LIFECYCLE_LOGGING_H_
#define RDMAD_DAEMON_LIFECYCLE_LOGGING_H_

#include <string_view>

#include "rdmad/status.h"

namespace rdmad {

enum class LogStyle { kAuto, kTerminal, kJournal };

void SetupLogging(LogStyle style);

// level: trace|debug|info|warn|error.
Status SetLogLevel(std::string_view level);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_LIFECYCLE_LOGGING_H_
