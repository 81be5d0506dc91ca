// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// PoolReactor serves one WatchPool stream: it subscribes the client to the
// PoolRegistry and writes each target list the registry gives it. Only the
// newest list waits while a write is in flight (each is the whole list), so
// a client that stops reading costs one message, not a growing queue. The
// client is unsubscribed (its Prewarm targets and reports dropped) when the
// stream ends. The stream holds one of its client's open streams
// (limits.max_streams_per_client) until it is done.
//
// Thread safety: the registry calls the sink from any thread; gRPC calls
// the reactor's callbacks. The shared PoolStreamSink drops what arrives
// after the reactor is gone.

#ifndef RDMAD_DAEMON_RPC_POOL_REACTOR_H_
#define RDMAD_DAEMON_RPC_POOL_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>

#include "daemon/clients/client_limiter.h"
#include "daemon/events/bounded_stream.h"
#include "daemon/pool/pool_registry.h"
#include "rdmad/v1/rdmad.pb.h"

namespace rdmad {

class PoolReactor;

class PoolStreamSink final : public PoolSink {
 public:
  explicit PoolStreamSink(PoolReactor* reactor) : reactor_(reactor) {}
  void OnTargets(const PoolTargets& targets) override;
  void Detach();

 private:
  std::mutex mu_;
  PoolReactor* reactor_;  // guarded by mu_; null once the reactor is done
};

class PoolReactor final : public grpc::ServerWriteReactor<v1::PoolEvent>,
                          public BoundedStream<v1::PoolEvent>::Writer {
 public:
  PoolReactor(PoolRegistry* registry, Owner owner, ClientLimiter::Lease lease);

  void Offer(v1::PoolEvent event) { stream_.Push(std::move(event)); }

  // grpc::ServerWriteReactor:
  void OnWriteDone(bool ok) override { stream_.OnWriteDone(ok); }
  void OnCancel() override;
  void OnDone() override;

  // BoundedStream writer:
  void Write(const v1::PoolEvent& event) override { StartWrite(&event); }
  void Finish(const Status& status) override;

 private:
  PoolRegistry* registry_;
  ClientLimiter::Lease lease_;           // one of the client's open streams
  BoundedStream<v1::PoolEvent> stream_;  // kKeepLatest: only the newest list waits
  std::shared_ptr<PoolStreamSink> sink_;
  uint64_t client_id_ = 0;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_POOL_REACTOR_H_
