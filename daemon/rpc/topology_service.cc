// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The local API's topology calls (LocalService, declared in
// local_service.h): GetTopology fills the daemon's last topology, with the
// path between every NIC and every GPU and NIC, and the live rail plans the
// caller may see; PlanRails validates, asks the core for a plan, fills it.

#include <algorithm>

#include "daemon/rpc/grpc_status.h"
#include "daemon/rpc/local_service.h"
#include "daemon/topology/rail_plan.h"
#include "daemon/topology/topology.h"

namespace rdmad {
namespace {

void ToProto(const PciPlace& place, v1::TopologyPlace* out) {
  out->set_pci_address(place.address);
  for (const std::string& bridge : place.bridges) out->add_pcie_path(bridge);
  out->set_numa_node(place.numa_node);
  out->set_cpus(place.cpus);
}

void ToProto(const RailPlan& plan, v1::RailPlan* out) {
  out->set_near(plan.near);
  for (const PlannedRail& rail : plan.rails) {
    v1::PlannedRail* row = out->add_rails();
    row->set_device(rail.device);
    row->set_path(std::string(PathTypeName(rail.path)));
    row->set_sharing(uint32_t(rail.sharing));
    row->set_port(uint32_t(rail.port));
    row->set_gid_index(rail.gid_index);
    row->set_gid_type(rail.gid_type);
    row->set_netdev(rail.netdev);
  }
  out->set_reason(plan.reason);
  out->set_traffic_class(uint32_t(plan.traffic_class));
}

void ToProto(const Topology& topology, const RailState& rails, const Caller& caller,
             v1::GetTopologyResponse* out) {
  out->set_source(topology.source);
  out->set_machine(topology.machine);
  out->set_numa_nodes(uint32_t(topology.numa_nodes));
  out->set_error(topology.error);
  for (const TopoNic& nic : topology.nics) {
    v1::TopologyNic* row = out->add_nics();
    row->set_name(nic.name);
    row->set_netdev(nic.netdev);
    ToProto(nic.place, row->mutable_place());
    for (const TopoGpu& gpu : topology.gpus) {
      row->add_to_gpus(std::string(PathTypeName(PathBetween(nic.place, gpu.place))));
    }
    for (const TopoNic& other : topology.nics) {
      row->add_to_nics(std::string(
          PathTypeName(&other == &nic ? PathType::kSelf : PathBetween(nic.place, other.place))));
    }
    row->set_usable(std::find(rails.usable.begin(), rails.usable.end(), nic.name) !=
                    rails.usable.end());
    auto load = rails.load.find(nic.name);
    row->set_plans(load == rails.load.end() ? 0 : uint32_t(load->second));
  }
  for (const RailAssignment& a : rails.plans) {
    if (!caller.Reaches(a.uid)) continue;
    v1::RailAssignment* row = out->add_plans();
    row->set_pid(uint32_t(a.pid));
    row->set_uid(uint32_t(a.uid));
    row->set_place(a.place);
    ToProto(a.plan, row->mutable_plan());
  }
  for (const TopoGpu& gpu : topology.gpus) {
    v1::TopologyGpu* row = out->add_gpus();
    row->set_index(uint32_t(gpu.index));
    row->set_vendor(gpu.vendor);
    row->set_model(gpu.model);
    row->set_vendor_id(gpu.vendor_id);
    row->set_device_id(gpu.device_id);
    row->set_class_id(gpu.class_id);
    ToProto(gpu.place, row->mutable_place());
  }
}

}  // namespace

grpc::ServerUnaryReactor* LocalService::GetTopology(grpc::CallbackServerContext* context,
                                                    const v1::GetTopologyRequest*,
                                                    v1::GetTopologyResponse* response) {
  std::shared_ptr<const Topology> topology = core_->topology();
  if (topology == nullptr) {
    return Reply(context, Status::Unavailable("this daemon reads no topology"));
  }
  ToProto(*topology, core_->Rails(), CallerOf(context), response);
  return Reply(context, Status::Ok());
}

grpc::ServerUnaryReactor* LocalService::PlanRails(grpc::CallbackServerContext* context,
                                                  const v1::PlanRailsRequest* request,
                                                  v1::RailPlan* response) {
  Caller caller = CallerOf(context);
  RailRequest rails{.gpu = request->gpu(),
                    .cpus = request->cpus(),
                    .rails = int(std::clamp<uint32_t>(request->rails(), 1, 1u << 16))};
  // Recorded for the caller's own process, as the kernel names it.
  pid_t pid = request->explain_only() || caller.uid == kNoUid ? 0 : caller.pid;
  auto plan = core_->PlanRails(rails, pid, caller.uid);
  if (plan.ok()) ToProto(*plan, response);
  return Reply(context, plan.status());
}

}  // namespace rdmad
