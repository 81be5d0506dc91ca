// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/lifecycle/logging.h"

#include <cstdlib>
#include <memory>
#include <string>

#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace rdmad {
namespace {

// %* expands to the syslog priority of the message's level, e.g. "<6>".
class SyslogPriorityFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    static constexpr const char* kPriority[] = {"<7>", "<7>", "<6>", "<4>", "<3>", "<2>", "<6>"};
    const char* p = kPriority[static_cast<int>(msg.level)];
    dest.append(p, p + 3);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<SyslogPriorityFlag>();
  }
};

}  // namespace

void SetupLogging(LogStyle style) {
  if (style == LogStyle::kAuto) {
    const char* journal = std::getenv("JOURNAL_STREAM");
    style = (journal && *journal) ? LogStyle::kJournal : LogStyle::kTerminal;
  }
  auto logger =
      std::make_shared<spdlog::logger>("rdmad", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  if (style == LogStyle::kJournal) {
    formatter->add_flag<SyslogPriorityFlag>('*').set_pattern("%*%v");
  } else {
    formatter->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%L%$ %v");
  }
  logger->set_formatter(std::move(formatter));
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(std::move(logger));
}

Status SetLogLevel(std::string_view level) {
  auto parsed = spdlog::level::from_str(std::string(level));
  if (parsed == spdlog::level::off && level != "off") {
    return Status::InvalidArgument("unknown log level \"" + std::string(level) + "\"");
  }
  spdlog::set_level(parsed);
  return Status::Ok();
}

}  // namespace rdmad
