// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/bench_args.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "common/echo_protocol.h"

namespace rdmactl {
namespace {

using rdmad::Status;
using rdmad::StatusOr;

constexpr uint64_t kLatSize = 2;
constexpr uint64_t kBwSize = 65536;
constexpr uint64_t kLatIters = 1000;
constexpr uint64_t kBwIters = 5000;
constexpr uint64_t kKvSize = 16384;  // a KV-cache block
constexpr uint32_t kKvBlocks = 1024;
constexpr uint64_t kKvIters = 100;
constexpr uint64_t kConnectIters = 100;
constexpr double kIdleSeconds = 5;
constexpr uint64_t kMaxIters = 1000000000;

struct Suffix {
  const char* text;
  uint64_t factor;
};
constexpr Suffix kSuffixes[] = {
    {"", 1},
    {"K", 1ull << 10},
    {"KiB", 1ull << 10},
    {"M", 1ull << 20},
    {"MiB", 1ull << 20},
    {"G", 1ull << 30},
    {"GiB", 1ull << 30},
};

bool ParseTest(std::string_view text, BenchTest* test) {
  for (BenchTest t : {BenchTest::kLat, BenchTest::kBw, BenchTest::kWrite, BenchTest::kRead,
                      BenchTest::kKv, BenchTest::kIdle, BenchTest::kConnect}) {
    if (text == BenchTestName(t)) {
      *test = t;
      return true;
    }
  }
  return false;
}

StatusOr<std::vector<uint64_t>> ParseSizeList(std::string_view text) {
  std::vector<uint64_t> sizes;
  size_t start = 0;
  for (;;) {
    size_t comma = text.find(',', start);
    auto size = ParseByteSize(text.substr(start, comma - start));
    if (!size.ok()) return size.status();
    sizes.push_back(*size);
    if (comma == std::string_view::npos) return sizes;
    start = comma + 1;
  }
}

// --size or --sizes: one size, or a list.
Status ParseSizes(const std::string& flag, const std::string& value, BenchArgs* a) {
  auto sizes = ParseSizeList(value);
  if (!sizes.ok()) return Status::InvalidArgument(flag + ": " + sizes.status().message());
  if (flag == "--size" && sizes->size() != 1) {
    return Status::InvalidArgument("--size takes one size; --sizes takes a list");
  }
  a->sizes = std::move(sizes).value();
  return Status::Ok();
}

// Fills in what the options left open.
Status ApplyDefaults(bool has_iters, BenchArgs* a) {
  bool sized = a->test != BenchTest::kIdle && a->test != BenchTest::kConnect;
  if (!sized && !a->sizes.empty()) {
    return Status::InvalidArgument(std::string("--test ") + BenchTestName(a->test) +
                                   " takes no --size");
  }
  if (a->test == BenchTest::kIdle && has_iters) {
    return Status::InvalidArgument("--test idle takes --duration, not --iters");
  }
  if (a->test == BenchTest::kConnect && a->duration_s > 0) {
    return Status::InvalidArgument("--test connect takes --iters, not --duration");
  }
  if (a->depth > 1 && a->test != BenchTest::kWrite && a->test != BenchTest::kRead) {
    return Status::InvalidArgument("--depth goes with --test write or read only");
  }
  if (a->warmup > 0 && a->test != BenchTest::kLat) {
    return Status::InvalidArgument("--warmup goes with --test lat only");
  }
  if (a->test == BenchTest::kLat && a->warmup == 0) a->warmup = kBenchLatWarmup;
  bool kv = a->test == BenchTest::kKv;
  if (a->blocks > 0 && !kv) return Status::InvalidArgument("--blocks goes with --test kv only");
  if (kv && a->blocks == 0) a->blocks = kKvBlocks;
  if (a->pooled && a->test != BenchTest::kConnect) {
    return Status::InvalidArgument("--pooled goes with --test connect only");
  }
  if (a->pooled && a->force_tcp) {
    return Status::InvalidArgument("--pooled and --tcp: a warm channel has its transport already");
  }
  if (sized && a->sizes.empty()) {
    a->sizes = {a->test == BenchTest::kLat ? kLatSize : kv ? kKvSize : kBwSize};
  }
  if (kv) {
    // The server's region holds twice the batch (the blocks are scattered
    // over it): within what the echo service registers.
    if (std::count(a->sizes.begin(), a->sizes.end(), 0) > 0) {
      return Status::InvalidArgument("--test kv: blocks of 0 bytes");
    }
    uint64_t largest = *std::max_element(a->sizes.begin(), a->sizes.end());
    if (largest * a->blocks * 2 > rdmad::echo::kMaxRegionBytes) {
      return Status::InvalidArgument(
          "--test kv: twice --blocks x --size is " + std::to_string(largest * a->blocks * 2) +
          " bytes, above the echo service's " + std::to_string(rdmad::echo::kMaxRegionBytes));
    }
  }
  if (a->test == BenchTest::kIdle && a->duration_s == 0) a->duration_s = kIdleSeconds;
  if (a->iters == 0 && a->duration_s == 0) {
    a->iters = a->test == BenchTest::kLat       ? kLatIters
               : a->test == BenchTest::kConnect ? kConnectIters
               : kv                             ? kKvIters
                                                : kBwIters;
  }
  return Status::Ok();
}

}  // namespace

const char* BenchTestName(BenchTest test) {
  switch (test) {
    case BenchTest::kLat: return "lat";
    case BenchTest::kBw: return "bw";
    case BenchTest::kWrite: return "write";
    case BenchTest::kRead: return "read";
    case BenchTest::kKv: return "kv";
    case BenchTest::kIdle: return "idle";
    case BenchTest::kConnect: return "connect";
  }
  return "?";
}

StatusOr<uint64_t> ParseByteSize(std::string_view text) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, 10);
  std::string_view suffix(end, size_t(text.data() + text.size() - end));
  if (ec == std::errc() && end != text.data()) {
    for (const Suffix& s : kSuffixes) {
      if (suffix != s.text) continue;
      if (v > kBenchMaxSize / s.factor) {
        return Status::InvalidArgument("size " + std::string(text) +
                                       " is above the channel's limit of 1 GiB");
      }
      return v * s.factor;
    }
  }
  return Status::InvalidArgument("\"" + std::string(text) +
                                 "\" is not a size (bytes, or with K, M, G: 4K, 1MiB)");
}

