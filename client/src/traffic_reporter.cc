// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/traffic_reporter.h"

#include <utility>

#include "client/src/client_log.h"
#include "common/traffic_convert.h"

namespace rdmad::internal {
namespace {

constexpr std::chrono::seconds kReportTimeout{5};
constexpr std::chrono::seconds kLastReportTimeout{1};

}  // namespace

std::shared_ptr<TrafficReporter> TrafficReporter::Make(std::shared_ptr<grpc::Channel> rpc,
                                                       std::chrono::milliseconds interval) {
  if (interval.count() <= 0) return nullptr;
  return std::shared_ptr<TrafficReporter>(new TrafficReporter(std::move(rpc), interval));
}

TrafficReporter::TrafficReporter(std::shared_ptr<grpc::Channel> rpc,
                                 std::chrono::milliseconds interval)
    : stub_(v1::Rdmad::NewStub(std::move(rpc))), interval_(interval) {}

TrafficReporter::~TrafficReporter() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

void TrafficReporter::Add(uint64_t channel_id, const TrafficMeter* meter) {
  std::lock_guard lock(mu_);
  watched_[channel_id] = Watched{meter, {}};
  Kick();
}

// Starts the thread, or wakes it if it sleeps for want of anything to
// report (mu_ held). Only then: a wake-up per Connect or channel would put a
// context switch on the caller's path (an acquire from the pool is a few
// microseconds), while the thread's timed wait needs none.
void TrafficReporter::Kick() {
  if (!thread_.joinable()) {
    thread_ = std::thread([this] { Run(); });
  } else if (idle_) {
    cv_.notify_all();
  }
}

void TrafficReporter::Remove(uint64_t channel_id) {
  std::lock_guard lock(mu_);
  watched_.erase(channel_id);
}

void TrafficReporter::Connected(uint64_t channel_id, bool pooled, std::chrono::nanoseconds took) {
  std::lock_guard lock(mu_);
  if (connects_.size() >= kMaxPending) return;  // the daemon is not taking them
  v1::ConnectTiming& t = connects_.emplace_back();
  t.set_channel_id(channel_id);
  t.set_pooled(pooled);
  t.set_duration_ns(uint64_t(took.count() > 0 ? took.count() : 0));
  Kick();
}

void TrafficReporter::Run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    idle_ = true;
    cv_.wait(lock, [this] { return stopping_ || !watched_.empty() || !connects_.empty(); });
    idle_ = false;
    if (cv_.wait_for(lock, interval_, [this] { return stopping_; })) break;
    lock.unlock();
    ReportOnce(kReportTimeout);
    lock.lock();
  }
  lock.unlock();
  ReportOnce(kLastReportTimeout);  // the timings since the last
}

bool TrafficReporter::ReportOnce(std::chrono::milliseconds timeout) {
  v1::ReportTrafficRequest request;
  std::vector<std::pair<uint64_t, TrafficTotals>> sent;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, w] : watched_) {
      if (sent.size() == kMaxPending) break;
      if (!w.meter->MovedSince(w.reported)) continue;  // idle: its histogram is not read
      TrafficTotals now = w.meter->Snapshot();
      v1::ChannelTraffic* row = request.add_channels();
      ToProto(now, row);
      row->set_channel_id(id);
      sent.emplace_back(id, now);
    }
    for (v1::ConnectTiming& t : connects_) *request.add_connects() = std::move(t);
    connects_.clear();
  }
  if (request.channels_size() == 0 && request.connects_size() == 0) return true;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  v1::ReportTrafficResponse response;
  grpc::Status status = stub_->ReportTraffic(&context, request, &response);
  std::lock_guard lock(mu_);
  if (!status.ok()) {
    ClientLog().debug("ReportTraffic: {}", status.error_message());
    for (v1::ConnectTiming& t : *request.mutable_connects()) {
      if (connects_.size() < kMaxPending) connects_.push_back(std::move(t));
    }
    return false;
  }
  for (auto& [id, totals] : sent) {
    auto it = watched_.find(id);
    if (it != watched_.end()) it->second.reported = totals;
  }
  return true;
}

}  // namespace rdmad::internal
