// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/discovery/probe_wait.h"

#include <algorithm>

namespace rdmad {

void ProbeWait::Probed(const std::string& device) { waits_.erase(device); }

ProbeWait::Verdict ProbeWait::Failed(const std::string& device, Clock::time_point now,
                                     bool* first_warning) {
  *first_warning = false;
  Wait& wait = waits_.try_emplace(device, Wait{now}).first->second;
  if (now - wait.since < grace_) return Verdict::kHoldBack;
  *first_warning = !wait.warned;
  wait.warned = true;
  return Verdict::kListUnprobed;
}

void ProbeWait::Keep(const std::set<std::string>& listed) {
  std::erase_if(waits_, [&](const auto& entry) { return listed.count(entry.first) == 0; });
}

bool ProbeWait::holding(Clock::time_point now) const {
  return std::any_of(waits_.begin(), waits_.end(),
                     [&](const auto& entry) { return now - entry.second.since < grace_; });
}

}  // namespace rdmad
