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

int CmdBench(Context& ctx) {
  auto args = ParseBenchArgs(ctx.args);
  if (!args.ok()) {
    return UsageError(ctx, "bench",
                      args.status().message() + "; usage: rdmactl bench " + kBenchUsage);
  }
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  auto report = RunBench(*client, *args);
  if (!report.ok()) {
    std::fflush(ctx.out);
    std::fprintf(ctx.err, "rdmactl bench: %s\n", report.status().message().c_str());
    return kExitFailure;
  }
  if (ctx.globals.json) {
    PrintJson(ctx, BenchJson(*report));
  } else {
    PrintText(ctx, FormatBench(*report));
  }
  return kExitOk;
}

}  // namespace rdmactl
