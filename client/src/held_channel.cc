// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/held_channel.h"

#include "client/src/client_log.h"

namespace rdmad::internal {
namespace {

// How long a close waits for the daemon to take note before the stream is
// cancelled anyway (the daemon then says "the application went away").
constexpr std::chrono::seconds kReleaseTimeout{2};

// The ends of a HoldChannel call that mean rdmad went away (killed,
// stopping, restarting) rather than that the channel is over.
bool DaemonWentAway(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::CANCELLED ||
         code == grpc::StatusCode::UNKNOWN || code == grpc::StatusCode::INTERNAL;
}

}  // namespace

class HoldStream::Call final : public grpc::ClientReadReactor<v1::ChannelEvent> {
 public:
  Call(HoldStream* owner, bool reattach) : owner_(owner), reattach_(reattach) {}

  void Start(v1::Rdmad::Stub* stub, uint64_t channel_id, const std::string& lease,
             std::optional<std::chrono::steady_clock::time_point> until) {
    request_.set_channel_id(channel_id);
    if (reattach_) {
      request_.set_lease(lease);
      context_.set_wait_for_ready(true);  // until the next rdmad listens
      context_.set_deadline(
          std::chrono::system_clock::now() +
          (until.value_or(std::chrono::steady_clock::now()) - std::chrono::steady_clock::now()));
    }
    stub->async()->HoldChannel(&context_, &request_, this);
    StartRead(&event_);
    StartCall();
  }
  void Cancel() { context_.TryCancel(); }

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

HoldStream::HoldStream(std::shared_ptr<grpc::Channel> rpc, uint64_t channel_id, std::string lease,
                       std::chrono::milliseconds reattach_timeout)
    : rpc_(std::move(rpc)),
      stub_(v1::Rdmad::NewStub(rpc_)),
      channel_id_(channel_id),
      lease_(std::move(lease)),
      reattach_timeout_(reattach_timeout) {}

std::unique_ptr<HoldStream> HoldStream::Open(std::shared_ptr<grpc::Channel> rpc,
                                             uint64_t channel_id, std::string lease,
                                             std::chrono::milliseconds reattach_timeout) {
  std::unique_ptr<HoldStream> stream(
      new HoldStream(std::move(rpc), channel_id, std::move(lease), reattach_timeout));
  Call* call;
  {
    std::lock_guard lock(stream->mu_);
    call = stream->NewCallLocked(false);
  }
  call->Start(stream->stub_.get(), channel_id, stream->lease_, std::nullopt);
  return stream;
}

HoldStream::~HoldStream() {
  Release();
  Wait();
}

HoldStream::Call* HoldStream::NewCallLocked(bool reattach) {
  calls_.push_back(std::make_unique<Call>(this, reattach));
  active_ = true;
  return calls_.back().get();
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
  ClientLog().info("channel {:#x}: {}", channel_id_, status.message());
  if (channel != nullptr) channel->Abort(status);
}

void HoldStream::OnClosedEvent(const std::string& reason) { End(Status::Unavailable(reason)); }

void HoldStream::OnCallDone(const grpc::Status& status, bool reattach) {
  std::optional<Status> end;
  Call* next = nullptr;
  std::optional<std::chrono::steady_clock::time_point> until;
  {
    std::lock_guard lock(mu_);
    auto now = std::chrono::steady_clock::now();
    if (released_ || ended_) {
      // The application let go, or the daemon said how the channel ended.
    } else if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
      ClientLog().warn(
          "channel {:#x}: rdmad has no HoldChannel (an older version?): the peer will "
          "not hear if this application dies",
          channel_id_);
    } else if (DaemonWentAway(status.error_code()) && !lease_.empty() &&
               reattach_timeout_.count() > 0 && (!reattach_until_ || now < *reattach_until_)) {
      if (!reattach_until_) {
        reattach_until_ = now + reattach_timeout_;
        ClientLog().info(
            "channel {:#x}: the lifeline to rdmad broke ({}); the channel goes on and "
            "re-attaches to rdmad within {} ms",
            channel_id_, status.error_message(), reattach_timeout_.count());
      }
      until = reattach_until_;
      next = NewCallLocked(true);
    } else if (reattach && (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
                            DaemonWentAway(status.error_code()))) {
      end = Status::Unavailable("rdmad did not come back within " +
                                std::to_string(reattach_timeout_.count()) +
                                " ms to take the channel back");
    } else if (reattach) {
      end = Status::Unavailable("rdmad restarted and could not take the channel back: " +
                                status.error_message());
    } else {
      end = Status::Unavailable(status.ok() ? "rdmad ended the channel's lifeline"
                                            : "the channel's lifeline to rdmad broke: " +
                                                  status.error_message());
    }
    if (next == nullptr) active_ = false;
  }
  if (next != nullptr) {
    next->Start(stub_.get(), channel_id_, lease_, until);
    return;
  }
  if (end) End(*end);
  std::lock_guard lock(mu_);
  cv_.notify_all();
}

void HoldStream::Release(const std::string& reason) {
  {
    std::lock_guard lock(mu_);
    if (released_) return;
    released_ = true;
    if (!active_) return;  // the channel is over for the daemon already
    releasing_ = true;
  }
  release_request_.set_channel_id(channel_id_);
  release_request_.set_reason(reason);
  release_context_.set_deadline(std::chrono::system_clock::now() + kReleaseTimeout);
  stub_->async()->ReleaseChannel(&release_context_, &release_request_, &release_response_,
                                 [this](grpc::Status status) {
                                   if (!status.ok()) {
                                     ClientLog().debug("channel {:#x}: ReleaseChannel: {}",
                                                       channel_id_, status.error_message());
                                   }
                                   Call* current = nullptr;
                                   {
                                     std::lock_guard lock(mu_);
                                     if (active_) current = calls_.back().get();
                                   }
                                   if (current != nullptr) current->Cancel();
                                   std::lock_guard lock(mu_);
                                   releasing_ = false;
                                   cv_.notify_all();
                                 });
}

void HoldStream::Wait() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return !active_ && !releasing_; });
}

HeldChannel::HeldChannel(std::unique_ptr<AbortableChannel> channel,
                         std::unique_ptr<HoldStream> hold)
    : channel_(std::move(channel)), hold_(std::move(hold)) {
  hold_->Attach(channel_.get());
}

HeldChannel::~HeldChannel() {
  Close();
  hold_->Wait();
  hold_.reset();  // before the channel its callbacks abort
  channel_.reset();
}

void HeldChannel::Close() {
  channel_->Close();  // the peer hears it on the data path first
  hold_->Release();
}

StatusOr<std::unique_ptr<AbortableChannel>> AsAbortable(std::unique_ptr<Channel> channel) {
  auto* abortable = dynamic_cast<AbortableChannel*>(channel.get());
  if (abortable == nullptr) return Status::Internal("a channel of an unknown transport");
  channel.release();
  return std::unique_ptr<AbortableChannel>(abortable);
}

}  // namespace rdmad::internal
