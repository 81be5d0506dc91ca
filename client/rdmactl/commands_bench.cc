// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl bench: perftest's measurements (ib_send_lat, ib_send_bw,
// ib_write_bw, ib_read_bw) over channels of the client library to a peer's
// echo service, plus an idle channel's CPU and the cost of a Connect. See
// docs/benchmarks.md. The loops are in bench_runner.cc, the channels and
// threads in bench_session.cc, the output in format_bench.cc.

#include <cstdio>
#include <string>

#include "client/rdmactl/bench_args.h"
#include "client/rdmactl/bench_session.h"
#include "client/rdmactl/command.h"
#include "client/rdmactl/echo_client.h"
#include "client/rdmactl/format_bench.h"

namespace rdmactl {

namespace {

int Bench(Context& ctx, BenchArgs args, const BenchFlags& flags) {
  if (rdmad::Status checked = FinishBenchArgs(flags, &args); !checked.ok()) {
    return UsageError(ctx, "bench", checked.message());
  }
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  auto report = RunBench(*client, args);
  if (!report.ok()) return Fail(ctx, "bench", report.status().message());
  if (ctx.globals.json) {
    PrintJson(ctx, BenchJson(*report));
  } else {
    PrintText(ctx, FormatBench(*report));
  }
  return kExitOk;
}

}  // namespace

void DeclareBench(CLI::App& verb, Context& ctx) {
  auto args = std::make_shared<BenchArgs>();
  auto flags = std::make_shared<BenchFlags>();
  DeclareBenchArgs(verb, args.get(), flags.get());
  RunsWith(verb, ctx, [&ctx, args, flags] { return Bench(ctx, *args, *flags); });
}

}  // namespace rdmactl
