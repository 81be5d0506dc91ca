// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RunBench: the message, one-sided and KV-cache tests. idle and connect are in
// bench_session_idle.cc.

#include "client/rdmactl/bench_session.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <latch>
#include <memory>
#include <string>
#include <thread>

#include "client/rdmactl/bench_runner.h"
#include "client/rdmactl/bench_session_internal.h"
#include "client/rdmactl/echo_client.h"

namespace rdmactl {
namespace {

using rdmad::Status;
using rdmad::StatusOr;
namespace echo = rdmad::echo;
using echo::Mode;

// Prefixes a run's failure with the size and the channel.
Status InRun(uint64_t size, size_t channel, size_t channels, const Status& status) {
  std::string where = std::to_string(size) + " bytes";
  if (channels > 1) where += ", channel " + std::to_string(channel + 1);
  return Status(status.code(), where + ": " + status.message());
}

// Sums what the channels measured at one size.
StatusOr<SizeResult> Combine(uint64_t size, const std::vector<StatusOr<ChannelResult>>& results) {
  SizeResult out;
  out.size = size;
  LatencyStats all;
  std::vector<Timeline> timelines;
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i].ok()) return InRun(size, i, results.size(), results[i].status());
    const ChannelResult& r = *results[i];
    out.iters += r.iters;
    out.seconds = std::max(out.seconds, r.seconds);
    for (double us : r.latency_us.samples()) all.Add(us);
    timelines.push_back(r.timeline);
  }
  out.latency = all.Summarize();
  out.throughput = Summarize(MergeTimelines(timelines), out.seconds);
  return out;
}

BenchLimit LimitOf(const BenchArgs& a) { return {a.iters, a.duration_s}; }

// Warms every channel up (untimed, in turn), then runs them all at once
// and sums what they measured.
StatusOr<SizeResult> WarmThenRun(
    std::vector<BenchChannel>& channels, uint64_t size,
    const std::function<Status(BenchChannel&)>& warm,
    const std::function<StatusOr<ChannelResult>(BenchChannel&, BenchClock::time_point)>& run) {
  for (size_t i = 0; i < channels.size(); ++i) {
    Status s = warm(channels[i]);
    if (!s.ok()) return InRun(size, i, channels.size(), s);
  }
  return Combine(size, RunParallel(channels.size(), [&](size_t i, BenchClock::time_point start) {
                   return run(channels[i], start);
                 }));
}

StatusOr<SizeResult> LatencyAt(std::vector<BenchChannel>& channels, uint64_t size,
                               const BenchLimit& limit, uint64_t warmup) {
  return WarmThenRun(
      channels, size, [&](BenchChannel& c) { return WarmUpLatency(*c.channel, size, warmup); },
      [&](BenchChannel& c, BenchClock::time_point start) {
        return RunLatency(*c.channel, size, limit, start, c.region.get());
      });
}

StatusOr<SizeResult> SinkAt(rdmad::Client& client, uint64_t size, BenchReport* report) {
  const BenchArgs& a = report->args;
  uint64_t every = SinkAckEvery(size);
  auto channels =
      OpenChannels(client, a, {echo::kVersion, Mode::kSink, every}, std::max<uint64_t>(size, 1));
  if (!channels.ok()) return channels.status();
  std::vector<BenchChannel>& c = *channels;
  if (report->sizes.empty()) report->channel = c.front().channel->info();
  return Combine(size, RunParallel(c.size(), [&](size_t i, BenchClock::time_point start) {
                   return RunSink(*c[i].channel, *c[i].region, size, every, LimitOf(a), start);
                 }));
}

// With depth > 1 each channel's ring is prepared while it warms up, before
// the clock starts.
StatusOr<SizeResult> OneSidedAt(std::vector<BenchChannel>& channels, bool write, uint64_t size,
                                const BenchLimit& limit, uint32_t depth) {
  std::vector<OneSidedRing> rings(channels.size());
  auto ring_of = [&](BenchChannel& c) -> OneSidedRing& { return rings[&c - channels.data()]; };
  return WarmThenRun(
      channels, size,
      [&](BenchChannel& c) -> Status {
        RDMAD_RETURN_IF_ERROR(WarmUpOneSided(*c.channel, write, *c.region, c.remote, size));
        if (depth <= 1) return Status::Ok();
        auto ring = PrepareOneSided(*c.channel, write, *c.region, c.remote, size, depth);
        if (!ring.ok()) return ring.status();
        ring_of(c) = std::move(ring).value();
        return Status::Ok();
      },
      [&](BenchChannel& c, BenchClock::time_point start) {
        if (depth <= 1)
          return RunOneSided(*c.channel, write, *c.region, c.remote, size, limit, start);
        return RunOneSidedRing(ring_of(c), size, limit, start);
      });
}

