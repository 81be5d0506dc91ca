// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl channels: the daemon's channel table (both roles).

#include <cinttypes>
#include <cstdio>

#include "client/rdmactl/command.h"
#include "client/rdmactl/format.h"
#include "client/rdmactl/format_peers.h"

namespace rdmactl {
namespace {

std::string Hex(uint64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%#" PRIx64, id);
  return buf;
}

}  // namespace

int CmdChannels(Context& ctx) {
  if (!ArgCountIs(ctx, "channels", 0, 0, "")) return kExitUsage;
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  auto channels = client->ListChannels();
  if (!channels.ok()) return ReportError(ctx, channels.status());
  if (ctx.globals.json) {
    Json list = Json::array();
    for (const rdmad::ChannelSummary& c : *channels) {
      list.push_back(Json{{"id", Hex(c.id)},
                          {"peer", c.peer},
                          {"service", c.service},
                          {"role", c.role},
                          {"transport", c.transport},
                          {"state", c.state},
                          {"reason", c.reason},
                          {"age_seconds", c.age_seconds}});
    }
    PrintJson(ctx, Json{{"channels", list}});
    return kExitOk;
  }
  if (channels->empty()) {
    PrintText(ctx, "no channels\n");
    return kExitOk;
  }
  Table table({"ID", "PEER", "SERVICE", "ROLE", "TRANSPORT", "STATE", "AGE", "REASON"});
  for (const rdmad::ChannelSummary& c : *channels) {
    table.AddRow({Hex(c.id), c.peer, c.service, c.role, Dash(c.transport), c.state,
                  FormatAge(c.age_seconds), Dash(c.reason)});
  }
  PrintText(ctx, table.Render());
  return kExitOk;
}

}  // namespace rdmactl
