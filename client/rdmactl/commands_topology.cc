// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl topo: the host's PCIe topology as rdmad read it (format_topology.h).

#include <optional>

#include "client/rdmactl/command.h"
#include "client/rdmactl/format.h"
#include "client/rdmactl/format_topology.h"

namespace rdmactl {
namespace {

std::string Numa(int32_t node) { return node < 0 ? "-" : std::to_string(node); }

// "yes, 2 plans", "no".
std::string Rails(const rdmad::TopologyNic& nic) {
  if (!nic.usable) return "no";
  return "yes, " + std::to_string(nic.plans) + (nic.plans == 1 ? " plan" : " plans");
}

// "mlx5_0 (PIX), mlx5_1 (PXB)".
std::string Devices(const rdmad::RailPlan& plan) {
  std::string out;
  for (const rdmad::PlannedRail& rail : plan.rails) {
    out += (out.empty() ? "" : ", ") + rail.device + " (" + rail.path + ")";
  }
  return Dash(out);
}

std::string Summary(const rdmad::HostTopology& t) {
  std::string line = "topology from " + t.source;
  if (!t.machine.empty()) line += " (" + t.machine + ")";
  line += ": " + std::to_string(t.nics.size()) + " RDMA device(s), " +
          std::to_string(t.gpus.size()) + " GPU(s), " + std::to_string(t.numa_nodes) +
          " NUMA node(s)\n";
  if (!t.error.empty()) line += "the last read failed, this is the one before: " + t.error + "\n";
  return line;
}

}  // namespace

std::string FormatTopology(const rdmad::HostTopology& t) {
  std::string out = Summary(t);
  if (t.nics.empty() && t.gpus.empty()) return out;
  std::vector<std::string> header = {""};
  for (const rdmad::TopologyGpu& gpu : t.gpus) header.push_back("GPU" + std::to_string(gpu.index));
  for (const rdmad::TopologyNic& nic : t.nics) header.push_back(nic.name);
  for (const char* column : {"NUMA", "CPUS", "PCI", "NETDEV", "RAILS"}) header.push_back(column);
  Table matrix(header);
  for (const rdmad::TopologyNic& nic : t.nics) {
    std::vector<std::string> row = {nic.name};
    row.insert(row.end(), nic.to_gpus.begin(), nic.to_gpus.end());
    row.insert(row.end(), nic.to_nics.begin(), nic.to_nics.end());
    row.resize(1 + t.gpus.size() + t.nics.size(), "-");
    for (const std::string& cell : {Numa(nic.place.numa_node), Dash(nic.place.cpus),
                                    Dash(nic.place.pci_address), Dash(nic.netdev), Rails(nic)}) {
      row.push_back(cell);
    }
    matrix.AddRow(std::move(row));
  }
  if (!t.nics.empty()) out += "\n" + matrix.Render() + "\n" + kTopologyLegend;
  if (!t.gpus.empty()) {
    Table gpus({"GPU", "PCI", "VENDOR", "MODEL", "NUMA", "CPUS"});
    for (const rdmad::TopologyGpu& gpu : t.gpus) {
      gpus.AddRow({std::to_string(gpu.index), gpu.place.pci_address, gpu.vendor, Dash(gpu.model),
                   Numa(gpu.place.numa_node), Dash(gpu.place.cpus)});
    }
    out += "\n" + gpus.Render();
  }
  if (!t.plans.empty()) {
    Table plans({"PID", "UID", "PLACE", "RAILS", "WHY"});
    for (const rdmad::RailAssignment& a : t.plans) {
      plans.AddRow(
          {std::to_string(a.pid), std::to_string(a.uid), a.place, Devices(a.plan), a.plan.reason});
    }
    out += "\nlive rail plans:\n" + plans.Render();
  }
  return out;
}

std::string FormatRailPlan(const rdmad::RailPlan& plan) {
  return plan.near + ": " + Devices(plan) + "\n" + plan.reason + "\n";
}

Json TopologyJson(const rdmad::HostTopology& topology) { return RecordJson(topology); }

ToolEnv EnvFor(const std::string& tool, const rdmad::RailPlan& plan) {
  ToolEnv env;
  std::string devices;
  for (const rdmad::PlannedRail& rail : plan.rails) {
    devices += (devices.empty() ? "" : ",") + rail.device + ":" + std::to_string(rail.port);
  }
  // One GID index for every device: the tools take one.
  std::optional<int> gid;
  for (const rdmad::PlannedRail& rail : plan.rails) {
    if (rail.gid_index < 0 || rail.gid_type.rfind("RoCE", 0) != 0) continue;
    if (!gid) {
      gid = rail.gid_index;
    } else if (*gid != rail.gid_index) {
      env.notes.push_back(rail.device + " prefers GID " + std::to_string(rail.gid_index) +
                          ", but the tool takes one index for all: " + std::to_string(*gid));
    }
  }
  const std::string netdev = plan.rails.empty() ? "" : plan.rails.front().netdev;
  const std::string tc = plan.traffic_class == 0 ? "" : std::to_string(plan.traffic_class);
  auto add = [&](const char* name, const std::string& value) {
    if (!value.empty()) env.vars.emplace_back(name, value);
  };
  const std::string gid_text = gid ? std::to_string(*gid) : "";
  if (tool == "nccl") {
    add("NCCL_IB_HCA", devices.empty() ? "" : "=" + devices);  // "=": these names exactly
    add("NCCL_IB_GID_INDEX", gid_text);
    add("NCCL_SOCKET_IFNAME", netdev.empty() ? "" : "=" + netdev);
    add("NCCL_IB_TC", tc);
  } else if (tool == "ucx") {
    add("UCX_NET_DEVICES", devices);
    add("UCX_IB_GID_INDEX", gid_text);
    add("UCX_IB_TRAFFIC_CLASS", tc);
  } else if (tool == "nvshmem") {
    add("NVSHMEM_HCA_LIST", devices);
    add("NVSHMEM_IB_GID_INDEX", gid_text);
    add("NVSHMEM_BOOTSTRAP_UID_SOCK_IFNAME", netdev);
    add("NVSHMEM_IB_TRAFFIC_CLASS", tc);
  }
  if (!gid) env.notes.push_back("no RoCE GID known for these devices: the tool chooses its own");
  return env;
}

std::string FormatEnv(const std::string& tool, const rdmad::RailPlan& plan, const ToolEnv& env) {
  std::string out = "# " + tool + " on rdmad's rails for " + plan.near + ": " + plan.reason + "\n";
  for (const std::string& note : env.notes) out += "# note: " + note + "\n";
  for (const auto& [name, value] : env.vars) out += "export " + name + "='" + value + "'\n";
  return out;
}

namespace {

struct TopoArgs {
  TopoArgs() { request.explain_only = true; }
  bool plan = false;
  rdmad::RailRequest request;
};

int Plan(Context& ctx, rdmad::Client& client, const rdmad::RailRequest& request) {
  auto plan = client.PlanRails(request);
  if (!plan.ok()) return ReportError(ctx, plan.status());
  if (ctx.globals.json) {
    PrintJson(ctx, RecordJson(*plan));
  } else {
    PrintText(ctx, FormatRailPlan(*plan));
  }
  return kExitOk;
}

int Topo(Context& ctx, const TopoArgs& args) {
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  if (args.plan) return Plan(ctx, *client, args.request);
  auto topology = client->GetTopology();
  if (!topology.ok()) return ReportError(ctx, topology.status());
  if (ctx.globals.json) {
    PrintJson(ctx, TopologyJson(*topology));
  } else {
    PrintText(ctx, FormatTopology(*topology));
  }
  return kExitOk;
}

int Env(Context& ctx, const std::string& tool, const rdmad::RailRequest& request) {
  int code = kExitOk;
  auto client = ConnectOrReport(ctx, &code);
  if (!client) return code;
  auto plan = client->PlanRails(request);
  if (!plan.ok()) return ReportError(ctx, plan.status());
  ToolEnv env = EnvFor(tool, *plan);
  if (ctx.globals.json) {
    Json vars = Json::object();
    for (const auto& [name, value] : env.vars) vars[name] = value;
    PrintJson(
        ctx,
        Json{{"tool", tool}, {"env", vars}, {"notes", env.notes}, {"plan", RecordJson(*plan)}});
  } else {
    PrintText(ctx, FormatEnv(tool, *plan, env));
  }
  return kExitOk;
}

}  // namespace

void DeclareEnv(CLI::App& verb, Context& ctx) {
  auto tool = std::make_shared<std::string>();
  auto args = std::make_shared<TopoArgs>();
  verb.add_option("TOOL", *tool, "nccl, ucx or nvshmem")
      ->required()
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(kEnvTools), std::end(kEnvTools))));
  verb.add_option("--gpu", args->request.gpu,
                  "the GPU the tool's process drives: index or PCI address");
  verb.add_option("--cpus", args->request.cpus, "near these CPUs instead (default: rdmactl's own)");
  verb.add_option("--rails", args->request.rails, "this many devices, nearest first")
      ->check(CLI::Range(1, 64));
  RunsWith(verb, ctx, [&ctx, tool, args] { return Env(ctx, *tool, args->request); });
}

void DeclareTopo(CLI::App& verb, Context& ctx) {
  auto args = std::make_shared<TopoArgs>();
  verb.add_flag("--plan", args->plan,
                "explain the rails rdmad would plan (recording nothing) instead of the matrix");
  verb.add_option("--gpu", args->request.gpu, "--plan near this GPU: its index or PCI address");
  verb.add_option("--cpus", args->request.cpus,
                  "--plan near these CPUs, a list such as 0-7,16 (default: rdmactl's own)");
  verb.add_option("--rails", args->request.rails, "--plan this many devices, nearest first")
      ->check(CLI::Range(1, 64));
  RunsWith(verb, ctx, [&ctx, args] { return Topo(ctx, *args); });
}

}  // namespace rdmactl
