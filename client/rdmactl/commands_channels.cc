// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl channels: the daemon's channel table (both roles): the caller's
// own channels, every channel for an admin. rdmactl close: closes one.

#include <cstdio>

#include "client/rdmactl/command.h"
#include "client/rdmactl/format.h"
#include "client/rdmactl/format_peers.h"

namespace rdmactl {
namespace {

// "uid 1000 pid 4242", "-" when not known.
std::string Owner(const rdmad::ChannelSummary& c) {
  if (!c.owner_uid) return "-";
  std::string out = "uid " + std::to_string(*c.owner_uid);
  if (c.owner_pid > 0) out += " pid " + std::to_string(c.owner_pid);
  return out;
}

// "rxe0+rxe1", a rail that is out marked "!" ("rxe0+rxe1!"); "-" for none.
std::string Rails(const rdmad::ChannelSummary& c) {
  std::string out;
  for (const rdmad::ChannelRail& r : c.rails) {
    out += (out.empty() ? "" : "+") + r.local_device + (r.up ? "" : "!");
  }
  return out.empty() ? "-" : out;
}

int Channels(Context& ctx) {
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  auto channels = client->ListChannels();
  if (!channels.ok()) return ReportError(ctx, channels.status());
  if (ctx.globals.json) {
    Json list = Json::array();
    for (const rdmad::ChannelSummary& c : *channels) {
      Json row = RecordJson(c);
      row["id"] = rdmad::FormatChannelId(c.id);  // as text: a JSON number loses 64-bit ids
      list.push_back(std::move(row));
    }
    PrintJson(ctx, Json{{"channels", list}});
    return kExitOk;
  }
  if (channels->empty()) {
    PrintText(ctx, "no channels\n");
    return kExitOk;
  }
  Table table(
      {"ID", "PEER", "SERVICE", "ROLE", "TRANSPORT", "RAILS", "STATE", "AGE", "OWNER", "REASON"});
  for (const rdmad::ChannelSummary& c : *channels) {
    table.AddRow({rdmad::FormatChannelId(c.id), c.peer, c.service, c.role, Dash(c.transport),
                  Rails(c), c.state, FormatAge(c.age_seconds), Owner(c), Dash(c.reason)});
  }
  PrintText(ctx, table.Render());
  return kExitOk;
}

int Close(Context& ctx, uint64_t id) {
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  rdmad::Status closed = client->CloseChannel(id, "by rdmactl close");
  if (!closed.ok()) return ReportError(ctx, closed);
  if (ctx.globals.json) {
    PrintJson(ctx, Json{{"closed", rdmad::FormatChannelId(id)}});
  } else {
    PrintText(ctx, "closed channel " + rdmad::FormatChannelId(id) + "\n");
  }
  return kExitOk;
}

}  // namespace

void DeclareChannels(CLI::App& verb, Context& ctx) {
  RunsWith(verb, ctx, [&ctx] { return Channels(ctx); });
}

void DeclareClose(CLI::App& verb, Context& ctx) {
  auto id = std::make_shared<uint64_t>(0);
  verb.add_option("CHANNEL-ID", *id, "as rdmactl channels shows it (0x...), or decimal")
      ->required()
      ->transform(
          [](std::string text) {
            auto parsed = rdmad::ParseChannelId(text);
            if (!parsed.ok()) throw CLI::ValidationError(parsed.status().message());
            return std::to_string(*parsed);
          },
          "a channel id");
  RunsWith(verb, ctx, [&ctx, id] { return Close(ctx, *id); });
}

}  // namespace rdmactl
