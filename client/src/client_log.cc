// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/client_log.h"

#include <spdlog/sinks/base_sink.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>

#include "rdmad/log.h"

namespace rdmad {
namespace internal {
namespace {

LogLevel FromSpdlog(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace: return LogLevel::kTrace;
    case spdlog::level::debug: return LogLevel::kDebug;
    case spdlog::level::info: return LogLevel::kInfo;
    case spdlog::level::warn: return LogLevel::kWarn;
    case spdlog::level::err:
    case spdlog::level::critical: return LogLevel::kError;
    default: return LogLevel::kOff;
  }
}

spdlog::level::level_enum ToSpdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace: return spdlog::level::trace;
    case LogLevel::kDebug: return spdlog::level::debug;
    case LogLevel::kInfo: return spdlog::level::info;
    case LogLevel::kWarn: return spdlog::level::warn;
    case LogLevel::kError: return spdlog::level::err;
    case LogLevel::kOff: return spdlog::level::off;
  }
  return spdlog::level::warn;
}

// The application's sink if it set one, else stderr. base_sink serialises
// the calls (its mutex), so the sink sees one message at a time.
class ClientSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  void Set(LogSink sink) {
    std::lock_guard lock(mutex_);
    sink_ = std::move(sink);
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::string_view text(msg.payload.data(), msg.payload.size());
    LogLevel level = FromSpdlog(msg.level);
    if (sink_) return sink_(level, text);
    std::string line = "rdmadclient: " + std::string(LogLevelName(level)) + ": ";
    line.append(text).push_back('\n');
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
  void flush_() override { std::fflush(stderr); }

 private:
  LogSink sink_;  // guarded by mutex_
};

struct State {
  std::shared_ptr<ClientSink> sink = std::make_shared<ClientSink>();
  spdlog::logger logger{"rdmadclient", sink};
  bool env_level = false;  // RDMAD_CLIENT_LOG_LEVEL set: it wins

  State() {
    logger.set_level(spdlog::level::warn);
    const char* env = std::getenv("RDMAD_CLIENT_LOG_LEVEL");
    if (env == nullptr || *env == '\0') return;
    if (std::optional<LogLevel> level = ParseLogLevel(env)) {
      logger.set_level(ToSpdlog(*level));
      env_level = true;
    } else {
      logger.warn(
          "RDMAD_CLIENT_LOG_LEVEL={} is not a level (trace, debug, info, warn, error, "
          "off); logging at warn",
          env);
    }
  }
};

State& GetState() {
  static State* state = new State;  // never destroyed: threads may log at exit
  return *state;
}

}  // namespace

spdlog::logger& ClientLog() { return GetState().logger; }

}  // namespace internal

std::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace: return "trace";
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
    case LogLevel::kOff: return "off";
  }
  return "?";
}

std::optional<LogLevel> ParseLogLevel(std::string_view name) {
  for (LogLevel l : {LogLevel::kTrace, LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn,
                     LogLevel::kError, LogLevel::kOff}) {
    if (name == LogLevelName(l)) return l;
  }
  if (name == "warning") return LogLevel::kWarn;
  return std::nullopt;
}

void SetClientLogLevel(LogLevel level) {
  internal::State& state = internal::GetState();
  if (!state.env_level) state.logger.set_level(internal::ToSpdlog(level));
}

LogLevel ClientLogLevel() { return internal::FromSpdlog(internal::GetState().logger.level()); }

void SetClientLogSink(LogSink sink) { internal::GetState().sink->Set(std::move(sink)); }

}  // namespace rdmad
