// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The client library's log in the test binaries: while a test runs, every
// message the library logs at debug level and above is kept (the last
// kMaxLines of them), and printed if that test fails, after the logs of
// the daemons it started (tests/integration/daemon_process.h prints
// those). Linked into a GoogleTest binary, it registers itself before
// main; the ClientLogTest suite, which checks the library's defaults,
// runs with them.
//
// Thread safety: the sink is called from any of the library's threads.

#include <cstdio>
#include <deque>
#include <mutex>
#include <string>

#include "gtest/gtest.h"
#include "rdmad/log.h"

namespace rdmad {
namespace {

class LibraryLog final : public ::testing::EmptyTestEventListener {
 public:
  static constexpr size_t kMaxLines = 4000;

  void OnTestStart(const ::testing::TestInfo& test) override {
    {
      std::lock_guard lock(mu_);
      lines_.clear();
      dropped_ = 0;
    }
    if (std::string(test.test_suite_name()).rfind("ClientLog", 0) == 0) {
      SetClientLogSink(nullptr);  // that suite tests the defaults
      SetClientLogLevel(LogLevel::kWarn);
      return;
    }
    SetClientLogLevel(LogLevel::kDebug);
    SetClientLogSink([this](LogLevel level, std::string_view message) {
      std::lock_guard lock(mu_);
      if (lines_.size() == kMaxLines) {
        lines_.pop_front();
        ++dropped_;
      }
      lines_.push_back(std::string(LogLevelName(level)) + ": " + std::string(message));
    });
  }

  void OnTestProgramEnd(const ::testing::UnitTest&) override {
    SetClientLogSink(nullptr);  // this listener goes before the library's last words
  }

  void OnTestEnd(const ::testing::TestInfo& test) override {
    std::lock_guard lock(mu_);
    if (!test.result()->Failed() || (lines_.empty() && dropped_ == 0)) return;
    std::printf("--- the client library's log in %s.%s (%zu lines", test.test_suite_name(),
                test.name(), lines_.size());
    if (dropped_ > 0) std::printf(", %zu earlier ones dropped", dropped_);
    std::printf(") ---\n");
    for (const std::string& line : lines_) std::printf("rdmadclient: %s\n", line.c_str());
    std::printf("--- end of the client library's log ---\n");
    std::fflush(stdout);
  }

 private:
  std::mutex mu_;
  std::deque<std::string> lines_;  // guarded by mu_
  size_t dropped_ = 0;             // guarded by mu_
};

const bool kRegistered = [] {
  // The listener list owns it; it lives until the process exits.
  ::testing::UnitTest::GetInstance()->listeners().Append(new LibraryLog);
  return true;
}();

}  // namespace
}  // namespace rdmad
