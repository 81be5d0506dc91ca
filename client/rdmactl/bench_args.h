// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// `rdmactl bench`'s command line: which test, message sizes, how long,
// how many channels in parallel, and the transport. Sizes take the
// suffixes K/KiB, M/MiB, G/GiB (powers of 1024, as perftest's -s).
//
//   rdmactl bench PEER [--test lat|bw|write|read|kv|idle|connect]
//                      [--size N | --sizes N,N,...] [--iters N | --duration S]
//                      [--channels N] [--depth N] [--blocks N] [--warmup N]
//                      [--tcp] [--pooled]
//
// --test kv: the KV-cache pattern. Each iteration is one Submit of --blocks
// one-sided writes of --size bytes, scattered over the server's region,
// with a notification; it ends when the server's echo of the notification
// arrives.
//
// --pooled (connect only): the Connects take warm channels from this
// process's pool (Client::Prewarm of --channels) and Close gives them back.
//
// Defaults follow perftest: lat 2 bytes x 1000 round trips; bw, write and
// read 65536 bytes x 5000 messages; kv 100 batches of 1024 x 16384 bytes;
// idle 5 s; connect 100 cycles.
//
// Thread safety: pure functions over values.

#ifndef RDMAD_CLIENT_RDMACTL_BENCH_ARGS_H_
#define RDMAD_CLIENT_RDMACTL_BENCH_ARGS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "rdmad/status.h"

namespace rdmactl {

enum class BenchTest { kLat, kBw, kWrite, kRead, kKv, kIdle, kConnect };

// "lat", "bw", "write", "read", "kv", "idle", "connect".
const char* BenchTestName(BenchTest test);

inline constexpr uint64_t kBenchMaxSize = uint64_t(1) << 30;  // a channel's message limit
inline constexpr uint32_t kBenchMaxChannels = 64;             // the echo service's limit
inline constexpr uint32_t kBenchMaxDepth = 4096;              // write/read ops in flight
inline constexpr uint32_t kBenchMaxBlocks = 65536;            // kv: ops per batch
inline constexpr double kBenchMaxSeconds = 24 * 3600;
inline constexpr uint64_t kBenchLatWarmup = 16;  // lat: verified round trips before timing

struct BenchArgs {
  std::string peer;
  BenchTest test = BenchTest::kLat;
  std::vector<uint64_t> sizes;  // bytes; at least one (lat, bw, write, read)
  uint64_t iters = 0;           // per size and channel; 0 with a duration
  double duration_s = 0;        // > 0: run each size this long instead
  uint32_t channels = 1;
  uint32_t depth = 1;   // write, read: single-op Submit batches in flight per channel
  uint32_t blocks = 0;  // kv: writes per batch (1024 by default; 0 for other tests)
  // lat: verified round trips per channel before the timed ones
  // (kBenchLatWarmup by default; 0 for other tests). An anchor that warms
  // up longer (ucx_perftest: 10,000) is matched with the same count.
  uint64_t warmup = 0;
  bool force_tcp = false;
  bool pooled = false;  // connect: warm channels from the pool
};

// "4096", "4K", "4KiB", "1M", "1MiB", "1G". INVALID_ARGUMENT otherwise, or
// above kBenchMaxSize.
rdmad::StatusOr<uint64_t> ParseByteSize(std::string_view text);

// A whole or decimal number of seconds, > 0 and at most kBenchMaxSeconds.
rdmad::StatusOr<double> ParseSeconds(std::string_view text);

// What the options give as text, checked after parsing (the sizes and
// the duration take suffixes and fractions).
struct BenchFlags {
  std::string test = "lat";
  std::string size;
  std::string sizes;
  std::string duration;
};

// Declares PEER and the options on the bench verb (CLI11 checks the
// numbers' ranges and which options exclude which).
void DeclareBenchArgs(CLI::App& verb, BenchArgs* a, BenchFlags* f);
// After parsing: the sizes, the duration and the test's defaults; the
// checks across options. INVALID_ARGUMENT with the message rdmactl prints.
rdmad::Status FinishBenchArgs(const BenchFlags& f, BenchArgs* a);

// Declare, parse and Finish in one (the verb's arguments after "bench").
rdmad::StatusOr<BenchArgs> ParseBenchArgs(const std::vector<std::string>& args);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_BENCH_ARGS_H_
