// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The command table and dispatch. CLI11 (Debian's libcli11-dev) parses the
// global options and every verb's arguments from the declarations in
// commands_*.cc; this file adds what a command line is expected to do
// around that: `rdmactl help [VERB]`, `--version`, "did you mean" for a
// mistyped verb, usage errors with exit 64, and with --json every error
// as JSON on stdout.

#include "client/rdmactl/rdmactl.h"

#include <algorithm>
#include <sstream>

#include "client/rdmactl/command.h"
#include "common/edit_distance.h"

namespace rdmactl {
namespace {

void DeclareVersion(CLI::App& verb, Context& ctx);
void DeclareHelp(CLI::App& verb, Context& ctx);

constexpr char kGlobalUsage[] =
    "rdmactl [--socket PATH] [--json] [--connect-timeout MS] COMMAND [ARGS]";
constexpr char kExitCodes[] =
    "Exit codes: 0 ok, 1 failure (route: no RDMA path; ping: a reply lost), "
    "2 rdmad not reachable, 64 usage";

int PrintVersion(Context& ctx) {
  if (ctx.globals.json) {
    PrintJson(ctx, Json{{"rdmactl", RDMAD_VERSION}});
  } else {
    std::fprintf(ctx.out, "rdmactl %s\n", RDMAD_VERSION);
  }
  return kExitOk;
}

void DeclareVersion(CLI::App& verb, Context& ctx) {
  RunsWith(verb, ctx, [&ctx] { return PrintVersion(ctx); });
}

std::string Overview() {
  std::string text = std::string("Usage: ") + kGlobalUsage + "\n\nCommands:\n";
  for (const Command& c : Commands()) {
    char line[512];
    std::snprintf(line, sizeof(line), "  %-10s %s\n", c.name, c.help);
    text += line;
  }
  text +=
      "\nGlobal options (before or after the command):\n"
      "  --socket PATH  rdmad's socket (default $RDMAD_SOCKET or /run/rdmad/rdmad.sock)\n"
      "  --json         machine-readable output, errors included\n"
      "  --connect-timeout MS  how long to wait for rdmad to answer (default 2000)\n"
      "  --version      rdmactl's version\n"
      "\n'rdmactl help COMMAND' or 'rdmactl COMMAND --help' shows a command's arguments.\n";
  return text + kExitCodes + "\n";
}

void DeclareHelp(CLI::App& verb, Context& ctx) {
  auto topic = std::make_shared<std::string>();
  verb.add_option("COMMAND", *topic, "the command to explain");
  RunsWith(verb, ctx, [&ctx, &verb, topic] {
    if (topic->empty()) {
      PrintText(ctx, Overview());
      return kExitOk;
    }
    CLI::App* sub = nullptr;
    try {
      sub = verb.get_parent()->get_subcommand(*topic);
    } catch (const CLI::OptionNotFound&) {
      return UsageError(ctx, "help", "no command \"" + *topic + "\"; 'rdmactl help' lists them");
    }
    PrintText(ctx, sub->help("rdmactl"));
    return kExitOk;
  });
}

// The verb argv names (the first word that is not a global option), "" if
// none.
std::string VerbOf(const std::vector<std::string>& argv) {
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == "--socket" || argv[i] == "--connect-timeout") {
      ++i;  // its value
    } else if (argv[i].empty() || argv[i][0] != '-') {
      return argv[i];
    }
  }
  return "";
}

