// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl status and rdmactl events.

#include <climits>

#include "client/rdmactl/command.h"
#include "client/rdmactl/format.h"
#include "client/rdmactl/json.h"

namespace rdmactl {
namespace {

// Parses events' own arguments: --count N (N >= 0; -1 when absent).
bool ParseEventArgs(Context& ctx, long* limit) {
  *limit = -1;
  for (size_t i = 0; i < ctx.args.size(); ++i) {
    uint64_t n = 0;
    if (ctx.args[i] == "--count" && i + 1 < ctx.args.size() &&
        ParseUint(ctx.args[i + 1], LONG_MAX, &n)) {
      *limit = long(n);
      ++i;
    } else {
      UsageError(ctx, "events",
                 "unknown argument \"" + ctx.args[i] + "\"; usage: rdmactl events [--count N]");
      return false;
    }
  }
  return true;
}

void PrintEvent(Context& ctx, const rdmad::Event& event) {
  if (ctx.globals.json) {
    std::fprintf(ctx.out, "%s\n", DumpJson(EventJson(event), -1).c_str());
  } else {
    PrintText(ctx, FormatEvent(event));
  }
  std::fflush(ctx.out);
}

}  // namespace

int CmdStatus(Context& ctx) {
  if (!ArgCountIs(ctx, "status", 0, 0, "")) return kExitUsage;
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

int CmdEvents(Context& ctx) {
  long limit = -1;
  if (!ParseEventArgs(ctx, &limit)) return kExitUsage;
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

}  // namespace rdmactl
