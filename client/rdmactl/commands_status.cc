// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl status and rdmactl events.

#include <climits>

#include "client/rdmactl/command.h"
#include "client/rdmactl/format.h"
#include "client/rdmactl/json.h"

namespace rdmactl {
namespace {

void PrintEvent(Context& ctx, const rdmad::Event& event) {
  if (ctx.globals.json) {
    std::fprintf(ctx.out, "%s\n", DumpJson(RecordJson(event), -1).c_str());
  } else {
    PrintText(ctx, FormatEvent(event));
  }
  std::fflush(ctx.out);
}

int Status(Context& ctx) {
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  auto status = client->GetStatus();
  if (!status.ok()) return ReportError(ctx, status.status());
  auto devices = client->ListDevices();
  if (!devices.ok()) return ReportError(ctx, devices.status());
  if (ctx.globals.json) {
    PrintJson(ctx, StatusJson(*status, *devices));
  } else {
    PrintText(ctx, FormatStatus(*status, *devices));
  }
  return kExitOk;
}

// limit: how many events (-1: until interrupted).
int Events(Context& ctx, long limit) {
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  auto stream = client->WatchEvents();
  if (!stream.ok()) return ReportError(ctx, stream.status());
  if (!ctx.globals.json) {
    std::fprintf(ctx.out, "watching events on %s\n", client->socket_path().c_str());
  }
  std::fflush(ctx.out);
  rdmad::Event event;
  for (long n = 0; (limit < 0 || n < limit) && (*stream)->Next(&event); ++n) {
    PrintEvent(ctx, event);
  }
  (*stream)->Cancel();
  rdmad::Status end = (*stream)->Finish();
  if (!end.ok() && end.code() != rdmad::StatusCode::kCancelled) return ReportError(ctx, end);
  return kExitOk;
}

}  // namespace

void DeclareStatus(CLI::App& verb, Context& ctx) {
  RunsWith(verb, ctx, [&ctx] { return Status(ctx); });
}

void DeclareEvents(CLI::App& verb, Context& ctx) {
  auto count = std::make_shared<long>(-1);
  verb.add_option("-c,--count", *count, "stop after N events")->check(CLI::Range(0L, LONG_MAX));
  RunsWith(verb, ctx, [&ctx, count] { return Events(ctx, *count); });
}

}  // namespace rdmactl
