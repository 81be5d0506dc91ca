// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// What bench_session.cc and bench_session_idle.cc share: a benchmark
// channel with its registered memory, opening N of them, running a loop on
// N channels at once, and the idle and connect tests.
//
// Thread safety: a BenchChannel is used by one thread at a time;
// RunParallel runs fn(i, start) on thread i, all released together.

#ifndef RDMAD_CLIENT_RDMACTL_BENCH_SESSION_INTERNAL_H_
#define RDMAD_CLIENT_RDMACTL_BENCH_SESSION_INTERNAL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "client/rdmactl/bench_runner.h"
#include "client/rdmactl/bench_session.h"
#include "common/echo_protocol.h"
#include "common/echo_region.h"

namespace rdmactl {

// A channel to the echo service, the server's region (REGION mode) and a
// local registered region. Closes the channel when destroyed.
struct BenchChannel {
  BenchChannel() = default;
  BenchChannel(BenchChannel&&) = default;
  BenchChannel& operator=(BenchChannel&&) = default;
  ~BenchChannel();

  // Maps bytes of memory as the echo service maps its REGION (page-aligned,
  // as perftest's buffers), touches every page and registers it on the
  // channel.
  rdmad::Status Register(uint64_t bytes);

  std::unique_ptr<rdmad::Channel> channel;
  std::unique_ptr<rdmad::echo::RegionMemory> memory;
  std::unique_ptr<rdmad::MemoryRegion> region;  // over memory
  rdmad::RegionDescriptor remote;
};

// Opens args.channels channels in header's mode, one after the other, each
// with a local region of region_bytes (none for 0). Failures to open have
// EchoOpenError's text.
rdmad::StatusOr<std::vector<BenchChannel>> OpenChannels(rdmad::Client& client,
                                                        const BenchArgs& args,
                                                        const rdmad::echo::Header& header,
                                                        uint64_t region_bytes);

// fn(i, start) for i in [0, n) on n threads (inline for n = 1), released at
// once; start is that moment.
std::vector<rdmad::StatusOr<ChannelResult>> RunParallel(
    size_t n,
    const std::function<rdmad::StatusOr<ChannelResult>(size_t, BenchClock::time_point)>& fn);

// bench_session_idle.cc: fill report->idle / report->connect and channel.
rdmad::Status RunIdle(rdmad::Client& client, BenchReport* report);
rdmad::Status RunConnect(rdmad::Client& client, BenchReport* report);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_BENCH_SESSION_INTERNAL_H_
