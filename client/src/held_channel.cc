// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/held_channel.h"

#include <algorithm>
#include <map>

#include "client/src/client_log.h"
#include "common/traffic_convert.h"

namespace rdmad::internal {
namespace {

// How long a close waits for the daemon to take note before the stream is
// cancelled anyway (the daemon then says "the application went away").
constexpr std::chrono::seconds kReleaseTimeout{2};

}  // namespace

bool DaemonWentAway(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::CANCELLED ||
         code == grpc::StatusCode::UNKNOWN || code == grpc::StatusCode::INTERNAL;
}

class HoldStream::Current {
 public:
  virtual ~Current() = default;
  virtual void Cancel() = 0;
};

class HoldStream::Call final : public Current, public grpc::ClientReadReactor<v1::ChannelEvent> {
 public:
  Call(HoldStream* owner, bool reattach) : owner_(owner), reattach_(reattach) {}

  // The hold has no deadline: it lasts as long as the channel.
  void Start(v1::Rdmad::Stub* stub, uint64_t channel_id, const std::string& lease) {
    request_.add_channel_ids(channel_id);
    if (reattach_) request_.add_leases(lease);
    stub->async()->HoldChannel(&context_, &request_, this);
    StartRead(&event_);
    StartCall();
  }
  void Cancel() override { context_.TryCancel(); }

  // The daemon took the hold: it sends its initial metadata then, with
  // the channel's current lease.
  void OnReadInitialMetadataDone(bool ok) override {
    if (!ok) return;
    const auto& metadata = context_.GetServerInitialMetadata();
    auto it = metadata.find("rdmad-lease-bin");
    owner_->OnHeld(it == metadata.end() ? std::string()
                                        : std::string(it->second.data(), it->second.size()));
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;  // the stream ended; OnDone follows with the status
    if (event_.closed()) {
      owner_->OnClosedEvent(event_.reason().empty() ? "the channel was closed" : event_.reason());
    }
    StartRead(&event_);
  }
  void OnDone(const grpc::Status& status) override { owner_->OnCallDone(status, reattach_); }

 private:
  HoldStream* const owner_;
  const bool reattach_;
  grpc::ClientContext context_;
  v1::HoldChannelRequest request_;
  v1::ChannelEvent event_;
};

// A batch's HoldChannel stream, shared by its channels' HoldStreams (the
// members). Member callbacks are made under mu_, so that a member that
// left (Leave) is never called again; members never call in while holding
// their own lock. It lives until gRPC is done with it (self_) and its last
// share is gone: that share's owner (a HoldStream going away on an
// application's thread) waits for OnDone, so the batch, whose stub and
// context hold references to the client's grpc::Channel, is destroyed
// there and never on a gRPC callback thread. gRPC 1.51's callback threads
// must not drop the last reference to a channel: one would join itself and
// free the queue it polls (grpc/grpc#32584).
class HoldStream::Batch final : public grpc::ClientReadReactor<v1::ChannelEvent> {
 public:
  explicit Batch(std::vector<HoldStream*> members)
      : shares_(members.size()), members_(std::move(members)) {}

  void Start(std::shared_ptr<Batch> self, std::shared_ptr<v1::Rdmad::Stub> stub,
             const std::vector<uint64_t>& ids) {
    self_ = std::move(self);
    stub_ = std::move(stub);
    for (size_t i = 0; i < ids.size(); ++i) {
      index_[ids[i]] = i;
      request_.add_channel_ids(ids[i]);
    }
    stub_->async()->HoldChannel(&context_, &request_, this);
    StartRead(&event_);
    StartCall();
  }

  // Member index let go: the call is over for it at once; the stream is
  // cancelled when no member is left.
  void Leave(size_t index) {
    std::lock_guard lock(mu_);
    HoldStream* member = std::exchange(members_[index], nullptr);
    if (std::all_of(members_.begin(), members_.end(), [](HoldStream* m) { return !m; })) {
      context_.TryCancel();
    }
    if (member != nullptr) {
      member->OnCallDone(grpc::Status(grpc::StatusCode::CANCELLED, "released"), false);
    }
  }

  // A share is gone; the last one waits until gRPC is done with the call.
  void Drop() {
    std::unique_lock lock(mu_);
    if (--shares_ == 0) cv_.wait(lock, [this] { return done_; });
  }

