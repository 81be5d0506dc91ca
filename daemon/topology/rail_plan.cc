// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/topology/rail_plan.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <tuple>

namespace rdmad {
namespace {

constexpr int kMaxRails = 64;
constexpr size_t kMaxPlaceText = 256;

std::string PathWords(PathType type) {
  switch (type) {
    case PathType::kSelf: return "the device itself";
    case PathType::kPix: return "at most one PCIe switch away";
    case PathType::kPxb: return "behind several PCIe bridges";
    case PathType::kPhb: return "through the PCIe host bridge";
    case PathType::kNode: return "on the same NUMA node";
    case PathType::kSys: return "across NUMA nodes";
  }
  return "";
}

// Caller text in an error, at most 64 bytes of it.
std::string Shown(const std::string& text) {
  return "\"" + (text.size() <= 64 ? text : text.substr(0, 64) + "...") + "\"";
}

bool AllDigits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(),
                                      [](unsigned char c) { return std::isdigit(c) != 0; });
}

// A GPU by index or PCI address ("11:00.0" is in domain 0000).
const TopoGpu* FindGpu(const Topology& topology, std::string text) {
  if (AllDigits(text) && text.size() <= 4) {
    int index = std::stoi(text);
    for (const TopoGpu& gpu : topology.gpus) {
      if (gpu.index == index) return &gpu;
    }
    return nullptr;
  }
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  if (std::count(text.begin(), text.end(), ':') == 1) text = "0000:" + text;
  return topology.FindGpu(text);
}

// NODE for a device local to one of cpus (every CPU when empty), SYS else.
PathType CpuPath(const TopoNic& nic, const std::set<int>& cpus) {
  std::vector<int> local;
  if (nic.place.address.empty() || !ParseCpuList(nic.place.cpus, &local) || local.empty()) {
    return cpus.empty() && !nic.place.address.empty() ? PathType::kNode : PathType::kSys;
  }
  if (cpus.empty()) return PathType::kNode;
  for (int cpu : local) {
    if (cpus.count(cpu)) return PathType::kNode;
  }
  return PathType::kSys;
}

int OpenPidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return int(syscall(SYS_pidfd_open, pid, 0));
#else
  return -1;
#endif
}

}  // namespace

bool ParseCpuList(const std::string& text, std::vector<int>* cpus) {
  cpus->clear();
  if (text.empty()) return true;
  size_t at = 0;
  while (at <= text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    std::string part = text.substr(at, end - at);
    size_t dash = part.find('-');
    std::string first = part.substr(0, dash);
    std::string last = dash == std::string::npos ? first : part.substr(dash + 1);
    if (!AllDigits(first) || !AllDigits(last) || first.size() > 5 || last.size() > 5) return false;
    int lo = std::stoi(first), hi = std::stoi(last);
    if (lo > hi || hi - lo > 65536 || cpus->size() > 65536) return false;
    for (int c = lo; c <= hi; ++c) cpus->push_back(c);
    at = end + 1;
  }
  return true;
}

RailPlanner::~RailPlanner() {
  for (auto& [pid, process] : processes_) close(process.pidfd);
}

void RailPlanner::PruneLocked() {
  for (auto it = processes_.begin(); it != processes_.end();) {
    pollfd p{it->second.pidfd, POLLIN, 0};
    if (poll(&p, 1, 0) > 0) {  // the process exited
      close(it->second.pidfd);
      it = processes_.erase(it);
    } else {
      ++it;
    }
  }
}

Status RailPlanner::RecordLocked(pid_t pid, uid_t uid, const std::string& place,
                                 const RailPlan& plan) {
  auto it = processes_.find(pid);
  if (it == processes_.end()) {
    size_t of_uid = 0;
    for (const auto& [other, process] : processes_) of_uid += process.uid == uid;
    if (of_uid >= kMaxProcessesPerUid || processes_.size() >= kMaxProcesses) {
      return Status::ResourceExhausted(
          "rail plans: at most " + std::to_string(kMaxProcessesPerUid) +
          " planning processes per uid and " + std::to_string(kMaxProcesses) + " in all");
    }
    int pidfd = OpenPidfd(pid);
    if (pidfd < 0) return Status::Ok();  // gone already, or not ours to watch: not recorded
    it = processes_.emplace(pid, Process{.pidfd = pidfd, .uid = uid, .plans = {}}).first;
  }
  Process& process = it->second;
  if (!process.plans.count(place) && process.plans.size() >= kMaxPlacesPerProcess) {
    return Status::ResourceExhausted("rail plans: at most " + std::to_string(kMaxPlacesPerProcess) +
                                     " places per process");
  }
  process.plans[place] = RailAssignment{.pid = pid, .uid = uid, .place = place, .plan = plan};
  return Status::Ok();
}

