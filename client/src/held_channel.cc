// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/held_channel.h"

#include "client/src/client_log.h"

namespace rdmad::internal {
namespace {

// How long a close waits for the daemon to take note before the stream is
// cancelled anyway (the daemon then says "the application went away").
constexpr std::chrono::seconds kReleaseTimeout{2};

}  // namespace

HoldStream::HoldStream(std::shared_ptr<grpc::Channel> rpc, uint64_t channel_id)
    : stub_(v1::Rdmad::NewStub(std::move(rpc))), channel_id_(channel_id) {}

std::unique_ptr<HoldStream> HoldStream::Open(std::shared_ptr<grpc::Channel> rpc,
                                             uint64_t channel_id) {
  std::unique_ptr<HoldStream> stream(new HoldStream(std::move(rpc), channel_id));
  stream->request_.set_channel_id(channel_id);
  stream->stub_->async()->HoldChannel(&stream->context_, &stream->request_, stream.get());
  stream->StartRead(&stream->event_);
  stream->StartCall();
  return stream;
}

HoldStream::~HoldStream() {
  Release();
  Wait();
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

void HoldStream::OnReadDone(bool ok) {
  if (!ok) return;  // the stream ended; OnDone follows with the status
  if (event_.closed()) {
    End(Status::Unavailable(event_.reason().empty() ? "the channel was closed" : event_.reason()));
  }
  StartRead(&event_);
}

void HoldStream::OnDone(const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
    // An rdmad older than HoldChannel: the channel works, unguarded.
    ClientLog().warn(
        "channel {:#x}: rdmad has no HoldChannel (an older version?): the peer will "
        "not hear if this application dies",
        channel_id_);
  } else {
    // Without a closed event first: the daemon ended it without a word, or
    // went away.
    End(Status::Unavailable(status.ok() ? "rdmad ended the channel's lifeline"
                                        : "the channel's lifeline to rdmad broke: " +
                                              status.error_message()));
  }
  std::lock_guard lock(mu_);
  done_ = true;
  cv_.notify_all();
}

void HoldStream::Release(const std::string& reason) {
  {
    std::lock_guard lock(mu_);
    if (released_) return;
    released_ = true;
    if (done_) return;  // the channel is over for the daemon already
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
                                   context_.TryCancel();
                                   std::lock_guard lock(mu_);
                                   releasing_ = false;
                                   cv_.notify_all();
                                 });
}

void HoldStream::Wait() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return done_ && !releasing_; });
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
