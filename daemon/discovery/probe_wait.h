// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ProbeWait decides what a rescan does with a device that sysfs lists but
// that libibverbs cannot probe yet. `rdma link add` and driver loads
// register the device (sysfs, the "infiniband" uevent) a little before its
// uverbs node, so the first rescan after the uevent can find a device that
// no application could open yet. Such a device is held back, and rescanned
// soon, for up to a grace period; a device still not probed by then is
// listed with its sysfs facts only (say ib_uverbs is not loaded), with one
// warning, and probed again by later rescans.
//
// Thread safety: none; the monitor's thread only.

#ifndef RDMAD_DAEMON_DISCOVERY_PROBE_WAIT_H_
#define RDMAD_DAEMON_DISCOVERY_PROBE_WAIT_H_

#include <chrono>
#include <map>
#include <set>
#include <string>

namespace rdmad {

class ProbeWait {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Verdict { kHoldBack, kListUnprobed };

  explicit ProbeWait(Clock::duration grace) : grace_(grace) {}

  // The device probed: forget any wait.
  void Probed(const std::string& device);
  // The device's probe failed at `now`: hold it back while within the grace
  // since its first failure, then list it unprobed. `first_warning` is set
  // the first time kListUnprobed is returned for this wait.
  Verdict Failed(const std::string& device, Clock::time_point now, bool* first_warning);
  // Forgets the devices not in `listed` (gone from sysfs: a device of that
  // name later is a new one, with a new grace).
  void Keep(const std::set<std::string>& listed);
  // Whether some device is held back (the monitor then rescans soon).
  bool holding(Clock::time_point now) const;

 private:
  struct Wait {
    Clock::time_point since;
    bool warned = false;
  };
  const Clock::duration grace_;
  std::map<std::string, Wait> waits_;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_DISCOVERY_PROBE_WAIT_H_
