// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl connect and ping: a channel to a peer's built-in echo service
// (rdmad.echo), how it was set up, and verified round trips over it. The
// channel is the client library's, as for any application: RDMA when both
// sides have a path, else TCP with the reason.

#include <cstdio>
#include <thread>

#include "client/rdmactl/command.h"
#include "client/rdmactl/echo_client.h"
#include "client/rdmactl/format_connect.h"

namespace rdmactl {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr size_t kConnectProbeBytes = 64;
constexpr uint64_t kMaxCount = 1000000000;
constexpr uint64_t kMaxSize = uint64_t(1) << 30;  // the channel's message limit
constexpr uint64_t kMaxMillis = 3600 * 1000;

struct EchoArgs {
  std::string peer;
  bool force_tcp = false;
  bool quiet = false;
  uint64_t count = 5;
  uint64_t size = 64;
  uint64_t interval_ms = 200;
  uint64_t timeout_ms = 5000;  // per reply
};

// The local daemon's client and an ECHO channel to the peer (the client
// outlives the channel).
struct EchoSession {
  std::unique_ptr<rdmad::Client> client;
  std::unique_ptr<rdmad::Channel> channel;
};

// Opens the session; on failure prints why and sets *code.
EchoSession OpenEchoSession(Context& ctx, std::string_view verb, const EchoArgs& a, int* code) {
  EchoSession s;
  s.client = ConnectOrReport(ctx, code);
  if (!s.client) return s;
  EchoOpenOptions options;
  options.force_tcp = a.force_tcp;
  auto echo =
      OpenEcho(*s.client, a.peer, {rdmad::echo::kVersion, rdmad::echo::Mode::kEcho, 0}, options);
  if (!echo.ok()) {
    *code = Fail(ctx, verb, EchoOpenError(a.peer, echo.status()));
    return s;
  }
  s.channel = std::move(echo->channel);
  return s;
}

int Connect(Context& ctx, const EchoArgs& a) {
  int code = kExitOk;
  EchoSession session = OpenEchoSession(ctx, "connect", a, &code);
  if (!session.channel) return code;
  rdmad::Channel* channel = session.channel.get();
  const rdmad::ChannelInfo& info = channel->info();
  auto rtt = EchoRoundTrip(*channel, 1, kConnectProbeBytes, milliseconds(a.timeout_ms));
  channel->Close();
  if (!rtt.ok()) {
    return Fail(ctx, "connect",
                std::string("the channel came up over ") +
                    rdmad::ChannelTransportName(info.transport) +
                    ", but the first round trip failed: " + rtt.status().ToString());
  }
  if (ctx.globals.json) {
    PrintJson(ctx, ConnectJson(info, *rtt, kConnectProbeBytes));
  } else {
    PrintText(ctx, FormatConnect(info, *rtt, kConnectProbeBytes));
  }
  return kExitOk;
}

int Ping(Context& ctx, const EchoArgs& a) {
  int code = kExitOk;
  EchoSession session = OpenEchoSession(ctx, "ping", a, &code);
  if (!session.channel) return code;
  rdmad::Channel* channel = session.channel.get();
  const rdmad::ChannelInfo& info = channel->info();
  bool lines = !ctx.globals.json && !a.quiet;
  if (!ctx.globals.json) PrintText(ctx, FormatPingHeader(info, a.size));
  LatencyStats samples;
  PingTally tally;
  rdmad::Status failed;
  auto start = Clock::now();
  for (uint64_t seq = 1; seq <= a.count && failed.ok(); ++seq) {
    if (seq > 1 && a.interval_ms > 0) std::this_thread::sleep_for(milliseconds(a.interval_ms));
    ++tally.sent;
    auto rtt = EchoRoundTrip(*channel, seq, a.size, milliseconds(a.timeout_ms));
    if (rtt.ok()) {
      ++tally.received;
      samples.Add(*rtt);
      if (lines) PrintText(ctx, FormatPingReply(info, a.size, seq, *rtt));
      std::fflush(ctx.out);
      continue;
    }
    rdmad::StatusCode c = rtt.status().code();
    if (c == rdmad::StatusCode::kDataLoss) ++tally.corrupt;
    if (c == rdmad::StatusCode::kDataLoss || c == rdmad::StatusCode::kDeadlineExceeded) {
      if (!ctx.globals.json)
        PrintText(ctx, "seq=" + std::to_string(seq) + ": " + rtt.status().message() + "\n");
    } else {
      failed = rtt.status();
    }
  }
  tally.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  channel->Close();
  if (ctx.globals.json) {
    Json json = PingJson(info, a.size, a.count, a.interval_ms, tally, samples);
    if (!failed.ok()) json["error"] = failed.ToString();
    PrintJson(ctx, json);
  } else {
    PrintText(ctx, "\n" + FormatPingSummary(info.peer, tally, samples.Summarize()));
  }
  if (!failed.ok()) {  // with --json, the document above says so ("error")
    return ctx.globals.json ? kExitFailure
                            : Fail(ctx, "ping", "the channel failed: " + failed.ToString());
  }
  return tally.received == a.count ? kExitOk : kExitFailure;
}

// PEER and --tcp, which connect and ping share.
std::shared_ptr<EchoArgs> DeclareEchoArgs(CLI::App& verb) {
  auto a = std::make_shared<EchoArgs>();
  verb.add_option("PEER", a->peer, "a peer's or cluster member's name, or an address")->required();
  verb.add_flag("--tcp", a->force_tcp, "TCP even where RDMA would do");
  return a;
}

}  // namespace

void DeclareConnect(CLI::App& verb, Context& ctx) {
  auto a = DeclareEchoArgs(verb);
  RunsWith(verb, ctx, [&ctx, a] { return Connect(ctx, *a); });
}

// As iputils' ping: -c2 and -c 2 alike.
void DeclarePing(CLI::App& verb, Context& ctx) {
  auto a = DeclareEchoArgs(verb);
  verb.add_option("-c,--count", a->count, "round trips (5)")
      ->check(CLI::Range(uint64_t(1), kMaxCount));
  verb.add_option("-s,--size", a->size, "bytes a message (64)")
      ->check(CLI::Range(uint64_t(0), kMaxSize));
  verb.add_option("-i,--interval", a->interval_ms, "ms between round trips (200; 0 floods)")
      ->check(CLI::Range(uint64_t(0), kMaxMillis));
  verb.add_option("-W,--timeout", a->timeout_ms, "ms to wait for a reply (5000)")
      ->check(CLI::Range(uint64_t(0), kMaxMillis));
  verb.add_flag("-q,--quiet", a->quiet, "the summary only");
  RunsWith(verb, ctx, [&ctx, a] { return Ping(ctx, *a); });
}

}  // namespace rdmactl
