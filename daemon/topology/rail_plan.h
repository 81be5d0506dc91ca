// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The host-wide rail plan: which RDMA device(s) a process should use, given
// where it runs (a GPU, or its CPUs), so that each process gets the NICs
// nearest to it and processes that are equally near are spread across
// them. Only this daemon sees every process of the host, so the balance is
// host-wide: a plan counts the plans of every live process before it.
//
// Nearness is the topology's path (topology.h): to a GPU in NCCL's terms
// (PIX nearest, SYS farthest); to a set of CPUs, NODE for a device whose
// local CPUs are among them and SYS for one whose are not. Among the
// nearest, the device fewest live plans use is chosen (then by name). A
// process's plans end when it exits (pidfd) or plans again for the same
// place. Bounded: at most kMaxPlacesPerProcess plans per process,
// kMaxProcessesPerUid planning processes per uid and kMaxProcesses in all
// (RESOURCE_EXHAUSTED beyond), one pidfd per process.
//
// Thread safety: every method may be called from any thread.

#ifndef RDMAD_DAEMON_TOPOLOGY_RAIL_PLAN_H_
#define RDMAD_DAEMON_TOPOLOGY_RAIL_PLAN_H_

#include <sys/types.h>

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "daemon/topology/topology.h"
#include "rdmad/status.h"

namespace rdmad {

struct RailRequest {
  std::string gpu;   // "": by CPUs; a GPU's index ("3") or PCI address ("0000:11:00.0")
  std::string cpus;  // the process's allowed CPUs as a list ("0-7,16"); "": every CPU
  int rails = 1;     // how many devices, nearest first (at most the usable ones)
};

struct PlannedRail {
  std::string device;
  PathType path = PathType::kSys;  // from what the plan was made for
  int sharing = 0;                 // other live plans on this device before this one
  // How to use it (the daemon fills these from the inventory and the GID
  // policy): its port, the GID index and type the policy prefers there (-1:
  // none known), its netdev.
  int port = 1;
  int gid_index = -1;
  std::string gid_type;  // "RoCE v2", "IB", ""
  std::string netdev;
};

struct RailPlan {
  std::string near;  // what it was placed near: "GPU 0 (0000:11:00.0)", "CPUs 0-7"
  std::vector<PlannedRail> rails;
  std::string reason;     // one line: why these
  int traffic_class = 0;  // qp.traffic_class, for the tools' own settings
};

// A live plan, for rdmactl topo.
struct RailAssignment {
  pid_t pid = 0;
  uid_t uid = 0;
  std::string place;  // the request's gpu, or "cpus 0-7"
  RailPlan plan;
};

// What rdmactl topo shows of the rails: the devices they may use now, how
// many live plans use each, and the plans.
struct RailState {
  std::vector<std::string> usable;
  std::map<std::string, int> load;
  std::vector<RailAssignment> plans;
};

// The CPUs of a list ("0-3,8,10-11"); false for text that is not one.
bool ParseCpuList(const std::string& text, std::vector<int>* cpus);

inline constexpr size_t kMaxPlacesPerProcess = 64;
inline constexpr size_t kMaxProcessesPerUid = 1024;
inline constexpr size_t kMaxProcesses = 8192;

class RailPlanner {
 public:
  RailPlanner() = default;
  ~RailPlanner();
  RailPlanner(const RailPlanner&) = delete;
  RailPlanner& operator=(const RailPlanner&) = delete;

  // Plans for pid (0: not recorded) over the usable devices of topology.
  // NOT_FOUND for a GPU the topology lacks; FAILED_PRECONDITION when no
  // device is usable; INVALID_ARGUMENT for a malformed request;
  // RESOURCE_EXHAUSTED past a bound.
  StatusOr<RailPlan> Plan(const Topology& topology, const std::vector<std::string>& usable,
                          const RailRequest& request, pid_t pid, uid_t uid = 0);
  // The live plans and how many use each device, under one lock (those of
  // processes that exited are dropped first); usable is left to the caller.
  RailState Snapshot();

 private:
  struct Process {
    int pidfd = -1;  // readable once the process exits
    uid_t uid = 0;
    std::map<std::string, RailAssignment> plans;  // by place
  };
  void PruneLocked();
  std::map<std::string, int> LoadLocked() const;
  // Records plan for pid; RESOURCE_EXHAUSTED past a bound.
  Status RecordLocked(pid_t pid, uid_t uid, const std::string& place, const RailPlan& plan);

  std::mutex mu_;
  std::map<pid_t, Process> processes_;  // guarded by mu_
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_TOPOLOGY_RAIL_PLAN_H_