  // The daemon took the holds: one lease per channel, in order.
  void OnReadInitialMetadataDone(bool ok) override {
    if (!ok) return;
    auto range = context_.GetServerInitialMetadata().equal_range("rdmad-lease-bin");
    std::lock_guard lock(mu_);
    size_t i = 0;
    for (auto it = range.first; it != range.second && i < members_.size(); ++it, ++i) {
      if (members_[i] != nullptr) {
        members_[i]->OnHeld(std::string(it->second.data(), it->second.size()));
      }
    }
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;  // the stream ended; OnDone follows with the status
    if (event_.closed()) {
      std::lock_guard lock(mu_);
      auto it = index_.find(event_.channel_id());
      if (it != index_.end() && members_[it->second] != nullptr) {
        members_[it->second]->OnClosedEvent(event_.reason().empty() ? "the channel was closed"
                                                                    : event_.reason());
      }
    }
    StartRead(&event_);
  }
  // Every member still here carries on alone (re-attaches, or ends).
  void OnDone(const grpc::Status& status) override {
    std::lock_guard lock(mu_);
    for (HoldStream*& member : members_) {
      if (member != nullptr) std::exchange(member, nullptr)->OnCallDone(status, false);
    }
    self_.reset();  // not the last reference: a share is left until done_
    done_ = true;
    cv_.notify_all();
  }

 private:
  std::shared_ptr<Batch> self_;  // until OnDone
  std::shared_ptr<v1::Rdmad::Stub> stub_;
  grpc::ClientContext context_;
  v1::HoldChannelRequest request_;
  v1::ChannelEvent event_;
  std::map<uint64_t, size_t> index_;  // channel id -> member
  std::mutex mu_;
  std::condition_variable cv_;
  size_t shares_;                     // guarded by mu_
  bool done_ = false;                 // OnDone ran; guarded by mu_
  std::vector<HoldStream*> members_;  // null once left or done; guarded by mu_
};

class HoldStream::Share final : public Current {
 public:
  Share(std::shared_ptr<Batch> batch, size_t index) : batch_(std::move(batch)), index_(index) {}
  ~Share() override { batch_->Drop(); }
  void Cancel() override { batch_->Leave(index_); }

 private:
  std::shared_ptr<Batch> batch_;
  const size_t index_;
};

// Waits (wait_for_ready, up to the re-attach window) for an rdmad to answer
// on the socket: the next daemon after a restart.
class HoldStream::Probe {
 public:
  void Start(HoldStream* owner, std::chrono::steady_clock::time_point until) {
    context_.set_wait_for_ready(true);
    context_.set_deadline(std::chrono::system_clock::now() +
                          (until - std::chrono::steady_clock::now()));
    owner->stub_->async()->GetStatus(&context_, &request_, &response_,
                                     [owner](grpc::Status status) { owner->OnProbeDone(status); });
  }
  void Cancel() { context_.TryCancel(); }

