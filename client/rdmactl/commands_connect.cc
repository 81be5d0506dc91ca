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

constexpr char kConnectUsage[] = "PEER [--tcp]";
constexpr char kPingUsage[] = "PEER [-c N] [-s SIZE] [-i INTERVAL_MS] [-W TIMEOUT_MS] [-q] [--tcp]";

struct EchoArgs {
  std::string peer;
  bool force_tcp = false;
  bool quiet = false;
  uint64_t count = 5;
  uint64_t size = 64;
  uint64_t interval_ms = 200;
  uint64_t timeout_ms = 5000;  // per reply
};

// ping's numeric options.
struct NumericFlag {
  const char* flag;
  uint64_t max;
  uint64_t EchoArgs::*field;
};
constexpr NumericFlag kPingNumbers[] = {
    {"-c", kMaxCount, &EchoArgs::count},
    {"-s", kMaxSize, &EchoArgs::size},
    {"-i", kMaxMillis, &EchoArgs::interval_ms},
    {"-W", kMaxMillis, &EchoArgs::timeout_ms},
};

const NumericFlag* FindNumericFlag(const std::string& arg) {
  for (const NumericFlag& f : kPingNumbers) {
    if (arg == f.flag) return &f;
  }
  return nullptr;
}

// Parses PEER and the options; on an error prints it and returns false.
bool ParseEchoArgs(Context& ctx, std::string_view verb, bool ping, EchoArgs* a) {
  std::string_view usage = ping ? kPingUsage : kConnectUsage;
  auto fail = [&](const std::string& message) {
    UsageError(ctx, verb,
               message + "; usage: rdmactl " + std::string(verb) + " " + std::string(usage));
    return false;
  };
  for (size_t i = 0; i < ctx.args.size(); ++i) {
    const std::string& arg = ctx.args[i];
    const NumericFlag* number = ping ? FindNumericFlag(arg) : nullptr;
    if (arg == "--tcp") {
      a->force_tcp = true;
    } else if (ping && arg == "-q") {
      a->quiet = true;
    } else if (number != nullptr) {
      if (i + 1 >= ctx.args.size()) return fail(arg + " needs a number");
      if (!ParseUint(ctx.args[++i], number->max, &(a->*number->field))) {
        return fail(arg + ": \"" + ctx.args[i] + "\" is not a number from 0 to " +
                    std::to_string(number->max));
      }
    } else if (arg.size() > 1 && arg[0] == '-') {
      return fail("unknown option " + arg);
    } else if (!a->peer.empty()) {
      return fail("one PEER only");
    } else {
      a->peer = arg;
    }
  }
  if (a->peer.empty()) return fail("PEER missing");
  if (ping && a->count == 0) return fail("-c: at least 1");
  return true;
}

int Fail(Context& ctx, std::string_view verb, const std::string& message) {
  std::fflush(ctx.out);  // after what was printed so far
  std::fprintf(ctx.err, "rdmactl %.*s: %s\n", int(verb.size()), verb.data(), message.c_str());
  return kExitFailure;
}

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

}  // namespace

int CmdConnect(Context& ctx) {
  EchoArgs a;
  if (!ParseEchoArgs(ctx, "connect", /*ping=*/false, &a)) return kExitUsage;
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

int CmdPing(Context& ctx) {
  EchoArgs a;
  if (!ParseEchoArgs(ctx, "ping", /*ping=*/true, &a)) return kExitUsage;
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
  if (!failed.ok()) return Fail(ctx, "ping", "the channel failed: " + failed.ToString());
  return tally.received == a.count ? kExitOk : kExitFailure;
}

}  // namespace rdmactl
