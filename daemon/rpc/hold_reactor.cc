// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/hold_reactor.h"

#include <algorithm>

#include "daemon/rpc/channel_convert.h"
#include "daemon/rpc/grpc_status.h"

namespace rdmad {

void HoldSink::OnChannelEnded(ChannelState state, const std::string& reason) {
  std::lock_guard lock(mu_);
  if (reactor_ != nullptr) reactor_->Ended(index_, state, reason);
}

void HoldSink::OnDaemonStopping(const std::string& why) {
  std::lock_guard lock(mu_);
  if (reactor_ != nullptr) reactor_->Stopping(why);
}

void HoldSink::Detach() {
  std::lock_guard lock(mu_);
  reactor_ = nullptr;
}

namespace {

BoundedStream<v1::ChannelEvent>::Options HoldStreamOptions(size_t channels) {
  BoundedStream<v1::ChannelEvent>::Options o;
  o.max_queued = channels;  // one event per channel at most
  o.write_failed = Status::Cancelled("the application went away");
  return o;
}

}  // namespace

HoldReactor::HoldReactor(grpc::CallbackServerContext* context, Broker* broker, const Caller& caller,
                         const std::vector<Held>& channels, ClientLimiter::Lease lease)
    : broker_(broker), lease_(std::move(lease)), stream_(this, HoldStreamOptions(channels.size())) {
  const bool batch = channels.size() > 1;
  const bool send_leases = !batch || std::any_of(channels.begin(), channels.end(),
                                                 [](const Held& h) { return h.reattach; });
  for (size_t i = 0; i < channels.size(); ++i) {
    ids_.push_back(channels[i].channel_id);
    sinks_.push_back(std::make_shared<HoldSink>(this, i));
  }
  {
    std::lock_guard lock(mu_);
    tokens_.assign(ids_.size(), 0);
    ended_.assign(ids_.size(), false);
    live_ = ids_.size();
  }
  std::vector<std::string> leases(ids_.size());
  for (size_t i = 0; i < ids_.size(); ++i) {
    StatusOr<Broker::HoldResult> held = channels[i].adopted.ok()
                                            ? broker_->Hold(caller, ids_[i], sinks_[i])
                                            : StatusOr<Broker::HoldResult>(channels[i].adopted);
    std::lock_guard lock(mu_);
    if (!held.ok() && !batch) {  // one channel: the stream says why
      aborted_ = true;
      stream_.Abort(held.status());
      return;
    }
    if (!held.ok()) {
      EndLocked(i, ChannelState::kFailed,
                channels[i].adopted.ok() ? held.status().message()
                                         : "rdmad restarted and could not take the channel back: " +
                                               held.status().message());
    } else if (held.value().token == 0) {
      EndLocked(i, held.value().state, held.value().reason);
    } else if (!ended_[i]) {  // else it ended while Hold returned
      tokens_[i] = held.value().token;
      // None for a batch's first hold: the library has them, and each is an HMAC.
      if (send_leases) {
        StatusOr<ChannelLease> channel = broker_->LeaseOf(ids_[i]);
        if (channel.ok()) leases[i] = SerializeLease(channel.value(), broker_->lease_sealer());
      }
    }
  }
  std::lock_guard lock(mu_);
  if (aborted_) return;  // Stopping came meanwhile
  // The client library learns that its channels are held (and their
  // current leases) before any event.
  for (size_t i = 0; i < ids_.size(); ++i) {
    if (send_leases && (batch || !leases[i].empty())) {
      context->AddInitialMetadata(kLeaseMetadata, leases[i]);
    }
  }
  stream_.HoldForWrite();
  StartSendInitialMetadata();
  started_ = true;
  for (v1::ChannelEvent& event : early_) stream_.Push(std::move(event));
  early_.clear();
  if (live_ == 0) stream_.Close(Status::Ok());
}

bool HoldReactor::EndLocked(size_t index, ChannelState state, const std::string& reason) {
  if (ended_[index]) return false;
  ended_[index] = true;
  --live_;
  v1::ChannelEvent event;
  event.set_closed(true);
  event.set_state(std::string(ChannelStateName(state)));
  event.set_reason(reason);
  event.set_channel_id(ids_[index]);
  if (!started_) {
    early_.push_back(std::move(event));
    return live_ == 0;
  }
  stream_.Push(std::move(event));
  if (live_ == 0) stream_.Close(Status::Ok());
  return live_ == 0;
}

void HoldReactor::Ended(size_t index, ChannelState state, const std::string& reason) {
  std::lock_guard lock(mu_);
  tokens_[index] = 0;  // the broker dropped the hold
  EndLocked(index, state, reason);
}

void HoldReactor::Stopping(const std::string& why) {
  std::lock_guard lock(mu_);
  if (aborted_) return;
  aborted_ = true;
  stream_.Abort(Status::Unavailable(why));
}

void HoldReactor::OnCancel() {
  stream_.Abort(Status::Cancelled("the application went away"));
  UnholdAll("the application went away");
}

void HoldReactor::OnDone() {
  for (auto& sink : sinks_) sink->Detach();
  UnholdAll("the application went away");  // normally done by now
  delete this;
}

void HoldReactor::Finish(const Status& status) {
  grpc::ServerWriteReactor<v1::ChannelEvent>::Finish(ToGrpcStatus(status));
}

void HoldReactor::UnholdAll(const std::string& reason) {
  std::vector<std::pair<uint64_t, uint64_t>> held;  // channel id, token
  {
    std::lock_guard lock(mu_);
    for (size_t i = 0; i < ids_.size(); ++i) {
      if (tokens_[i] != 0) held.emplace_back(ids_[i], std::exchange(tokens_[i], 0));
    }
  }
  for (const auto& [id, token] : held) broker_->Unhold(id, token, reason);
}

}  // namespace rdmad
