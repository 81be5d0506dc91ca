// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/bench_stats.h"

#include <algorithm>
#include <utility>

namespace rdmactl {
namespace {

constexpr double kMinPeakWindow = 0.010;  // seconds
constexpr double kPeakFraction = 0.05;    // of the run

}  // namespace

void TimelineRecorder::Add(double t, uint64_t bytes, uint64_t messages) {
  last_ = {t, bytes, messages};
  pending_ = true;
  if (timeline_.empty() || t - timeline_.back().t >= kGranularity) {
    timeline_.push_back(last_);
    pending_ = false;
  }
}

Timeline TimelineRecorder::Finish() {
  if (pending_) timeline_.push_back(last_);
  pending_ = false;
  return std::move(timeline_);
}

Timeline MergeTimelines(const std::vector<Timeline>& timelines) {
  struct Event {
    double t;
    size_t channel;
    const Progress* p;
  };
  std::vector<Event> events;
  for (size_t c = 0; c < timelines.size(); ++c) {
    for (const Progress& p : timelines[c]) events.push_back({p.t, c, &p});
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.t < b.t; });
  std::vector<Progress> last(timelines.size());
  Progress sum;
  Timeline merged;
  for (const Event& e : events) {
    Progress& mine = last[e.channel];
    sum.bytes += e.p->bytes - mine.bytes;
    sum.messages += e.p->messages - mine.messages;
    mine = *e.p;
    sum.t = e.t;
    if (!merged.empty() && merged.back().t == e.t) {
      merged.back() = sum;
    } else {
      merged.push_back(sum);
    }
  }
  return merged;
}

double PeakWindow(double seconds) { return std::max(kMinPeakWindow, seconds * kPeakFraction); }

double PeakRate(const Timeline& timeline, double window) {
  // The stretch ending at each event that starts at the latest point
  // (the run's start included) at least window earlier.
  auto at = [&](size_t k) { return k == 0 ? Progress{} : timeline[k - 1]; };
  double best = 0;
  size_t start = 0;  // index into at(): 0 is the run's start
  for (size_t end = 1; end <= timeline.size(); ++end) {
    const Progress e = at(end);
    while (start + 1 < end && e.t - at(start + 1).t >= window) ++start;
    const Progress s = at(start);
    double span = e.t - s.t;
    if (span < window || span <= 0) continue;
    best = std::max(best, double(e.bytes - s.bytes) / span);
  }
  return best;
}

Throughput Summarize(const Timeline& timeline, double seconds) {
  Throughput r;
  if (timeline.empty()) return r;
  r.bytes = timeline.back().bytes;
  r.messages = timeline.back().messages;
  r.seconds = seconds > 0 ? seconds : timeline.back().t;
  if (r.seconds <= 0) return r;
  double avg = double(r.bytes) / r.seconds;
  double peak = std::max(avg, PeakRate(timeline, PeakWindow(r.seconds)));
  r.avg_mbps = avg / kMegabyte;
  r.peak_mbps = peak / kMegabyte;
  r.avg_gbps = avg / kGigabit;
  r.peak_gbps = peak / kGigabit;
  r.msg_rate_mps = double(r.messages) / r.seconds / 1e6;
  return r;
}

double CpuPercent(double cpu_seconds, double wall_seconds) {
  return wall_seconds > 0 ? 100.0 * cpu_seconds / wall_seconds : 0;
}

}  // namespace rdmactl
