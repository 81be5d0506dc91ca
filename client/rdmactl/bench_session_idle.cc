// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RunBench's idle and connect tests (bench_session.h).

#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <string>
#include <thread>

#include "client/rdmactl/bench_session_internal.h"
#include "client/rdmactl/echo_client.h"

namespace rdmactl {
namespace {

using rdmad::Status;
using rdmad::StatusCode;
using rdmad::StatusOr;
namespace echo = rdmad::echo;

constexpr size_t kProbeBytes = 64;
constexpr std::chrono::milliseconds kIdleSettle{1000};

double Seconds(BenchClock::duration d) { return std::chrono::duration<double>(d).count(); }

double Seconds(const timeval& tv) { return double(tv.tv_sec) + double(tv.tv_usec) / 1e6; }

struct CpuTimes {
  double user = 0, system = 0;
};

CpuTimes ProcessCpu() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return {Seconds(ru.ru_utime), Seconds(ru.ru_stime)};
}

// The first failure of any channel, with its number when there are several.
Status FirstFailure(const std::vector<StatusOr<ChannelResult>>& results) {
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].ok()) continue;
    const Status& s = results[i].status();
    if (results.size() == 1) return s;
    return Status(s.code(), "channel " + std::to_string(i + 1) + ": " + s.message());
  }
  return Status::Ok();
}

// Blocks in Recv for wait; the echo service has nothing to send.
StatusOr<ChannelResult> BlockInRecv(rdmad::Channel& channel, std::chrono::milliseconds wait) {
  auto message = channel.Recv(wait);
  if (message.ok()) {
    return Status(StatusCode::kDataLoss, "an idle ECHO channel received a message");
  }
  if (message.status().code() != StatusCode::kDeadlineExceeded) return message.status();
  return ChannelResult{};
}

// iters Connect + Close cycles; each Connect's time in latency_us.
StatusOr<ChannelResult> ConnectCycles(rdmad::Client& client, const BenchArgs& a,
                                      BenchClock::time_point start) {
  rdmad::ConnectOptions options;
  options.force_tcp = a.force_tcp;
  ChannelResult r;
  for (uint64_t i = 0; i < a.iters; ++i) {
    auto t0 = BenchClock::now();
    auto channel = client.Connect(a.peer, echo::kService, options);
    auto t1 = BenchClock::now();
    if (!channel.ok()) {
      return Status(channel.status().code(), EchoOpenError(a.peer, channel.status()));
    }
    (*channel)->Close();
    r.latency_us.Add(std::chrono::duration<double, std::micro>(t1 - t0).count());
    ++r.iters;
  }
  r.seconds = Seconds(BenchClock::now() - start);
  return r;
}

// Prewarms a.channels warm channels to the echo service and waits (60 s at
// most) until this process's pool holds them.
Status FillPool(rdmad::Client& client, const BenchArgs& a) {
  RDMAD_RETURN_IF_ERROR(client.Prewarm(a.peer, echo::kService, int(a.channels)));
  auto until = BenchClock::now() + std::chrono::seconds(60);
  std::string last = "no report yet";
  while (BenchClock::now() < until) {
    auto pools = client.ListPools();
    if (!pools.ok()) return pools.status();
    for (const rdmad::PoolSummary& p : *pools) {
      if (p.pid != int(getpid()) || p.peer != a.peer || p.service != echo::kService) continue;
      if (p.warm >= a.channels) return Status::Ok();
      last = std::to_string(p.warm) + " warm" +
             (p.last_error.empty() ? "" : ", last error: " + p.last_error);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Status::DeadlineExceeded("the pool did not fill " + std::to_string(a.channels) +
                                  " channels to " + a.peer + " within 60 s (" + last + ")");
}

}  // namespace

Status RunIdle(rdmad::Client& client, BenchReport* report) {
  const BenchArgs& a = report->args;
  auto channels = OpenChannels(client, a, {echo::kVersion, echo::Mode::kEcho, 0}, 0);
  if (!channels.ok()) return channels.status();
  report->channel = channels->front().channel->info();
  for (BenchChannel& c : *channels) {
    auto rtt = EchoRoundTrip(*c.channel, 1, kProbeBytes, kReplyTimeout);
    if (!rtt.ok()) return rtt.status();
  }
  // Not measured: the process settles first (a fresh process runs code
  // for the first time: lazy binding, first page faults, gRPC's first
  // timer rounds; under an emulated CPU, also its translation).
  auto results = RunParallel(channels->size(), [&](size_t i, BenchClock::time_point) {
    return BlockInRecv(*(*channels)[i].channel, kIdleSettle);
  });
  RDMAD_RETURN_IF_ERROR(FirstFailure(results));
  auto wait = std::chrono::milliseconds(std::llround(a.duration_s * 1000));
  CpuTimes before = ProcessCpu();
  auto wall0 = BenchClock::now();
  results = RunParallel(channels->size(), [&](size_t i, BenchClock::time_point) {
    return BlockInRecv(*(*channels)[i].channel, wait);
  });
  double wall = Seconds(BenchClock::now() - wall0);
  CpuTimes after = ProcessCpu();
  RDMAD_RETURN_IF_ERROR(FirstFailure(results));
  IdleResult& r = report->idle;
  r.wall_s = wall;
  r.user_s = after.user - before.user;
  r.system_s = after.system - before.system;
  r.cpu_percent = CpuPercent(r.user_s + r.system_s, wall);
  return Status::Ok();
}

Status RunConnect(rdmad::Client& client, BenchReport* report) {
  BenchArgs one = report->args;
  one.channels = 1;
  {
    // Untimed: waits for the peer session, warms the device up.
    auto first = OpenChannels(client, one, {echo::kVersion, echo::Mode::kEcho, 0}, 0);
    if (!first.ok()) return first.status();
    report->channel = first->front().channel->info();
  }
  const BenchArgs& a = report->args;
  if (a.pooled) RDMAD_RETURN_IF_ERROR(FillPool(client, a));
  auto wall0 = BenchClock::now();
  auto results = RunParallel(a.channels, [&](size_t, BenchClock::time_point start) {
    return ConnectCycles(client, a, start);
  });
  double wall = Seconds(BenchClock::now() - wall0);
  if (a.pooled) {
    Status emptied = client.Prewarm(a.peer, echo::kService, 0);  // closes them
    if (!emptied.ok()) return emptied;
  }
  RDMAD_RETURN_IF_ERROR(FirstFailure(results));
  LatencyStats all;
  ConnectResult& r = report->connect;
  for (const auto& result : results) {
    r.cycles += result->iters;
    for (double us : result->latency_us.samples()) all.Add(us);
  }
  r.seconds = wall;
  r.per_second = wall > 0 ? double(r.cycles) / wall : 0;
  r.handshake = all.Summarize();
  r.pooled = a.pooled;
  return Status::Ok();
}

}  // namespace rdmactl
