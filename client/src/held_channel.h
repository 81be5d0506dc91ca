// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// A channel's lifeline to this host's rdmad (docs/channels.md, "Closing"
// and "When rdmad restarts").
//
// HoldStream keeps the local API's HoldChannel stream open for one
// channel, with gRPC's callback API (ClientReadReactors: no thread per
// channel). The channels of a batch (OpenBatch) start on one stream
// together; each is released on its own (the stream is cancelled once all
// are), and when that stream breaks each re-attaches on a stream of its
// own. It is opened as soon as the daemons have exchanged the
// endpoints, before the data path is up; Attach() then names the channel
// to fail. When the daemon says the channel is closed (the peer closed it,
// the peer daemon was lost for good) the channel is aborted with
// UNAVAILABLE and the reason (AbortableChannel), also if that happened
// before Attach. When the stream breaks because rdmad went away (killed,
// stopped, restarting) the channel is kept: the data path does not need
// the daemon. Up to reattach_timeout, a GetStatus probe (wait_for_ready)
// waits for the next rdmad, and a new HoldChannel call carrying the
// channel's lease then has it take the channel back; only if none comes,
// or it does not know the channel, is the channel aborted with the reason.
// The hold itself never has a deadline; the window closes when a daemon
// takes the hold (its initial metadata), so that a later restart opens a
// window of its own. Release() tells the daemon that the application let go (ReleaseChannel:
// "closed by the application"), then cancels the stream; Wait() returns once gRPC is done with
// every call.
//
// HeldChannel is the Channel the application gets: the transport's channel
// plus its HoldStream; every call goes to the transport's channel
// (ForwardingChannel). Close() closes the transport (which tells the peer
// on the data path first, so that its messages still arrive), then
// releases the hold; the destructor does the same and waits.
//
// Thread safety: HoldStream's methods may be called from any thread; its
// callbacks come from gRPC's threads and only call Abort or start the next
// call. HeldChannel is as rdmad::Channel.

#ifndef RDMAD_CLIENT_SRC_HELD_CHANNEL_H_
#define RDMAD_CLIENT_SRC_HELD_CHANNEL_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "client/src/abortable_channel.h"
#include "client/src/forwarding_channel.h"
#include "client/src/traffic_reporter.h"
#include "rdmad/channel.h"
#include "rdmad/v1/rdmad.grpc.pb.h"

namespace rdmad::internal {

// How a stream to rdmad (HoldChannel, Listen) ends when rdmad went away
// (killed, stopping, restarting) rather than because the daemon ended it.
bool DaemonWentAway(grpc::StatusCode code);

class HoldStream final {
 public:
  // Opens the stream for channel_id through stub (on the daemon's Unix
  // socket; the stream's later calls share it).
  // lease: the daemon's lease for the channel (Connect/Accept), handed
  // back when re-attaching; empty: the channel fails when rdmad goes away.
  static std::unique_ptr<HoldStream> Open(std::shared_ptr<v1::Rdmad::Stub> stub,
                                          uint64_t channel_id, std::string lease,
                                          std::chrono::milliseconds reattach_timeout);
  // The lifelines of a batch's channels (ids[i], leases[i]), on one
  // stream.
  static std::vector<std::unique_ptr<HoldStream>> OpenBatch(
      std::shared_ptr<v1::Rdmad::Stub> stub, const std::vector<uint64_t>& ids,
      const std::vector<std::string>& leases, std::chrono::milliseconds reattach_timeout);
  ~HoldStream();  // Release() and Wait()

  // The channel to abort from now on (it must outlive this stream's
  // callbacks: call Wait() before destroying it).
  void Attach(AbortableChannel* channel);
  // Tells the daemon that the application let go (reason "" for a plain
  // close), then cancels the stream. Later calls do nothing.
  void Release(const std::string& reason = "");
  // The same with the application's last account of the channel's traffic.
  void Release(const std::string& reason, const TrafficTotals& traffic);
  // Tells the daemon the channel's rails (ReportChannel), asynchronously:
  // one report in flight, the newest one next. Nothing after Release.
  void ReportRails(const std::vector<ChannelRail>& rails);
  // Until gRPC is done with the stream, the release and the reports.
  void Wait();
  // Where the channel's traffic is reported (null: nowhere); set before
  // the channel is made.
  void SetReporter(std::shared_ptr<TrafficReporter> reporter) { reporter_ = std::move(reporter); }
  const std::shared_ptr<TrafficReporter>& reporter() const { return reporter_; }
  uint64_t channel_id() const { return channel_id_; }