 private:
  grpc::ClientContext context_;
  v1::GetStatusRequest request_;
  v1::GetStatusResponse response_;
};

HoldStream::HoldStream(std::shared_ptr<v1::Rdmad::Stub> stub, uint64_t channel_id,
                       std::string lease, std::chrono::milliseconds reattach_timeout)
    : stub_(std::move(stub)),
      channel_id_(channel_id),
      lease_(std::move(lease)),
      reattach_timeout_(reattach_timeout) {}

std::unique_ptr<HoldStream> HoldStream::Open(std::shared_ptr<v1::Rdmad::Stub> stub,
                                             uint64_t channel_id, std::string lease,
                                             std::chrono::milliseconds reattach_timeout) {
  std::unique_ptr<HoldStream> stream(
      new HoldStream(std::move(stub), channel_id, std::move(lease), reattach_timeout));
  Call* call;
  {
    std::lock_guard lock(stream->mu_);
    call = stream->NewCallLocked(false);
  }
  call->Start(stream->stub_.get(), channel_id, "");  // the first hold needs no lease
  return stream;
}

std::vector<std::unique_ptr<HoldStream>> HoldStream::OpenBatch(
    std::shared_ptr<v1::Rdmad::Stub> stub, const std::vector<uint64_t>& ids,
    const std::vector<std::string>& leases, std::chrono::milliseconds reattach_timeout) {
  std::vector<std::unique_ptr<HoldStream>> streams;
  std::vector<HoldStream*> members;
  for (size_t i = 0; i < ids.size(); ++i) {
    streams.emplace_back(
        new HoldStream(stub, ids[i], i < leases.size() ? leases[i] : "", reattach_timeout));
    members.push_back(streams.back().get());
  }
  auto batch = std::make_shared<Batch>(members);
  for (size_t i = 0; i < ids.size(); ++i) {
    std::lock_guard lock(streams[i]->mu_);
    streams[i]->calls_.push_back(std::make_unique<Share>(batch, i));
    streams[i]->active_ = true;
  }
  batch->Start(batch, std::move(stub), ids);
  return streams;
}

HoldStream::~HoldStream() {
  Release();
  Wait();
}

HoldStream::Call* HoldStream::NewCallLocked(bool reattach) {
  auto call = std::make_unique<Call>(this, reattach);
  Call* raw = call.get();
  calls_.push_back(std::move(call));
  probing_ = nullptr;
  active_ = true;
  return raw;
}

HoldStream::Probe* HoldStream::NewProbeLocked() {
  probes_.push_back(std::make_unique<Probe>());
  probing_ = probes_.back().get();
  active_ = true;
  return probing_;
}

void HoldStream::Attach(AbortableChannel* channel) {
  std::optional<Status> ended;
  {
    std::lock_guard lock(mu_);
    channel_ = channel;
    ended = ended_;
  }
  if (ended && channel != nullptr) channel->Abort(*ended);
}

void HoldStream::End(const Status& status) {
  AbortableChannel* channel;
  {
    std::lock_guard lock(mu_);
    if (ended_ || released_) return;  // once let go, the end is the application's
    ended_ = status;
    channel = channel_;
  }
  ClientLog().info("channel {:#018x}: {}", channel_id_, status.message());
  if (channel != nullptr) channel->Abort(status);
}

void HoldStream::OnClosedEvent(const std::string& reason) { End(Status::Unavailable(reason)); }

void HoldStream::OnHeld(std::string lease) {
  std::lock_guard lock(mu_);
  if (!lease.empty()) lease_ = std::move(lease);
  if (reattach_until_) {
    ClientLog().info("channel {:#018x}: re-attached to rdmad", channel_id_);
    reattach_until_.reset();  // a later break opens a window of its own
  }
}

Status HoldStream::NotBack() const {
  return Status::Unavailable("rdmad did not come back within " +
                             std::to_string(reattach_timeout_.count()) +
                             " ms to take the channel back");
}

void HoldStream::OnCallDone(const grpc::Status& status, bool reattach) {
  std::optional<Status> end;
  Probe* probe = nullptr;
  std::chrono::steady_clock::time_point until;
  {
    std::lock_guard lock(mu_);
    auto now = std::chrono::steady_clock::now();
    if (released_ || ended_) {
      // The application let go, or the daemon said how the channel ended.
    } else if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
      ClientLog().warn(
          "channel {:#018x}: rdmad has no HoldChannel (an older version?): the peer will "
          "not hear if this application dies",
          channel_id_);
    } else if (DaemonWentAway(status.error_code()) && !lease_.empty() &&
               reattach_timeout_.count() > 0 && (!reattach_until_ || now < *reattach_until_)) {
      if (!reattach_until_) {
        reattach_until_ = now + reattach_timeout_;
        ClientLog().info(
            "channel {:#018x}: the lifeline to rdmad broke ({}); the channel goes on and "
            "re-attaches to rdmad within {} ms",
            channel_id_, status.error_message(), reattach_timeout_.count());
      }
      until = *reattach_until_;
      probe = NewProbeLocked();
    } else if (reattach && DaemonWentAway(status.error_code())) {
      end = NotBack();
    } else if (reattach) {
      end = Status::Unavailable("rdmad restarted and could not take the channel back: " +
                                status.error_message());
    } else {
      end = Status::Unavailable(status.ok() ? "rdmad ended the channel's lifeline"
                                            : "the channel's lifeline to rdmad broke: " +
                                                  status.error_message());
    }
    if (probe == nullptr) active_ = false;
  }
  if (probe != nullptr) return probe->Start(this, until);
  Finished(end);
}

void HoldStream::OnProbeDone(const grpc::Status& status) {
  std::optional<Status> end;
  Call* next = nullptr;
  Probe* again = nullptr;
  std::chrono::steady_clock::time_point until;
  {
    std::lock_guard lock(mu_);
    auto now = std::chrono::steady_clock::now();
    if (released_ || ended_) {
      // Let go meanwhile.
    } else if (status.ok()) {
      next = NewCallLocked(true);  // an rdmad answers: hold the channel there
    } else if (DaemonWentAway(status.error_code()) && reattach_until_ && now < *reattach_until_) {
      until = *reattach_until_;
      again = NewProbeLocked();
    } else {
      end = NotBack();
    }
    if (next == nullptr && again == nullptr) {
      probing_ = nullptr;
      active_ = false;
    }
  }
  if (next != nullptr) {
    std::string lease;
    {
      std::lock_guard lock(mu_);
      lease = lease_;
    }
    return next->Start(stub_.get(), channel_id_, lease);
  }
  if (again != nullptr) return again->Start(this, until);
  Finished(end);
}

