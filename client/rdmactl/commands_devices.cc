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

// Connects and fetches the devices (every one, or the one named).
int WithDevices(Context& ctx, const std::string& name, std::vector<rdmad::Device>* devices) {
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  auto fetched = FetchDevices(*client, name);
  if (!fetched.ok()) return ReportError(ctx, fetched.status());
  *devices = std::move(fetched).value();
  return kExitOk;
}

int Devices(Context& ctx, const std::string& name) {
  std::vector<rdmad::Device> devices;
  if (int code = WithDevices(ctx, name, &devices); code != kExitOk) return code;
  if (ctx.globals.json) {
    PrintJson(ctx, DevicesJson(devices));
  } else if (!name.empty()) {
    PrintText(ctx, FormatDevice(devices.front()));
  } else {
    PrintText(ctx, FormatDevices(devices));
  }
  return kExitOk;
}

int Gids(Context& ctx, const std::string& name) {
  std::vector<rdmad::Device> devices;
  if (int code = WithDevices(ctx, name, &devices); code != kExitOk) return code;
  if (ctx.globals.json) {
    PrintJson(ctx, GidsJson(devices));
  } else {
    PrintText(ctx, FormatGids(devices));
  }
  return kExitOk;
}

int Counters(Context& ctx, const std::string& device, uint32_t port) {
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  auto counters = client->GetPortCounters(device, port);
  if (!counters.ok()) return ReportError(ctx, counters.status());
  if (ctx.globals.json) {
    PrintJson(ctx, CountersJson(device, port, *counters));
  } else {
    PrintText(ctx, FormatCounters(*counters));
  }
  return kExitOk;
}

}  // namespace

void DeclareDevices(CLI::App& verb, Context& ctx) {
  auto name = std::make_shared<std::string>();
  verb.add_option("DEV", *name, "one device, in detail");
  RunsWith(verb, ctx, [&ctx, name] { return Devices(ctx, *name); });
}

void DeclareGids(CLI::App& verb, Context& ctx) {
  auto name = std::make_shared<std::string>();
  verb.add_option("DEV", *name, "one device's tables");
  RunsWith(verb, ctx, [&ctx, name] { return Gids(ctx, *name); });
}

void DeclareCounters(CLI::App& verb, Context& ctx) {
  struct Args {
    std::string device;
    uint32_t port = 0;
  };
  auto a = std::make_shared<Args>();
  verb.add_option("DEV", a->device, "the device")->required();
  verb.add_option("PORT", a->port, "its port number")->required()->check(CLI::Range(1, 255));
  RunsWith(verb, ctx, [&ctx, a] { return Counters(ctx, a->device, a->port); });
}

}  // namespace rdmactl
