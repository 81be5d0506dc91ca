// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The measuring loops of `rdmactl bench`, each on one channel that is
// already open to the peer's echo service in the right mode
// (common/echo_protocol.h):
//
//   RunLatency   ECHO ping-pong: Send, then Recv (or RecvInto) of the reply; each sample
//                is half the round trip, as ib_send_lat reports, timed with
//                the tick clock (bench_clock.h) as perftest and UCX time.
//   RunSink      SINK: messages sent from a registered region (no copy on
//                the RDMA path; Send returns when the region may be reused)
//                while the server's counts come back every SinkAckEvery
//                messages; at most SinkWindow messages unacknowledged. The
//                timeline is the counts, as they arrive.
//   RunOneSided  REGION: Channel::Write or Read of size bytes, again and
//                again, into / from offset 0 of the server's region; each
//                call returns when its operation completed.
//   RunOneSidedRing  the same with N in flight (perftest's tx depth: 128):
//                a ring of N prepared single-op batches, made before the
//                clock starts as perftest builds its work requests before
//                its own, each posted again once the oldest is waited for.
//   RunKv        REGION: the KV-cache pattern. One Submit of blocks writes
//                of size bytes, from the local region in order to slots
//                scattered over the server's (2 x blocks slots), with a
//                notification (the batch's number); the iteration ends when
//                the server's echo of it arrives. Each sample is that time.
//
// Errors: the channel's status; DATA_LOSS for a reply of the wrong size;
// DEADLINE_EXCEEDED when the server stays silent for kReplyTimeout.
//
// Thread safety: each call uses its channel from the calling thread only
// (both sides of it); calls on different channels may run at once.

#ifndef RDMAD_CLIENT_RDMACTL_BENCH_RUNNER_H_
#define RDMAD_CLIENT_RDMACTL_BENCH_RUNNER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "client/rdmactl/bench_stats.h"
#include "client/rdmactl/latency_stats.h"
#include "rdmad/channel.h"
#include "rdmad/status.h"

namespace rdmactl {

using BenchClock = std::chrono::steady_clock;

inline constexpr std::chrono::milliseconds kReplyTimeout{30000};

// What one channel measured. start (below): the common start of every
// channel of the run; the timeline's times are relative to it.
struct ChannelResult {
  LatencyStats latency_us;  // RunLatency: half round trips; RunKv: batches; connect: each Connect
  Timeline timeline;        // RunSink, RunOneSided, RunKv
  uint64_t iters = 0;       // round trips, messages or operations
  double seconds = 0;       // from start to the last completion
};

// SINK's param for size-byte messages: a count every ~1 MiB, 1 to 256
// messages.
uint64_t SinkAckEvery(size_t size);
// Unacknowledged messages allowed: 8 counts' worth, so that the counts
// waiting to be read never fill this side's receive ring.
uint64_t SinkWindow(uint64_t ack_every);

// replies: a registered region of at least size bytes (at least 1) the
// replies are received into (RecvInto, no allocation per message; the
// echo service was told the longest message); null: Recv.
rdmad::StatusOr<ChannelResult> RunLatency(rdmad::Channel& channel, size_t size,
                                          const BenchLimit& limit, BenchClock::time_point start,
                                          const rdmad::MemoryRegion* replies = nullptr);
// Verifies round_trips round trips and ends the run's first-use costs
// (page faults, caches, the connect's aftermath) before anything is
// measured.
rdmad::Status WarmUpLatency(rdmad::Channel& channel, size_t size, uint64_t round_trips);

// channel is in SINK mode with param ack_every; region holds >= size bytes.
// With a limit in iterations, that count is rounded up to a multiple of
// ack_every (every message is acknowledged).
rdmad::StatusOr<ChannelResult> RunSink(rdmad::Channel& channel, const rdmad::MemoryRegion& region,
                                       size_t size, uint64_t ack_every, const BenchLimit& limit,
                                       BenchClock::time_point start);

// channel is in REGION mode; remote is the server's region, local one of
// this side's, both >= size bytes.
rdmad::StatusOr<ChannelResult> RunOneSided(rdmad::Channel& channel, bool write,
                                           const rdmad::MemoryRegion& local,
                                           const rdmad::RegionDescriptor& remote, size_t size,
                                           const BenchLimit& limit, BenchClock::time_point start);
// depth prepared single-op batches of the same Write or Read (as
// RunOneSided's), for RunOneSidedRing.
using OneSidedRing = std::vector<std::unique_ptr<rdmad::PreparedTransfer>>;
rdmad::StatusOr<OneSidedRing> PrepareOneSided(rdmad::Channel& channel, bool write,
                                              const rdmad::MemoryRegion& local,
                                              const rdmad::RegionDescriptor& remote, size_t size,
                                              uint32_t depth);
// ring from PrepareOneSided (at least one batch) of size-byte ops, none of
// them posted yet.
rdmad::StatusOr<ChannelResult> RunOneSidedRing(OneSidedRing& ring, size_t size,
                                               const BenchLimit& limit,
                                               BenchClock::time_point start);
// channel is in REGION mode with a region of at least 2 x blocks x size
// bytes; local holds blocks x size.
rdmad::StatusOr<ChannelResult> RunKv(rdmad::Channel& channel, const rdmad::MemoryRegion& local,
                                     const rdmad::RegionDescriptor& remote, size_t size,
                                     uint32_t blocks, const BenchLimit& limit,
                                     BenchClock::time_point start);
rdmad::Status WarmUpKv(rdmad::Channel& channel, const rdmad::MemoryRegion& local,
                       const rdmad::RegionDescriptor& remote, size_t size, uint32_t blocks);

rdmad::Status WarmUpOneSided(rdmad::Channel& channel, bool write, const rdmad::MemoryRegion& local,
                             const rdmad::RegionDescriptor& remote, size_t size);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_BENCH_RUNNER_H_