StatusOr<RailPlan> RailPlanner::Plan(const Topology& topology,
                                     const std::vector<std::string>& usable,
                                     const RailRequest& request, pid_t pid, uid_t uid) {
  if (request.rails < 1 || request.rails > kMaxRails) {
    return Status::InvalidArgument("rails: 1.." + std::to_string(kMaxRails));
  }
  if (request.gpu.size() > kMaxPlaceText || request.cpus.size() > kMaxPlaceText * 16) {
    return Status::InvalidArgument("gpu or cpus: too long");
  }
  std::vector<int> cpu_list;
  if (!ParseCpuList(request.cpus, &cpu_list)) {
    return Status::InvalidArgument("cpus: a CPU list such as \"0-7,16\", not " +
                                   Shown(request.cpus));
  }
  const std::set<int> cpus(cpu_list.begin(), cpu_list.end());
  const TopoGpu* gpu = nullptr;
  RailPlan plan;
  if (!request.gpu.empty()) {
    gpu = FindGpu(topology, request.gpu);
    if (gpu == nullptr) {
      return Status::NotFound("no GPU " + Shown(request.gpu) + " in this host's topology (" +
                              std::to_string(topology.gpus.size()) +
                              " GPUs; rdmactl topo lists them)");
    }
    plan.near = "GPU " + std::to_string(gpu->index) + " (" + gpu->place.address + ")";
  } else {
    plan.near = request.cpus.empty() ? "any CPU" : "CPUs " + request.cpus;
  }
  struct Candidate {
    const TopoNic* nic;
    PathType path;
    int load;
  };
  std::vector<Candidate> candidates;
  std::lock_guard lock(mu_);
  PruneLocked();
  const std::string place = gpu != nullptr ? "gpu " + gpu->place.address : "cpus " + request.cpus;
  std::map<std::string, int> load = LoadLocked();
  if (auto it = processes_.find(pid); it != processes_.end()) {  // planning again: not counted
    if (auto again = it->second.plans.find(place); again != it->second.plans.end()) {
      for (const PlannedRail& rail : again->second.plan.rails) --load[rail.device];
    }
  }
  for (const TopoNic& nic : topology.nics) {
    if (std::find(usable.begin(), usable.end(), nic.name) == usable.end()) continue;
    PathType path = gpu != nullptr ? PathBetween(nic.place, gpu->place) : CpuPath(nic, cpus);
    candidates.push_back({&nic, path, load[nic.name]});
  }
  if (candidates.empty()) {
    return Status::FailedPrecondition(
        "no usable RDMA device for a rail (devices.include/exclude, or no ACTIVE port)");
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.path, a.load, a.nic->name) < std::tie(b.path, b.load, b.nic->name);
  });
  candidates.resize(std::min<size_t>(candidates.size(), size_t(request.rails)));
  for (const Candidate& c : candidates) {
    PlannedRail rail;
    rail.device = c.nic->name;
    rail.path = c.path;
    rail.sharing = c.load;
    rail.netdev = c.nic->netdev;
    plan.rails.push_back(std::move(rail));
  }
  const Candidate& first = candidates.front();
  plan.reason = plan.near + ": " + first.nic->name + " is " +
                std::string(PathTypeName(first.path)) + ", " + PathWords(first.path) +
                "; nearest of " + std::to_string(usable.size()) + " usable device(s), " +
                std::to_string(first.load) + " other live plan(s) on it before this one";
  if (pid > 0) RDMAD_RETURN_IF_ERROR(RecordLocked(pid, uid, place, plan));
  return plan;
}

RailState RailPlanner::Snapshot() {
  std::lock_guard lock(mu_);
  PruneLocked();
  RailState state;
  state.load = LoadLocked();
  for (const auto& [pid, process] : processes_) {
    for (const auto& [place, assignment] : process.plans) state.plans.push_back(assignment);
  }
  return state;
}

std::map<std::string, int> RailPlanner::LoadLocked() const {
  std::map<std::string, int> load;
  for (const auto& [pid, process] : processes_) {
    for (const auto& [place, assignment] : process.plans) {
      for (const PlannedRail& rail : assignment.plan.rails) ++load[rail.device];
    }
  }
  return load;
}

}  // namespace rdmad