 private:
  class Current;  // what the stream waits on: a call of its own, or its share of a batch's
  class Call;     // one HoldChannel call
  class Batch;    // one HoldChannel call for a batch's channels
  class Share;    // a channel's share of a Batch
  class Probe;    // waits for the next rdmad (GetStatus, wait_for_ready)
  struct Report {
    grpc::ClientContext context;
    v1::ReportChannelRequest request;
    v1::ReportChannelResponse response;
  };
  void SendReport();
  void Reported(const grpc::Status& status);
  void Release(const std::string& reason, const std::optional<TrafficTotals>& traffic);
  HoldStream(std::shared_ptr<v1::Rdmad::Stub> stub, uint64_t channel_id, std::string lease,
             std::chrono::milliseconds reattach_timeout);
  Call* NewCallLocked(bool reattach);  // mu_ held; start it without the lock
  Probe* NewProbeLocked();             // mu_ held; start it without the lock
  void OnClosedEvent(const std::string& reason);
  // The daemon took the hold (with the channel's current lease, if any):
  // the re-attach window closes.
  void OnHeld(std::string lease);
  void OnCallDone(const grpc::Status& status, bool reattach);
  void OnProbeDone(const grpc::Status& status);
  void Released(const grpc::Status& status);  // ReleaseChannel's answer
  void Finished(const std::optional<Status>& end);
  Status NotBack() const;
  void End(const Status& status);  // aborts the channel (now or once attached)

  const std::shared_ptr<v1::Rdmad::Stub> stub_;  // holds the client's grpc::Channel
  std::shared_ptr<TrafficReporter> reporter_;
  const uint64_t channel_id_;
  std::string lease_;  // the latest the daemon gave; guarded by mu_
  const std::chrono::milliseconds reattach_timeout_;
  grpc::ClientContext release_context_;
  v1::ReleaseChannelRequest release_request_;
  v1::ReleaseChannelResponse release_response_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Current>> calls_;  // the last one is current; guarded by mu_
  std::vector<std::unique_ptr<Probe>> probes_;   // guarded by mu_
  Probe* probing_ = nullptr;             // the probe in flight instead of a call; guarded by mu_
  AbortableChannel* channel_ = nullptr;  // guarded by mu_
  std::optional<Status> ended_;          // why the channel is over; guarded by mu_
  bool released_ = false;                // guarded by mu_
  bool releasing_ = false;               // a ReleaseChannel in flight; guarded by mu_
  std::unique_ptr<Report> reporting_;    // the ReportChannel in flight; guarded by mu_
  std::unique_ptr<Report> next_report_;  // the newest waiting for it; guarded by mu_
  bool active_ = false;                  // the current call is not done; guarded by mu_
  // Until when a broken lifeline may re-attach; guarded by mu_.
  std::optional<std::chrono::steady_clock::time_point> reattach_until_;
};

class HeldChannel final : public ForwardingChannel {
 public:
  // hold is attached to channel here.
  HeldChannel(std::unique_ptr<AbortableChannel> channel, std::unique_ptr<HoldStream> hold);
  ~HeldChannel() override;

  const ChannelInfo& info() const override { return channel_->info(); }
  void Close() override;
  // As the transport's, counted in the channel's meter (traffic_meter.h);
  // Write and Read then tell the daemon the rails' bytes (MaybeReport).
  Status Send(const void* buf, size_t len) override;
  Status TrySend(const void* buf, size_t len) override;
  Status Send(const MemoryRegion& region, size_t offset, size_t len) override;
  StatusOr<std::vector<uint8_t>> Recv(std::chrono::milliseconds timeout) override;
  StatusOr<size_t> RecvInto(const MemoryRegion& region, size_t offset, size_t max_len,
                            std::chrono::milliseconds timeout) override;
  Status Write(const MemoryRegion& local, size_t local_offset, const RegionDescriptor& remote,
               uint64_t remote_offset, size_t len) override;
  Status Read(const MemoryRegion& local, size_t local_offset, const RegionDescriptor& remote,
              uint64_t remote_offset, size_t len) override;
  // As the transport's (which counts the batch), then the rails' bytes.
  using Channel::Submit;
  StatusOr<std::unique_ptr<Transfer>> Submit(const std::vector<TransferOp>& ops,
                                             std::string_view notification) override;
  // The transport's, when the channel has no rails (a Post runs nothing of
  // this wrapper's); with rails each Post is a Submit here, which reports.
  StatusOr<std::unique_ptr<PreparedTransfer>> Prepare(const std::vector<TransferOp>& ops) override;

 protected:
  Channel* Enter() const override { return channel_.get(); }

 private:
  static constexpr std::chrono::milliseconds kReportInterval{200};
  void MaybeReport();
  Status OneSided(bool write, const MemoryRegion& local, size_t local_offset,
                  const RegionDescriptor& remote, uint64_t remote_offset, size_t len);

  TrafficMeter meter_;  // before channel_: the transport counts in it
  std::unique_ptr<AbortableChannel> channel_;
  std::unique_ptr<HoldStream> hold_;
  const bool has_rails_;  // further rails: MaybeReport has something to tell
  std::atomic<bool> reported_{false};
  std::atomic<int64_t> last_report_ns_{0};  // steady clock
  std::atomic<uint32_t> reported_up_{0};    // which rails were up in the last report
};

// The transport's channel (RdmaChannel or TcpChannel) as an
// AbortableChannel; INTERNAL for anything else.
StatusOr<std::unique_ptr<AbortableChannel>> AsAbortable(std::unique_ptr<Channel> channel);

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_HELD_CHANNEL_H_