void HoldStream::Finished(const std::optional<Status>& end) {
  if (end) End(*end);
  std::lock_guard lock(mu_);
  cv_.notify_all();
}

void HoldStream::Release(const std::string& reason) { Release(reason, std::nullopt); }

void HoldStream::Release(const std::string& reason, const TrafficTotals& traffic) {
  Release(reason, std::optional<TrafficTotals>(traffic));
}

void HoldStream::Release(const std::string& reason, const std::optional<TrafficTotals>& traffic) {
  {
    std::lock_guard lock(mu_);
    if (released_) return;
    released_ = true;
    if (!active_) return;  // the channel is over for the daemon already
    releasing_ = true;
  }
  release_request_.set_channel_id(channel_id_);
  release_request_.set_reason(reason);
  if (traffic) ToProto(*traffic, release_request_.mutable_traffic());
  release_context_.set_deadline(std::chrono::system_clock::now() + kReleaseTimeout);
  stub_->async()->ReleaseChannel(&release_context_, &release_request_, &release_response_,
                                 [this](grpc::Status status) { Released(status); });
}

// Then the current hold (or probe) is cancelled.
void HoldStream::Released(const grpc::Status& status) {
  if (!status.ok()) {
    ClientLog().debug("channel {:#018x}: ReleaseChannel: {}", channel_id_, status.error_message());
  }
  Current* call = nullptr;
  Probe* probe = nullptr;
  {
    std::lock_guard lock(mu_);
    if (active_ && probing_ != nullptr) {
      probe = probing_;
    } else if (active_) {
      call = calls_.back().get();
    }
  }
  if (call != nullptr) call->Cancel();
  if (probe != nullptr) probe->Cancel();
  std::lock_guard lock(mu_);
  releasing_ = false;
  cv_.notify_all();
}

// One report in flight at a time; a newer one waits for it and replaces
// any older one still waiting.
void HoldStream::ReportRails(const std::vector<ChannelRail>& rails) {
  auto report = std::make_unique<Report>();
  report->request.set_channel_id(channel_id_);
  for (const ChannelRail& r : rails) {
    v1::ChannelRail* row = report->request.add_rails();
    row->set_device(r.local_device);
    row->set_peer_device(r.peer_device);
    row->set_bytes_written(r.bytes_written);
    row->set_bytes_read(r.bytes_read);
    row->set_up(r.up);
    row->set_reason(r.reason);
  }
  {
    std::lock_guard lock(mu_);
    if (released_) return;
    if (reporting_ != nullptr) {
      next_report_ = std::move(report);
      return;
    }
    reporting_ = std::move(report);
  }
  SendReport();
}

void HoldStream::SendReport() {
  Report* r = reporting_.get();  // reporting_ is only replaced in Reported
  r->context.set_deadline(std::chrono::system_clock::now() + kReleaseTimeout);
  stub_->async()->ReportChannel(&r->context, &r->request, &r->response,
                                [this](grpc::Status status) { Reported(status); });
}

void HoldStream::Reported(const grpc::Status& status) {
  if (!status.ok()) {
    ClientLog().debug("channel {:#018x}: ReportChannel: {}", channel_id_, status.error_message());
  }
  std::unique_ptr<Report> done;
  {
    std::lock_guard lock(mu_);
    done = std::move(reporting_);
    reporting_ = std::move(next_report_);
    if (reporting_ == nullptr) {
      cv_.notify_all();
      return;
    }
  }
  SendReport();
}

void HoldStream::Wait() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return !active_ && !releasing_ && reporting_ == nullptr; });
}

HeldChannel::HeldChannel(std::unique_ptr<AbortableChannel> channel,
                         std::unique_ptr<HoldStream> hold)
    : channel_(std::move(channel)),
      hold_(std::move(hold)),
      has_rails_(channel_->rails().size() > 1) {  // fixed at the handshake
  channel_->SetMeter(&meter_);
  hold_->Attach(channel_.get());
  if (hold_->reporter()) hold_->reporter()->Add(hold_->channel_id(), &meter_);
}

HeldChannel::~HeldChannel() {
  Close();
  hold_->Wait();
  hold_.reset();  // before the channel its callbacks abort
  channel_.reset();
}

