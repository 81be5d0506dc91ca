// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// A whole `rdmactl bench` run against a peer's echo service: opens the
// channels the test needs (--channels N of them, one after the other),
// runs the loops of bench_runner.h on all of them at once (a thread per
// channel, started together) for each size, and sums the results:
//
//   lat          N ECHO channels, reused for every size; the half round
//                trips of all channels in one distribution.
//   bw           per size, N SINK channels (the ack interval depends on
//                the size), each sending from its own registered region.
//   write, read  N REGION channels of the largest size, each with its own
//                registered local region.
//   idle         N ECHO channels (one verified round trip each), each
//                blocked in Recv for 1 s (not measured: the process
//                settles), then for the duration: the CPU time of the whole
//                process (getrusage) over the wall time.
//   connect      after one untimed channel (which waits for the peer
//                session to come up), N threads each Connect and Close
//                `iters` channels in turn; the time of each Connect.
//
// Thread safety: RunBench uses the client from several threads (allowed
// by rdmad::Client) and each channel from one thread at a time.

#ifndef RDMAD_CLIENT_RDMACTL_BENCH_SESSION_H_
#define RDMAD_CLIENT_RDMACTL_BENCH_SESSION_H_

#include <cstdint>
#include <vector>

#include "client/rdmactl/bench_args.h"
#include "client/rdmactl/bench_stats.h"
#include "client/rdmactl/latency_stats.h"
#include "rdmad/client.h"

namespace rdmactl {

// One size, every channel together.
struct SizeResult {
  uint64_t size = 0;
  uint64_t iters = 0;      // round trips, messages or operations, all channels
  double seconds = 0;      // the longest channel's run
  LatencySummary latency;  // lat: half round trips, µs
  Throughput throughput;   // bw, write, read
};

struct IdleResult {
  double wall_s = 0, user_s = 0, system_s = 0;
  double cpu_percent = 0;  // of one core
};

struct ConnectResult {
  uint64_t cycles = 0;  // all threads
  double seconds = 0;   // wall time of every cycle, Close included
  double per_second = 0;
  LatencySummary handshake;  // each Connect call, µs
  bool pooled = false;       // Connect took warm channels (--pooled)
};

struct BenchReport {
  BenchArgs args;
  rdmad::ChannelInfo channel;  // the first channel opened
  std::vector<SizeResult> sizes;
  IdleResult idle;
  ConnectResult connect;
};

// Runs args.test. A failure to open a channel has EchoOpenError's text; a
// failure during a run names the size ("65536 bytes, channel 2: ...").
rdmad::StatusOr<BenchReport> RunBench(rdmad::Client& client, const BenchArgs& args);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_BENCH_SESSION_H_
