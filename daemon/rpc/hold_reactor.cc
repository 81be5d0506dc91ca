// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/hold_reactor.h"

#include "daemon/rpc/channel_convert.h"
#include "daemon/rpc/grpc_status.h"

namespace rdmad {

void HoldSink::OnChannelEnded(ChannelState state, const std::string& reason) {
  std::lock_guard lock(mu_);
  if (reactor_ != nullptr) reactor_->Ended(state, reason);
}

void HoldSink::OnDaemonStopping(const std::string& why) {
  std::lock_guard lock(mu_);
  if (reactor_ != nullptr) reactor_->Stopping(why);
}

void HoldSink::Detach() {
  std::lock_guard lock(mu_);
  reactor_ = nullptr;
}

HoldReactor::HoldReactor(grpc::CallbackServerContext* context, Broker* broker, const Caller& caller,
                         uint64_t channel_id, ClientLimiter::Lease lease)
    : broker_(broker),
      channel_id_(channel_id),
      lease_(std::move(lease)),
      sink_(std::make_shared<HoldSink>(this)) {
  StatusOr<Broker::HoldResult> held = broker_->Hold(caller, channel_id_, sink_);
  std::lock_guard lock(mu_);
  if (!held.ok()) {
    finished_ = true;
    Finish(ToGrpcStatus(held.status()));
  } else if (held.value().token == 0) {
    EndLocked(held.value().state, held.value().reason);
  } else if (!finished_) {  // else the channel ended while Hold returned
    token_ = held.value().token;
    StatusOr<ChannelLease> channel = broker_->LeaseOf(channel_id_);
    if (channel.ok()) context->AddInitialMetadata(kLeaseMetadata, SerializeLease(channel.value()));
    StartSendInitialMetadata();  // the client library knows it is held
  }
}

void HoldReactor::Ended(ChannelState state, const std::string& reason) {
  std::lock_guard lock(mu_);
  token_ = 0;  // the broker dropped the hold
  EndLocked(state, reason);
}

void HoldReactor::Stopping(const std::string& why) {
  std::lock_guard lock(mu_);
  if (finished_) return;
  finished_ = true;
  Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, why));
}

void HoldReactor::EndLocked(ChannelState state, const std::string& reason) {
  if (finished_) return;
  finished_ = true;
  event_.set_closed(true);
  event_.set_state(std::string(ChannelStateName(state)));
  event_.set_reason(reason);
  StartWriteAndFinish(&event_, grpc::WriteOptions(), grpc::Status::OK);
}

void HoldReactor::OnCancel() {
  {
    std::lock_guard lock(mu_);
    if (!finished_) {
      finished_ = true;
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the application went away"));
    }
  }
  Release("the application went away");
}

void HoldReactor::OnDone() {
  sink_->Detach();
  Release("the application went away");  // normally done by now
  delete this;
}

void HoldReactor::Release(const std::string& reason) {
  uint64_t token;
  {
    std::lock_guard lock(mu_);
    token = std::exchange(token_, 0);
  }
  if (token != 0) broker_->Unhold(channel_id_, token, reason);
}

}  // namespace rdmad
