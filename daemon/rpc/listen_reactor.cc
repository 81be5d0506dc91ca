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
  in->set_peer(request.peer);
  ToProto(request.plan, in->mutable_plan());
  in->set_deadline_ms(uint32_t(request.deadline.count()));
  for (const ChannelOpening& c : request.channels) ToProto(c, in->add_channels());
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

void ListenSink::OnDaemonStopping(const std::string& why) {
  std::lock_guard lock(mu_);
  if (reactor_ != nullptr) reactor_->Stopping(why);
}

void ListenSink::Detach() {
  std::lock_guard lock(mu_);
  reactor_ = nullptr;
}

namespace {

BoundedStream<v1::ListenEvent>::Options ListenStreamOptions() {
  BoundedStream<v1::ListenEvent>::Options o;
  o.max_queued = ListenReactor::kMaxQueued;
  o.overflow =
      Status::ResourceExhausted("Listen stream closed: the client is not reading (" +
                                std::to_string(ListenReactor::kMaxQueued) + " events queued)");
  o.write_failed = Status::Cancelled("the listener went away");
  return o;
}

}  // namespace

ListenReactor::ListenReactor(ServiceRegistry* registry, const std::string& service,
                             const Caller& caller, ClientLimiter::Lease lease)
    : service_(service),
      lease_(std::move(lease)),
      stream_(this, ListenStreamOptions()),
      sink_(std::make_shared<ListenSink>(this)) {
  auto registration = registry->Register(service, sink_, caller);
  if (!registration.ok()) {
    stream_.Abort(registration.status());
    return;
  }
  {
    std::lock_guard lock(mu_);
    registration_ = std::move(registration).value();
  }
  v1::ListenEvent first;
  first.mutable_registered()->set_service(service);
  stream_.Push(std::move(first));
}

void ListenReactor::Enqueue(v1::ListenEvent event) {
  if (stream_.Push(std::move(event)) != BoundedStream<v1::ListenEvent>::Pushed::kOverflowed) {
    return;
  }
  spdlog::warn(
      "service {}: the listener is not reading ({} events queued); its Listen stream "
      "ends and the service is unregistered",
      service_, kMaxQueued);
  std::lock_guard lock(mu_);
  registration_.reset();  // requests waiting on it fail at once
}

void ListenReactor::Stopping(const std::string& why) { stream_.Abort(Status::Unavailable(why)); }

void ListenReactor::OnCancel() { stream_.Abort(Status::Cancelled("the listener went away")); }

void ListenReactor::OnDone() {
  sink_->Detach();
  delete this;
}

void ListenReactor::Finish(const Status& status) {
  {
    std::lock_guard lock(mu_);
    registration_.reset();  // the registry no longer offers to this stream
  }
  grpc::ServerWriteReactor<v1::ListenEvent>::Finish(ToGrpcStatus(status));
}

}  // namespace rdmad
