// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/rdmactl.h"

#include <cinttypes>
#include <memory>
#include <string_view>

#include "nlohmann/json.hpp"
#include "rdmad/client.h"

namespace rdmactl {
namespace {

using Json = nlohmann::ordered_json;

struct Context {
  Globals globals;
  std::vector<std::string> args;
  std::FILE* out;
  std::FILE* err;
};

using CommandFn = int (*)(Context& ctx);

struct Command {
  const char* name;
  const char* help;
  CommandFn fn;
};

int CmdStatus(Context& ctx);
int CmdEvents(Context& ctx);
int CmdVersion(Context& ctx);
int CmdHelp(Context& ctx);

constexpr Command kCommands[] = {
    {"status", "show the daemon's state: version, uptime, config, counts", CmdStatus},
    {"events", "follow daemon events (config reloads, stopping); --count N stops after N",
     CmdEvents},
    {"version", "print rdmactl's version", CmdVersion},
    {"help", "list the commands", CmdHelp},
};

void PrintJson(Context& ctx, const Json& json) {
  std::fprintf(ctx.out, "%s\n", json.dump(2).c_str());
}

// Connects, or prints the one-line "not reachable" message.
std::unique_ptr<rdmad::Client> ConnectOrReport(Context& ctx, int* exit_code) {
  rdmad::ClientOptions options;
  options.socket_path = ctx.globals.socket;
  auto client = rdmad::Client::Connect(options);
  if (client.ok()) return std::move(client).value();
  const rdmad::Status& st = client.status();
  if (st.code() == rdmad::StatusCode::kPermissionDenied) {
    std::fprintf(ctx.err, "rdmactl: %s\n", st.message().c_str());
    *exit_code = kExitFailure;
  } else {
    std::fprintf(ctx.err,
                 "rdmactl: rdmad is not reachable (%s); start it with "
                 "'systemctl start rdmad'\n",
                 st.message().c_str());
    *exit_code = kExitUnreachable;
  }
  return nullptr;
}

int ReportError(Context& ctx, const rdmad::Status& status) {
  std::fprintf(ctx.err, "rdmactl: %s\n", status.ToString().c_str());
  return status.code() == rdmad::StatusCode::kUnavailable ? kExitUnreachable : kExitFailure;
}

Json StatusJson(const rdmad::DaemonStatus& s) {
  return Json{{"version", s.version},
              {"pid", s.pid},
              {"uptime_seconds", s.uptime_seconds},
              {"config_file", s.config_file},
              {"config_generation", s.config_generation},
              {"socket_path", s.socket_path},
              {"devices", s.device_count},
              {"ports", s.port_count},
              {"active_ports", s.active_port_count},
              {"peers", s.peer_count},
              {"services", s.service_count},
              {"channels", s.channel_count},
              {"connections_accepted", s.connections_accepted},
              {"event_subscribers", s.event_subscribers}};
}

std::string FormatUptime(double seconds) {
  auto s = uint64_t(seconds);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%" PRIu64 "d %02" PRIu64 ":%02" PRIu64 ":%02" PRIu64,
                s / 86400, s / 3600 % 24, s / 60 % 60, s % 60);
  return buf;
}

int CmdStatus(Context& ctx) {
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  auto status = client->GetStatus();
  if (!status.ok()) return ReportError(ctx, status.status());
  const rdmad::DaemonStatus& s = *status;
  if (ctx.globals.json) {
    PrintJson(ctx, StatusJson(s));
    return kExitOk;
  }
  std::fprintf(ctx.out,
               "rdmad %s (pid %d), up %s\n"
               "  socket:  %s\n"
               "  config:  %s (generation %" PRIu64 ")\n"
               "  devices: %u (%u ports, %u active)\n"
               "  peers:   %u   services: %u   channels: %u\n",
               s.version.c_str(), s.pid, FormatUptime(s.uptime_seconds).c_str(),
               s.socket_path.c_str(), s.config_file.c_str(), s.config_generation,
               s.device_count, s.port_count, s.active_port_count, s.peer_count,
               s.service_count, s.channel_count);
  if (s.device_count == 0) {
    std::fprintf(ctx.out, "  no RDMA devices; channels will use TCP\n");
  }
  return kExitOk;
}

int CmdEvents(Context& ctx) {
  long limit = -1;
  for (size_t i = 0; i < ctx.args.size(); ++i) {
    if (ctx.args[i] == "--count" && i + 1 < ctx.args.size()) {
      limit = std::strtol(ctx.args[++i].c_str(), nullptr, 10);
    } else {
      std::fprintf(ctx.err, "rdmactl events: unknown argument \"%s\"\n", ctx.args[i].c_str());
      return kExitUsage;
    }
  }
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  auto stream = client->WatchEvents();
  if (!stream.ok()) return ReportError(ctx, stream.status());
  if (!ctx.globals.json) std::fprintf(ctx.out, "watching events on %s\n", client->socket_path().c_str());
  std::fflush(ctx.out);
  rdmad::Event event;
  for (long n = 0; (limit < 0 || n < limit) && (*stream)->Next(&event); ++n) {
    if (ctx.globals.json) {
      std::fprintf(ctx.out, "%s\n",
                   Json{{"sequence", event.sequence}, {"unix_time_ms", event.unix_time_ms},
                        {"kind", rdmad::EventKindName(event.kind)},
                        {"message", event.message}}.dump().c_str());
    } else {
      std::fprintf(ctx.out, "#%" PRIu64 " %s: %s\n", event.sequence,
                   std::string(rdmad::EventKindName(event.kind)).c_str(), event.message.c_str());
    }
    std::fflush(ctx.out);
  }
  (*stream)->Cancel();
  rdmad::Status end = (*stream)->Finish();
  if (!end.ok() && end.code() != rdmad::StatusCode::kCancelled) return ReportError(ctx, end);
  return kExitOk;
}

int CmdVersion(Context& ctx) {
  if (ctx.globals.json) {
    PrintJson(ctx, Json{{"rdmactl", RDMAD_VERSION}});
  } else {
    std::fprintf(ctx.out, "rdmactl %s\n", RDMAD_VERSION);
  }
  return kExitOk;
}

int CmdHelp(Context& ctx) {
  std::fprintf(ctx.out,
               "Usage: rdmactl [--socket PATH] [--json] COMMAND [ARGS]\n\n"
               "Commands:\n");
  for (const Command& c : kCommands) std::fprintf(ctx.out, "  %-10s %s\n", c.name, c.help);
  std::fprintf(ctx.out,
               "\nGlobal options (before or after the command):\n"
               "  --socket PATH  rdmad's socket (default $RDMAD_SOCKET or "
               "/run/rdmad/rdmad.sock)\n"
               "  --json         machine-readable output\n");
  return kExitOk;
}

// Pulls the global options out of argv wherever they stand.
bool ParseInvocation(const std::vector<std::string>& argv, Invocation* inv, std::FILE* err) {
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--json") {
      inv->globals.json = true;
    } else if (a == "--socket" || a.rfind("--socket=", 0) == 0) {
      if (a == "--socket" && i + 1 >= argv.size()) {
        std::fprintf(err, "rdmactl: --socket needs a path\n");
        return false;
      }
      inv->globals.socket = a == "--socket" ? argv[++i] : a.substr(9);
    } else if (a == "--help" || a == "-h") {
      inv->verb = "help";
    } else if (inv->verb.empty()) {
      inv->verb = a;
    } else {
      inv->args.push_back(a);
    }
  }
  if (inv->verb.empty()) inv->verb = "help";
  return true;
}

}  // namespace

int Run(const std::vector<std::string>& argv, std::FILE* out, std::FILE* err) {
  Invocation inv;
  if (!ParseInvocation(argv, &inv, err)) return kExitUsage;
  Context ctx{inv.globals, inv.args, out, err};
  for (const Command& c : kCommands) {
    if (inv.verb == c.name) return c.fn(ctx);
  }
  std::fprintf(err, "rdmactl: unknown command \"%s\"; try 'rdmactl help'\n", inv.verb.c_str());
  return kExitUsage;
}

}  // namespace rdmactl