// "unknown command "X"", with the closest verb when one is close.
std::string UnknownVerb(const std::string& verb) {
  std::string message = "unknown command \"" + verb + "\"";
  const Command* best = nullptr;
  size_t best_distance = 3;  // at most two edits away
  for (const Command& c : Commands()) {
    size_t d = rdmad::EditDistance(verb, c.name);
    if (d < best_distance || (std::string_view(c.name).rfind(verb, 0) == 0 && !verb.empty())) {
      best = &c;
      best_distance = std::min(d, best_distance);
    }
  }
  if (best != nullptr) return message + "; did you mean \"" + best->name + "\"?";
  return message + "; 'rdmactl help' lists the commands";
}

}  // namespace

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = {
      {"status", "show the daemon's state: version, uptime, config, devices, counts",
       DeclareStatus},
      {"devices", "list RDMA devices and their ports; DEV: one device in detail", DeclareDevices},
      {"gids", "list the GID tables: index, GID, type, netdev, IP", DeclareGids},
      {"route", "show the path rdmad plans to a peer (a name or an IP), and why", DeclareRoute},
      {"counters", "show a port's counters", DeclareCounters},
      {"topo", "show the PCIe topology: RDMA devices, GPUs, NUMA nodes and the paths between",
       DeclareTopo},
      {"env", "print the environment NCCL, UCX or NVSHMEM need for rdmad's rails near a GPU",
       DeclareEnv},
      {"peers", "list the peer daemons: state, RTT, remote version, last error", DeclarePeers},
      {"channels",
       "list the channels: peer, service, transport, state, owner (your own; all for root)",
       DeclareChannels},
      {"doctor", "check this host (and the path to a PEER) and say how to fix what is wrong",
       DeclareDoctor},
      {"top", "a live view of peers, rails and channels with their rates (--once --json)",
       DeclareTop},
      {"close", "close a channel (your own; any for root and daemon.admin_group)", DeclareClose},
      {"pools", "list the pools: each following client's targets, warm and in-use channels",
       DeclarePools},
      {"cluster", "list the cluster's members in etcd: peer address, ports, services",
       DeclareCluster},
      {"services", "which cluster members host which services (or one service)", DeclareServices},
      {"connect", "open a channel to a peer's echo service; show how it was set up",
       DeclareConnect},
      {"ping", "timed round trips to a peer's echo service", DeclarePing},
      {"bench", "perftest-style benchmarks against a peer's echo service", DeclareBench},
      {"events", "follow daemon events (config, devices, ports, GIDs, rails)", DeclareEvents},
      {"peer-key", "write a new shared peer key to FILE (daemon.peer_key_file)", DeclarePeerKey},
      {"version", "print rdmactl's version", DeclareVersion},
      {"help", "list the commands, or explain one", DeclareHelp},
  };
  return commands;
}

int Run(const std::vector<std::string>& argv, std::FILE* out, std::FILE* err) {
  Context ctx{{}, out, err};
  // Known before parsing, so that a usage error is JSON too.
  ctx.globals.json = std::find(argv.begin(), argv.end(), "--json") != argv.end();
  std::string verb = VerbOf(argv);
  bool known = std::any_of(Commands().begin(), Commands().end(),
                           [&](const Command& c) { return verb == c.name; });
  if (!verb.empty() && !known) return UsageError(ctx, "", UnknownVerb(verb));

  CLI::App app("rdmactl: the command-line front end to rdmad", "rdmactl");
  app.add_option("--socket", ctx.globals.socket, "rdmad's socket")->envname("RDMAD_SOCKET");
  app.add_flag("--json", ctx.globals.json, "machine-readable output, errors included");
  app.add_option("--connect-timeout", ctx.globals.connect_timeout_ms,
                 "milliseconds to wait for rdmad to answer (default 2000)")
      ->check(CLI::Range(1u, 3600000u));
  app.set_version_flag("--version", std::string("rdmactl ") + RDMAD_VERSION);
  app.set_help_flag("-h,--help", "show the commands, or a command's arguments");
  app.fallthrough();  // the global options after the command too
  app.require_subcommand(0, 1);
  for (const Command& c : Commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    c.declare(*sub, ctx);
  }
  std::vector<std::string> reversed(argv.rbegin(), argv.rend());  // CLI11 takes them so
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    // The innermost command asked about: its help, or the overview.
    auto chosen = app.get_subcommands();
    PrintText(ctx, chosen.empty() ? Overview() : chosen.back()->help("rdmactl"));
    return kExitOk;
  } catch (const CLI::CallForVersion&) {
    return PrintVersion(ctx);
  } catch (const CLI::ParseError& e) {
    auto chosen = app.get_subcommands();
    std::string name = chosen.empty() ? "" : chosen.back()->get_name();
    std::string usage = name.empty() ? std::string(kGlobalUsage)
                                     : "rdmactl " + name + " --help shows its arguments";
    return UsageError(ctx, name, std::string(e.what()) + "; " + usage);
  }
  if (app.get_subcommands().empty()) {
    PrintText(ctx, Overview());
    return kExitOk;
  }
  return ctx.exit_code;
}

}  // namespace rdmactl
