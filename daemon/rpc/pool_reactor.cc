// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/pool_reactor.h"

#include "daemon/rpc/grpc_status.h"

namespace rdmad {

void PoolStreamSink::OnTargets(const PoolTargets& targets) {
  v1::PoolEvent event;
  event.set_client_id(targets.client_id);
  event.set_idle_timeout_s(uint32_t(targets.idle_timeout_s));
  for (const PoolTargetSpec& t : targets.targets) {
    v1::PoolTarget* out = event.add_targets();
    out->set_peer(t.peer);
    out->set_service(t.service);
    out->set_channels(uint32_t(t.channels));
    out->set_source(PoolSourceName(t.source));
  }
  std::lock_guard lock(mu_);
  if (reactor_ != nullptr) reactor_->Offer(std::move(event));
}

void PoolStreamSink::Detach() {
  std::lock_guard lock(mu_);
  reactor_ = nullptr;
}

namespace {

BoundedStream<v1::PoolEvent>::Options PoolStreamOptions() {
  BoundedStream<v1::PoolEvent>::Options o;
  o.overflow_policy = BoundedStream<v1::PoolEvent>::Overflow::kKeepLatest;
  o.write_failed = Status::Cancelled("the client went away");
  return o;
}

}  // namespace

PoolReactor::PoolReactor(PoolRegistry* registry, Owner owner, ClientLimiter::Lease lease)
    : registry_(registry),
      lease_(std::move(lease)),
      stream_(this, PoolStreamOptions()),
      sink_(std::make_shared<PoolStreamSink>(this)) {
  client_id_ = registry_->Subscribe(sink_, owner);  // writes the first list
}

void PoolReactor::OnCancel() { stream_.Abort(Status::Cancelled("the client went away")); }

void PoolReactor::OnDone() {
  sink_->Detach();
  registry_->Unsubscribe(client_id_);
  delete this;
}

void PoolReactor::Finish(const Status& status) {
  grpc::ServerWriteReactor<v1::PoolEvent>::Finish(ToGrpcStatus(status));
}

}  // namespace rdmad
