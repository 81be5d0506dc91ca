// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/client_log.h"

#include <unistd.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "rdmad/log.h"

namespace rdmad {
namespace {

using internal::ClientLog;

// Captures what the library logs while it lives; restores the defaults.
class CapturedLog {
 public:
  CapturedLog() {
    SetClientLogSink([this](LogLevel level, std::string_view message) {
      lines.emplace_back(level, std::string(message));
    });
  }
  ~CapturedLog() {
    SetClientLogSink(nullptr);
    SetClientLogLevel(LogLevel::kWarn);
  }
  std::vector<std::pair<LogLevel, std::string>> lines;
};

TEST(ClientLogTest, NamesAndParsesEveryLevel) {
  for (LogLevel l : {LogLevel::kTrace, LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarn,
                     LogLevel::kError, LogLevel::kOff}) {
    EXPECT_EQ(ParseLogLevel(LogLevelName(l)), l);
  }
  EXPECT_EQ(ParseLogLevel("warning"), LogLevel::kWarn);
  EXPECT_EQ(ParseLogLevel("loud"), std::nullopt);
  EXPECT_EQ(ParseLogLevel(""), std::nullopt);
}

TEST(ClientLogTest, QuietByDefaultAndTheApplicationSetsLevelAndSink) {
  if (std::getenv("RDMAD_CLIENT_LOG_LEVEL") != nullptr) GTEST_SKIP() << "the environment sets it";
  EXPECT_EQ(ClientLogLevel(), LogLevel::kWarn);
  CapturedLog log;
  ClientLog().info("channel {}: TCP", 7);
  ClientLog().warn("pool {}: refill failed", "B");
  ASSERT_EQ(log.lines.size(), 1u);
  EXPECT_EQ(log.lines[0].first, LogLevel::kWarn);
  EXPECT_EQ(log.lines[0].second, "pool B: refill failed");

  SetClientLogLevel(LogLevel::kDebug);
  EXPECT_EQ(ClientLogLevel(), LogLevel::kDebug);
  ClientLog().debug("detail");
  ClientLog().trace("finer");
  ASSERT_EQ(log.lines.size(), 2u);
  EXPECT_EQ(log.lines[1], std::make_pair(LogLevel::kDebug, std::string("detail")));

  SetClientLogLevel(LogLevel::kOff);
  ClientLog().error("nobody hears this");
  EXPECT_EQ(log.lines.size(), 2u);
}

TEST(ClientLogTest, TheDefaultSinkIsStderrNeverStdout) {
  if (std::getenv("RDMAD_CLIENT_LOG_LEVEL") != nullptr) GTEST_SKIP() << "the environment sets it";
  std::fflush(stdout);
  std::fflush(stderr);
  int saved_out = dup(1), saved_err = dup(2);
  FILE* out = std::tmpfile();
  FILE* err = std::tmpfile();
  dup2(fileno(out), 1);
  dup2(fileno(err), 2);
  ClientLog().info("an info line");
  ClientLog().warn("a warning");
  ClientLog().flush();
  std::fflush(stdout);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  close(saved_out);
  close(saved_err);
  auto read_all = [](FILE* f) {
    std::string s;
    std::rewind(f);
    for (int c; (c = std::fgetc(f)) != EOF;) s.push_back(static_cast<char>(c));
    std::fclose(f);
    return s;
  };
  EXPECT_EQ(read_all(out), "");
  EXPECT_EQ(read_all(err), "rdmadclient: warn: a warning\n");
}

}  // namespace
}  // namespace rdmad
