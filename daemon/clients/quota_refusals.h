// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// QuotaRefusals: how many requests each quota of the daemon refused, by the
// config key that sets it ("limits.max_channels_per_uid", ...), for
// /metrics (rdmad_quota_refusals_total{quota}). The quotas' owners count a
// refusal where they answer RESOURCE_EXHAUSTED; the keys are the config's,
// so the labels are bounded. Counts only grow; a scrape takes a copy.
//
// Thread safety: every method may be called from any thread.

#ifndef RDMAD_DAEMON_CLIENTS_QUOTA_REFUSALS_H_
#define RDMAD_DAEMON_CLIENTS_QUOTA_REFUSALS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace rdmad {

class QuotaRefusals {
 public:
  void Count(std::string_view quota) {
    std::lock_guard lock(mu_);
    auto it = counts_.find(quota);
    if (it == counts_.end()) it = counts_.emplace(std::string(quota), 0).first;
    ++it->second;
  }
  std::map<std::string, uint64_t, std::less<>> Snapshot() const {
    std::lock_guard lock(mu_);
    return counts_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, uint64_t, std::less<>> counts_;
};

// Counts quota in refusals, if there are any (a part built without one).
inline void CountRefusal(QuotaRefusals* refusals, std::string_view quota) {
  if (refusals != nullptr) refusals->Count(quota);
}

}  // namespace rdmad

#endif  // RDMAD_DAEMON_CLIENTS_QUOTA_REFUSALS_H_
