// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl cluster: the members rdmad sees in etcd, with their ports and
// services, and whether etcd answers. rdmactl services [NAME]: which nodes
// host which services (or NAME).

#include <algorithm>
#include <map>
#include <set>

#include "client/rdmactl/command.h"
#include "client/rdmactl/format.h"
#include "client/rdmactl/json.h"

namespace rdmactl {
namespace {

std::string Join(const std::vector<std::string>& items, const char* sep = ", ") {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::string FormatPorts(const rdmad::ClusterMember& m) {
  std::vector<std::string> ports;
  for (const rdmad::ClusterMemberPort& p : m.ports) {
    std::string text = p.device + ":" + std::to_string(p.port) + " " + p.transport + " " + p.state;
    if (p.active_mtu > 0) text += " MTU " + std::to_string(p.active_mtu);
    ports.push_back(text);
  }
  return ports.empty() ? "-" : Join(ports);
}

// One line on etcd: where, whether it answers, the view's size.
std::string FormatEtcd(const rdmad::ClusterView& v) {
  std::string line = "etcd " + v.endpoints + ": ";
  if (v.reachable) {
    line += "reachable";
  } else {
    line += "UNREACHABLE for " + std::to_string(int64_t(v.unreachable_seconds)) + " s (" +
            v.last_error + "); the members last seen";
  }
  line += ", " + std::to_string(v.members.size()) + " member(s)";
  if (!v.registered) line += ", this node not registered yet";
  return line + "\n";
}

}  // namespace

std::string FormatCluster(const rdmad::ClusterView& v) {
  Table table({"NAME", "PEER ADDRESS", "VERSION", "PORTS", "SERVICES"});
  for (const rdmad::ClusterMember& m : v.members) {
    table.AddRow({m.self ? m.name + " (this node)" : m.name, m.peer_address, m.version,
                  FormatPorts(m), m.services.empty() ? "-" : Join(m.services)});
  }
  return FormatEtcd(v) + table.Render();
}

std::string FormatServices(const rdmad::ClusterView& v) {
  std::map<std::string, std::vector<std::string>> nodes;
  for (const rdmad::ClusterMember& m : v.members) {
    for (const std::string& s : m.services) nodes[s].push_back(m.name);
  }
  if (nodes.empty()) return FormatEtcd(v) + "no services\n";
  Table table({"SERVICE", "NODES"});
  for (auto& [service, names] : nodes) {
    std::sort(names.begin(), names.end());
    table.AddRow({service, Join(names)});
  }
  return FormatEtcd(v) + table.Render();
}

namespace {

int Cluster(Context& ctx) {
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  auto view = client->ListMembers();
  if (!view.ok()) return ReportError(ctx, view.status());
  if (ctx.globals.json) {
    PrintJson(ctx, RecordJson(*view));
  } else {
    PrintText(ctx, FormatCluster(*view));
  }
  return kExitOk;
}

int Services(Context& ctx, const std::string& name) {
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  auto view = client->ListMembers(name);
  if (!view.ok()) return ReportError(ctx, view.status());
  if (ctx.globals.json) {
    PrintJson(ctx, RecordJson(*view));
  } else {
    PrintText(ctx, FormatServices(*view));
  }
  return kExitOk;
}

}  // namespace

void DeclareCluster(CLI::App& verb, Context& ctx) {
  RunsWith(verb, ctx, [&ctx] { return Cluster(ctx); });
}

void DeclareServices(CLI::App& verb, Context& ctx) {
  auto name = std::make_shared<std::string>();
  verb.add_option("NAME", *name, "one service");
  RunsWith(verb, ctx, [&ctx, name] { return Services(ctx, *name); });
}

}  // namespace rdmactl
