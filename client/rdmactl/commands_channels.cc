// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl channels: the daemon's channel table (both roles): the caller's
// own channels, every channel for an admin. rdmactl close: closes one.

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>

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

// "uid 1000 pid 4242", "-" when not known.
std::string Owner(const rdmad::ChannelSummary& c) {
  if (c.owner_uid < 0) return "-";
  std::string out = "uid " + std::to_string(c.owner_uid);
  if (c.owner_pid > 0) out += " pid " + std::to_string(c.owner_pid);
  return out;
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
                          {"age_seconds", c.age_seconds},
                          {"owner_uid", c.owner_uid},
                          {"owner_pid", c.owner_pid}});
    }
    PrintJson(ctx, Json{{"channels", list}});
    return kExitOk;
  }
  if (channels->empty()) {
    PrintText(ctx, "no channels\n");
    return kExitOk;
  }
  Table table({"ID", "PEER", "SERVICE", "ROLE", "TRANSPORT", "STATE", "AGE", "OWNER", "REASON"});
  for (const rdmad::ChannelSummary& c : *channels) {
    table.AddRow({Hex(c.id), c.peer, c.service, c.role, Dash(c.transport), c.state,
                  FormatAge(c.age_seconds), Owner(c), Dash(c.reason)});
  }
  PrintText(ctx, table.Render());
  return kExitOk;
}

int CmdClose(Context& ctx) {
  if (!ArgCountIs(ctx, "close", 1, 1, "CHANNEL-ID")) return kExitUsage;
  const std::string& text = ctx.args[0];
  char* end = nullptr;
  errno = 0;
  uint64_t id = std::strtoull(text.c_str(), &end, 0);  // 0x... as listed, or decimal
  if (text.empty() || text[0] == '-' || *end != '\0' || errno != 0 || id == 0) {
    return UsageError(ctx, "close", "not a channel id: " + text.substr(0, 64));
  }
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  rdmad::Status closed = client->CloseChannel(id, "by rdmactl close");
  if (!closed.ok()) return ReportError(ctx, closed);
  if (ctx.globals.json) {
    PrintJson(ctx, Json{{"closed", Hex(id)}});
  } else {
    PrintText(ctx, "closed channel " + Hex(id) + "\n");
  }
  return kExitOk;
}

}  // namespace rdmactl
