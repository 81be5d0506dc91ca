// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "tests/fuzz/fuzz_support.h"

#include <google/protobuf/stubs/logging.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace rdmad::fuzz {

void FuzzInit() {
  static std::once_flag once;
  std::call_once(once, [] {
    // RDMAD_FUZZ_LOG=1 keeps the daemon's log (to see what an input does).
    const char* log = std::getenv("RDMAD_FUZZ_LOG");
    spdlog::set_level(log != nullptr && *log == '1' ? spdlog::level::debug : spdlog::level::off);
    // "String field ... contains invalid UTF-8": a parse failure, said once per input.
    google::protobuf::SetLogHandler(
        [](google::protobuf::LogLevel, const char*, int, const std::string&) {});
    setenv("GRPC_VERBOSITY", "NONE", 0);
    // The test-only protocol override must not leak in from the environment.
    unsetenv("RDMAD_TEST_PROTOCOL_MAJOR");
  });
}

void CheckFailed(const char* file, int line, const char* what, const std::string& detail) {
  std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s%s%s\n", file, line, what,
               detail.empty() ? "" : ": ", detail.c_str());
  std::fflush(stderr);
  std::abort();
}

void CheckStatus(const Status& status) {
  if (status.ok()) return;
  int code = static_cast<int>(status.code());
  FUZZ_CHECK_MSG(code > 0 && code <= static_cast<int>(StatusCode::kUnauthenticated),
                 status.ToString());
  FUZZ_CHECK_MSG(!status.message().empty(), status.ToString());
}

bool Script::Next(uint8_t* op, std::string_view* payload) {
  if (left_ == 0 || pos_ >= size_) return false;
  --left_;
  *op = data_[pos_++];
  size_t length = 0;
  if (pos_ < size_) length = data_[pos_++];
  if (pos_ < size_) length |= size_t(data_[pos_++]) << 8;
  length = std::min(length, size_ - pos_);
  *payload = std::string_view(reinterpret_cast<const char*>(data_ + pos_), length);
  pos_ += length;
  return true;
}

bool Parse(std::string_view payload, google::protobuf::MessageLite* message) {
  return message->ParseFromArray(payload.data(), static_cast<int>(payload.size()));
}

uint32_t RawU32(std::string_view payload, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4 && at + i < payload.size(); ++i) {
    v |= uint32_t(static_cast<uint8_t>(payload[at + i])) << (8 * i);
  }
  return v;
}

void AppendRecord(std::string* out, uint8_t op, std::string_view payload) {
  size_t length = std::min<size_t>(payload.size(), 0xFFFF);
  out->push_back(static_cast<char>(op));
  out->push_back(static_cast<char>(length & 0xFF));
  out->push_back(static_cast<char>(length >> 8));
  out->append(payload.substr(0, length));
}

void AppendRecord(std::string* out, uint8_t op, const google::protobuf::MessageLite& message) {
  AppendRecord(out, op, message.SerializeAsString());
}

}  // namespace rdmad::fuzz