void HeldChannel::Close() {
  channel_->Close();  // the peer hears it on the data path first
  if (has_rails_ && reported_.load()) hold_->ReportRails(channel_->rails());  // the last account
  if (const auto& reporter = hold_->reporter()) {
    reporter->Remove(hold_->channel_id());
    hold_->Release("", meter_.Snapshot());
  } else {
    hold_->Release();
  }
}

Status HeldChannel::Send(const void* buf, size_t len) {
  Status s = channel_->Send(buf, len);
  if (s.ok()) meter_.Sent(len);
  return s;
}

Status HeldChannel::TrySend(const void* buf, size_t len) {
  Status s = channel_->TrySend(buf, len);
  if (s.ok()) meter_.Sent(len);
  return s;
}

Status HeldChannel::Send(const MemoryRegion& region, size_t offset, size_t len) {
  Status s = channel_->Send(region, offset, len);
  if (s.ok()) meter_.Sent(len);
  return s;
}

StatusOr<std::vector<uint8_t>> HeldChannel::Recv(std::chrono::milliseconds timeout) {
  StatusOr<std::vector<uint8_t>> m = channel_->Recv(timeout);
  if (m.ok()) meter_.Received(m->size());
  return m;
}

StatusOr<size_t> HeldChannel::RecvInto(const MemoryRegion& region, size_t offset, size_t max_len,
                                       std::chrono::milliseconds timeout) {
  StatusOr<size_t> n = channel_->RecvInto(region, offset, max_len, timeout);
  if (n.ok()) meter_.Received(*n);
  return n;
}

Status HeldChannel::Write(const MemoryRegion& local, size_t local_offset,
                          const RegionDescriptor& remote, uint64_t remote_offset, size_t len) {
  return OneSided(true, local, local_offset, remote, remote_offset, len);
}

Status HeldChannel::Read(const MemoryRegion& local, size_t local_offset,
                         const RegionDescriptor& remote, uint64_t remote_offset, size_t len) {
  return OneSided(false, local, local_offset, remote, remote_offset, len);
}

StatusOr<std::unique_ptr<Transfer>> HeldChannel::Submit(const std::vector<TransferOp>& ops,
                                                        std::string_view notification) {
  StatusOr<std::unique_ptr<Transfer>> t = channel_->Submit(ops, notification);
  MaybeReport();
  return t;
}

StatusOr<std::unique_ptr<PreparedTransfer>> HeldChannel::Prepare(
    const std::vector<TransferOp>& ops) {
  return has_rails_ ? Channel::Prepare(ops) : channel_->Prepare(ops);
}

Status HeldChannel::OneSided(bool write, const MemoryRegion& local, size_t local_offset,
                             const RegionDescriptor& remote, uint64_t remote_offset, size_t len) {
  uint64_t started = MeterNowNs();
  Status s = write ? channel_->Write(local, local_offset, remote, remote_offset, len)
                   : channel_->Read(local, local_offset, remote, remote_offset, len);
  if (s.ok()) {
    meter_.OneSided(write, 1, len);
    meter_.Completed(MeterNowNs() - started);
  }
  MaybeReport();
  return s;
}

// A channel with rails tells the daemon their bytes, at most every
// kReportInterval (rdmactl channels shows them), and at once when a rail
// went out or came back (the daemon's rail-changed event).
void HeldChannel::MaybeReport() {
  if (!has_rails_) return;  // one rail (or TCP): nothing to tell, nothing to build
  auto now = std::chrono::steady_clock::now();
  int64_t now_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  int64_t last = last_report_ns_.load(std::memory_order_relaxed);
  bool due = !reported_.load(std::memory_order_relaxed) ||
             now_ns - last >= std::chrono::nanoseconds(kReportInterval).count();
  std::vector<ChannelRail> rails = channel_->rails();
  uint32_t up = 0;  // a rail out or back is told at once
  for (size_t i = 0; i < rails.size() && i < 32; ++i) up |= rails[i].up ? 1u << i : 0;
  if (!due && up == reported_up_.load(std::memory_order_relaxed)) return;
  reported_up_.store(up, std::memory_order_relaxed);
  last_report_ns_.store(now_ns, std::memory_order_relaxed);
  reported_.store(true, std::memory_order_relaxed);
  hold_->ReportRails(rails);
}

StatusOr<std::unique_ptr<AbortableChannel>> AsAbortable(std::unique_ptr<Channel> channel) {
  auto* abortable = dynamic_cast<AbortableChannel*>(channel.get());
  if (abortable == nullptr) return Status::Internal("a channel of an unknown transport");
  channel.release();
  return std::unique_ptr<AbortableChannel>(abortable);
}

}  // namespace rdmad::internal
