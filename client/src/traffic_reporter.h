// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// TrafficReporter: a Client's account of its channels' traffic to rdmad
// (rdmad.v1.ReportTraffic; docs/operations.md, "Metrics"). Every interval a
// thread of its own snapshots the meters of the channels registered with
// it and sends, in one call, the totals of those that moved since the last
// report, with the Connects timed since (cold or pooled). Nothing is sent
// while nothing changed, and the data path never waits for it: a meter's
// counters are atomics the thread only reads. A channel's last account goes
// with its ReleaseChannel (HeldChannel::Close), so a channel closed between
// two reports loses nothing; an application that dies loses at most its
// last interval. A report that fails is sent again with the next (totals
// are cumulative; timings are kept up to kMaxPending).
//
// Thread safety: every method may be called from any thread. The
// destructor sends what is pending once more (bounded by the call
// timeout) and joins the thread.

#ifndef RDMAD_CLIENT_SRC_TRAFFIC_REPORTER_H_
#define RDMAD_CLIENT_SRC_TRAFFIC_REPORTER_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "client/src/traffic_meter.h"
#include "common/traffic.h"
#include "rdmad/v1/rdmad.grpc.pb.h"

namespace rdmad::internal {

class TrafficReporter {
 public:
  static constexpr size_t kMaxPending = 4096;  // as the daemon takes in one report

  // interval 0: nothing is reported (Make returns null).
  static std::shared_ptr<TrafficReporter> Make(std::shared_ptr<grpc::Channel> rpc,
                                               std::chrono::milliseconds interval);
  ~TrafficReporter();

  // Reports channel_id's meter from now on; it must stay valid until
  // Remove(channel_id) returns.
  void Add(uint64_t channel_id, const TrafficMeter* meter);
  void Remove(uint64_t channel_id);
  // An application's Connect returned channel_id after took.
  void Connected(uint64_t channel_id, bool pooled, std::chrono::nanoseconds took);

 private:
  struct Watched {
    const TrafficMeter* meter = nullptr;
    TrafficTotals reported;  // what the daemon has
  };
  TrafficReporter(std::shared_ptr<grpc::Channel> rpc, std::chrono::milliseconds interval);
  void Run();
  void Kick();  // mu_ held
  // One report of what changed (mu_ not held); false when the call failed.
  bool ReportOnce(std::chrono::milliseconds timeout);

  std::unique_ptr<v1::Rdmad::Stub> stub_;
  const std::chrono::milliseconds interval_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, Watched> watched_;      // guarded by mu_
  std::vector<v1::ConnectTiming> connects_;  // not yet reported; guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  bool idle_ = false;  // the thread waits for anything to report; guarded by mu_
  std::thread thread_;                       // started by the first Add or Connected
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_TRAFFIC_REPORTER_H_
