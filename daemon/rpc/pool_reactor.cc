// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/pool_reactor.h"

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
    out->set_source(t.source);
  }
  std::lock_guard lock(mu_);
  if (reactor_ != nullptr) reactor_->Offer(std::move(event));
}

void PoolStreamSink::Detach() {
  std::lock_guard lock(mu_);
  reactor_ = nullptr;
}

PoolReactor::PoolReactor(PoolRegistry* registry, int pid, ClientLimiter::Lease lease)
    : registry_(registry),
      lease_(std::move(lease)),
      sink_(std::make_shared<PoolStreamSink>(this)) {
  client_id_ = registry_->Subscribe(sink_, pid);  // writes the first list
}

void PoolReactor::Offer(v1::PoolEvent event) {
  std::lock_guard lock(mu_);
  if (finished_) return;
  next_ = std::move(event);
  if (!writing_) WriteNextLocked();
}

void PoolReactor::WriteNextLocked() {
  writing_event_ = std::move(*next_);
  next_.reset();
  writing_ = true;
  StartWrite(&writing_event_);
}

void PoolReactor::OnWriteDone(bool ok) {
  std::lock_guard lock(mu_);
  writing_ = false;
  if (!ok) {
    FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "the client went away"));
    return;
  }
  if (!finished_ && next_) WriteNextLocked();
}

void PoolReactor::OnCancel() {
  std::lock_guard lock(mu_);
  FinishLocked(grpc::Status(grpc::StatusCode::CANCELLED, "the client went away"));
}

void PoolReactor::OnDone() {
  sink_->Detach();
  registry_->Unsubscribe(client_id_);
  delete this;
}

void PoolReactor::FinishLocked(const grpc::Status& status) {
  if (finished_) return;
  finished_ = true;
  Finish(status);
}

}  // namespace rdmad