StatusOr<double> ParseSeconds(std::string_view text) {
  std::string copy(text);
  char* end = nullptr;
  double v = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size() || !std::isfinite(v) || v <= 0 ||
      v > kBenchMaxSeconds) {
    return Status::InvalidArgument("\"" + copy + "\" is not a duration in seconds (above 0, " +
                                   "at most 86400)");
  }
  return v;
}

void DeclareBenchArgs(CLI::App& verb, BenchArgs* a, BenchFlags* f) {
  verb.add_option("PEER", a->peer, "the peer whose echo service is measured")->required();
  verb.add_option("--test", f->test, "lat, bw, write, read, kv, idle or connect (lat)")
      ->check(CLI::IsMember({"lat", "bw", "write", "read", "kv", "idle", "connect"}));
  CLI::Option* size =
      verb.add_option("--size", f->size, "bytes a message (4K, 1MiB: powers of 1024)");
  CLI::Option* sizes = verb.add_option("--sizes", f->sizes, "sizes, comma-separated: 2,4K,1M");
  size->excludes(sizes);
  CLI::Option* iters = verb.add_option("--iters", a->iters, "messages per size and channel")
                           ->check(CLI::Range(uint64_t(1), kMaxIters));
  CLI::Option* duration =
      verb.add_option("--duration", f->duration, "seconds per size instead of --iters");
  iters->excludes(duration);
  verb.add_option("--channels", a->channels, "channels at once, a thread each (1)")
      ->check(CLI::Range(uint32_t(1), kBenchMaxChannels));
  verb.add_option("--depth", a->depth, "write, read: batches in flight per channel (1)")
      ->check(CLI::Range(uint32_t(1), kBenchMaxDepth));
  verb.add_option("--blocks", a->blocks, "kv: writes per batch (1024)")
      ->check(CLI::Range(uint32_t(1), kBenchMaxBlocks));
  verb.add_option(
          "--warmup", a->warmup,
          "lat: round trips before the timed ones (" + std::to_string(kBenchLatWarmup) + ")")
      ->check(CLI::Range(uint64_t(1), kMaxIters));
  verb.add_flag("--tcp", a->force_tcp, "TCP even where RDMA would do");
  verb.add_flag("--pooled", a->pooled, "connect: warm channels from this process's pool");
}

Status FinishBenchArgs(const BenchFlags& f, BenchArgs* a) {
  if (!ParseTest(f.test, &a->test)) return Status::InvalidArgument("--test: " + f.test);
  if (!f.size.empty()) RDMAD_RETURN_IF_ERROR(ParseSizes("--size", f.size, a));
  if (!f.sizes.empty()) RDMAD_RETURN_IF_ERROR(ParseSizes("--sizes", f.sizes, a));
  if (!f.duration.empty()) {
    auto s = ParseSeconds(f.duration);
    if (!s.ok()) return Status::InvalidArgument("--duration: " + s.status().message());
    a->duration_s = *s;
  }
  return ApplyDefaults(a->iters != 0, a);
}

StatusOr<BenchArgs> ParseBenchArgs(const std::vector<std::string>& args) {
  CLI::App app("bench", "bench");
  BenchArgs a;
  BenchFlags f;
  DeclareBenchArgs(app, &a, &f);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return Status::InvalidArgument(e.what());
  }
  RDMAD_RETURN_IF_ERROR(FinishBenchArgs(f, &a));
  return a;
}

}  // namespace rdmactl
