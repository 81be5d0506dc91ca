// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Shared by the fuzz targets (docs/testing.md, "Fuzzing"). A target's input
// is either one message (the bytes parsed as it) or a script of calls:
//
//   record := op:u8 length:u16 (little-endian) payload:length bytes
//
// The op picks the call (the target's table, op modulo its size) and the
// payload is the call's request message, parsed with ParseFromArray (a
// payload that does not parse is skipped, as gRPC would refuse it). A
// record that runs past the end takes what is left. Framing never fails,
// so a mutation that breaks a length still yields calls.
//
// FUZZ_CHECK(cond) aborts with the condition's text: the way a target says
// that a rule ("every error is a status with a message", "states only move
// forward") was broken. libFuzzer and the standalone driver both report it.
//
// Thread safety: the script reader is a value; FuzzInit is idempotent.

#ifndef RDMAD_TESTS_FUZZ_FUZZ_SUPPORT_H_
#define RDMAD_TESTS_FUZZ_FUZZ_SUPPORT_H_

#include <google/protobuf/message_lite.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "rdmad/status.h"

namespace rdmad::fuzz {

// Silences logging (spdlog, protobuf, gRPC; RDMAD_FUZZ_LOG=1 keeps the
// daemon's spdlog log); call at the start of every input.
void FuzzInit();

[[noreturn]] void CheckFailed(const char* file, int line, const char* what,
                              const std::string& detail);

#define FUZZ_CHECK(cond)                                                    \
  do {                                                                      \
    if (!(cond)) ::rdmad::fuzz::CheckFailed(__FILE__, __LINE__, #cond, ""); \
  } while (0)
#define FUZZ_CHECK_MSG(cond, detail)                                            \
  do {                                                                          \
    if (!(cond)) ::rdmad::fuzz::CheckFailed(__FILE__, __LINE__, #cond, detail); \
  } while (0)

// The rule for everything the daemon answers: OK, or a known code with a
// message saying why.
void CheckStatus(const Status& status);

class Script {
 public:
  // At most max_calls records are read (bounds the time per input).
  Script(const uint8_t* data, size_t size, size_t max_calls = 64)
      : data_(data), size_(size), left_(max_calls) {}

  // The next record; false at the end.
  bool Next(uint8_t* op, std::string_view* payload);

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  size_t left_;
};

// Parses payload as message (cleared first).
bool Parse(std::string_view payload, google::protobuf::MessageLite* message);

// A small integer read from a raw payload (0 when empty).
uint32_t RawU32(std::string_view payload, size_t at = 0);

// For the seed generator: appends one record.
void AppendRecord(std::string* out, uint8_t op, std::string_view payload);
void AppendRecord(std::string* out, uint8_t op, const google::protobuf::MessageLite& message);

}  // namespace rdmad::fuzz

#endif  // RDMAD_TESTS_FUZZ_FUZZ_SUPPORT_H_
