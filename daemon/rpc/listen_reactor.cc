// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/listen_reactor.h"

#include "daemon/rpc/channel_convert.h"
#include "daemon/rpc/grpc_status.h"
#include "spdlog/spdlog.h"

namespace rdmad {

void ListenSink::OnIncoming(const IncomingChannelRequest& request) {
  v1::ListenEvent event;
  v1::IncomingChannel* in = event.mutable_incoming();
  in->set_request_id(request.request_id);
  in->set_channel_id(request.channel_id);
  in->set_peer(request.peer);
  ToProto(request.initiator, in->mutable_initiator());
  ToProto(request.plan, in->mutable_plan());
  in->set_deadline_ms(uint32_t(request.deadline.count()));
  std::lock_guard lock(mu_);
  if (reactor_ != nullptr) reactor_->Enqueue(std::move(event));
}

void ListenSink::OnChannelClosed(uint64_t channel_id, const std::string& reason) {
  v1::ListenEvent event;
  event.mutable_closed()->set_channel_id(channel_id);
  event.mutable_closed()->set_reason(reason);
  std::lock_guard lock(mu_);
  if (reactor_ != nullptr) reactor_->Enqueue(std::move(event));
}

void ListenSink::Detach() {
  std::lock_guard lock(mu_);
  reactor_ = nullptr;
}

ListenReactor::ListenReactor(ServiceRegistry* registry, const std::string& service,
                             ClientLimiter::Lease lease)
    : service_(service), lease_(std::move(lease)), sink_(std::make_shared<ListenSink>(this)) {
  auto registration = registry->Register(service, sink_);
  std::lock_guard lock(mu_);
  if (!registration.ok()) {
    FinishOnce(ToGrpcStatus(registration.status()));
    return;
  }
  registration_ = std::move(registration).value();
  v1::ListenEvent first;
  first.mutable_registered()->set_service(service);
  queue_.push_back(std::move(first));
  writing_ = true;
  StartWrite(&queue_.front());
}

void ListenReactor::Enqueue(v1::ListenEvent event) {
  std::lock_guard lock(mu_);
  if (finished_) return;
  if (queue_.size() > kMaxQueued) return OverflowLocked();  // the front is being written
  queue_.push_back(std::move(event));
  if (writing_) return;
  writing_ = true;
  StartWrite(&queue_.front());
}

void ListenReactor::OnWriteDone(bool ok) {
  std::lock_guard lock(mu_);
  writing_ = false;
  if (!queue_.empty()) queue_.pop_front();
  if (!ok) {
    FinishOnce(grpc::Status(grpc::StatusCode::CANCELLED, "the listener went away"));
    return;
  }
  if (finished_ || queue_.empty()) return;
  writing_ = true;
  StartWrite(&queue_.front());
}

void ListenReactor::OverflowLocked() {
  spdlog::warn("service {}: the listener is not reading ({} events queued); its Listen stream "
               "ends and the service is unregistered",
               service_, queue_.size());
  while (queue_.size() > (writing_ ? 1 : 0)) queue_.pop_back();  // keep the one being written
  FinishOnce(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          "Listen stream closed: the client is not reading (" +
                              std::to_string(kMaxQueued) + " events queued)"));
}

void ListenReactor::OnCancel() {
  std::lock_guard lock(mu_);
  FinishOnce(grpc::Status(grpc::StatusCode::CANCELLED, "the listener went away"));
}

void ListenReactor::OnDone() {
  sink_->Detach();
  delete this;
}

void ListenReactor::FinishOnce(const grpc::Status& status) {
  registration_.reset();  // the registry no longer offers to this stream
  if (finished_) return;
  finished_ = true;
  Finish(status);
}

}  // namespace rdmad
