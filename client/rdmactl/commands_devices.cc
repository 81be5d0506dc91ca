// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl devices, gids and counters: what the daemon's inventory holds.

#include "client/rdmactl/command.h"
#include "client/rdmactl/format.h"
#include "client/rdmactl/json.h"

namespace rdmactl {
namespace {

// Every device, or only `name` when it is not empty (NOT_FOUND if unknown).
rdmad::StatusOr<std::vector<rdmad::Device>> FetchDevices(rdmad::Client& client,
                                                         const std::string& name) {
  if (name.empty()) return client.ListDevices();
  auto device = client.GetDevice(name);
  if (!device.ok()) return device.status();
  return std::vector<rdmad::Device>{std::move(device).value()};
}

// Connects and fetches the devices the verb's optional DEV argument names.
int WithDevices(Context& ctx, std::string_view verb, std::vector<rdmad::Device>* devices) {
  if (!ArgCountIs(ctx, verb, 0, 1, "[DEV]")) return kExitUsage;
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  auto fetched = FetchDevices(*client, ctx.args.empty() ? "" : ctx.args[0]);
  if (!fetched.ok()) return ReportError(ctx, fetched.status());
  *devices = std::move(fetched).value();
  return kExitOk;
}

}  // namespace

int CmdDevices(Context& ctx) {
  std::vector<rdmad::Device> devices;
  if (int code = WithDevices(ctx, "devices", &devices); code != kExitOk) return code;
  if (ctx.globals.json) {
    PrintJson(ctx, DevicesJson(devices));
  } else if (!ctx.args.empty()) {
    PrintText(ctx, FormatDevice(devices.front()));
  } else {
    PrintText(ctx, FormatDevices(devices));
  }
  return kExitOk;
}

int CmdGids(Context& ctx) {
  std::vector<rdmad::Device> devices;
  if (int code = WithDevices(ctx, "gids", &devices); code != kExitOk) return code;
  if (ctx.globals.json) {
    PrintJson(ctx, GidsJson(devices));
  } else {
    PrintText(ctx, FormatGids(devices));
  }
  return kExitOk;
}

int CmdCounters(Context& ctx) {
  if (!ArgCountIs(ctx, "counters", 2, 2, "DEV PORT")) return kExitUsage;
  uint64_t port = 0;
  if (!ParseUint(ctx.args[1], 255, &port) || port == 0) {
    return UsageError(ctx, "counters",
                      "PORT must be a port number (1..255), not \"" + ctx.args[1] + "\"");
  }
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  auto counters = client->GetPortCounters(ctx.args[0], uint32_t(port));
  if (!counters.ok()) return ReportError(ctx, counters.status());
  if (ctx.globals.json) {
    PrintJson(ctx, CountersJson(ctx.args[0], uint32_t(port), *counters));
  } else {
    PrintText(ctx, FormatCounters(*counters));
  }
  return kExitOk;
}

}  // namespace rdmactl