// lat, write and read: the same channels for every size.
Status RunSizes(rdmad::Client& client, BenchReport* report) {
  const BenchArgs& a = report->args;
  uint64_t largest = *std::max_element(a.sizes.begin(), a.sizes.end());
  bool lat = a.test == BenchTest::kLat;
  uint64_t region = std::max<uint64_t>(largest, 1);  // the echo service refuses 0
  // ECHO's param: the longest message, which its replies are received into.
  echo::Header header{echo::kVersion, lat ? Mode::kEcho : Mode::kRegion, lat ? largest : region};
  auto channels = OpenChannels(client, a, header, region);
  if (!channels.ok()) return channels.status();
  report->channel = channels->front().channel->info();
  for (uint64_t size : a.sizes) {
    auto r = lat ? LatencyAt(*channels, size, LimitOf(a), a.warmup)
                 : OneSidedAt(*channels, a.test == BenchTest::kWrite, size, LimitOf(a), a.depth);
    if (!r.ok()) return r.status();
    report->sizes.push_back(*r);
  }
  return Status::Ok();
}

// kv: the same channels for every size, regions for the largest.
Status RunKvSizes(rdmad::Client& client, BenchReport* report) {
  const BenchArgs& a = report->args;
  uint64_t batch = *std::max_element(a.sizes.begin(), a.sizes.end()) * a.blocks;
  auto channels = OpenChannels(client, a, {echo::kVersion, Mode::kRegion, 2 * batch}, batch);
  if (!channels.ok()) return channels.status();
  std::vector<BenchChannel>& c = *channels;
  report->channel = c.front().channel->info();
  for (uint64_t size : a.sizes) {
    auto r = WarmThenRun(
        c, size,
        [&](BenchChannel& b) { return WarmUpKv(*b.channel, *b.region, b.remote, size, a.blocks); },
        [&](BenchChannel& b, BenchClock::time_point start) {
          return RunKv(*b.channel, *b.region, b.remote, size, a.blocks, LimitOf(a), start);
        });
    if (!r.ok()) return r.status();
    report->sizes.push_back(*r);
  }
  return Status::Ok();
}

Status RunSinkSizes(rdmad::Client& client, BenchReport* report) {
  for (uint64_t size : report->args.sizes) {
    auto r = SinkAt(client, size, report);
    if (!r.ok()) return r.status();
    report->sizes.push_back(*r);
  }
  return Status::Ok();
}

}  // namespace

std::vector<StatusOr<ChannelResult>> RunParallel(
    size_t n, const std::function<StatusOr<ChannelResult>(size_t, BenchClock::time_point)>& fn) {
  std::vector<StatusOr<ChannelResult>> results(n, Status::Internal("not run"));
  if (n == 1) {
    results[0] = fn(0, BenchClock::now());
    return results;
  }
  std::latch go(1);
  BenchClock::time_point start;
  std::vector<std::thread> threads;
  for (size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      go.wait();
      results[i] = fn(i, start);
    });
  }
  start = BenchClock::now();
  go.count_down();
  for (std::thread& t : threads) t.join();
  return results;
}

StatusOr<std::vector<BenchChannel>> OpenChannels(rdmad::Client& client, const BenchArgs& a,
                                                 const echo::Header& header,
                                                 uint64_t region_bytes) {
  EchoOpenOptions options;
  options.force_tcp = a.force_tcp;
  std::vector<BenchChannel> channels;
  for (uint32_t i = 0; i < a.channels; ++i) {
    auto opened = OpenEcho(client, a.peer, header, options);
    if (!opened.ok()) return Status(opened.status().code(), EchoOpenError(a.peer, opened.status()));
    BenchChannel c;
    c.channel = std::move(opened->channel);
    if (header.mode == Mode::kRegion) {
      auto remote = rdmad::RegionDescriptor::Parse(opened->ack.data(), opened->ack.size());
      if (!remote.ok()) return remote.status();
      c.remote = *remote;
    }
    if (region_bytes > 0) RDMAD_RETURN_IF_ERROR(c.Register(region_bytes));
    channels.push_back(std::move(c));
  }
  return channels;
}

Status BenchChannel::Register(uint64_t bytes) {
  auto mapped = rdmad::echo::RegionMemory::Map(bytes);
  if (!mapped.ok()) return mapped.status();
  memory = std::move(mapped).value();
  std::memset(memory->data(), 0, bytes);  // every page touched before the timing
  auto r = channel->RegisterMemory(memory->data(), bytes);
  if (!r.ok()) {
    return Status(r.status().code(),
                  "registering " + std::to_string(bytes) + " bytes: " + r.status().message());
  }
  region = std::move(r).value();
  return Status::Ok();
}

BenchChannel::~BenchChannel() {
  region.reset();  // before the channel and the memory
  if (channel) channel->Close();
}

StatusOr<BenchReport> RunBench(rdmad::Client& client, const BenchArgs& args) {
  BenchReport report;
  report.args = args;
  Status s;
  switch (args.test) {
    case BenchTest::kLat:
    case BenchTest::kWrite:
    case BenchTest::kRead: s = RunSizes(client, &report); break;
    case BenchTest::kBw: s = RunSinkSizes(client, &report); break;
    case BenchTest::kKv: s = RunKvSizes(client, &report); break;
    case BenchTest::kIdle: s = RunIdle(client, &report); break;
    case BenchTest::kConnect: s = RunConnect(client, &report); break;
  }
  if (!s.ok()) return s;
  return report;
}

}  // namespace rdmactl
