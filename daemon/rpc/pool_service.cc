// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The local API's pool calls (LocalService, declared in local_service.h):
// WatchPool, Prewarm, ReportPool and ListPools. They validate, call the
// PoolRegistry and fill the reply.

#include "daemon/rpc/grpc_status.h"
#include "daemon/rpc/local_service.h"
#include "daemon/rpc/pool_reactor.h"
#include "daemon/rpc/request_checks.h"

namespace rdmad {
namespace {

Status NoPool() { return Status::Unavailable("this daemon has no pool registry"); }

int ClampCount(uint32_t n) { return n > 1u << 20 ? 1 << 20 : int(n); }

}  // namespace

grpc::ServerWriteReactor<v1::PoolEvent>* LocalService::WatchPool(
    grpc::CallbackServerContext* context, const v1::WatchPoolRequest* request) {
  PoolRegistry* pool = core_->pool();
  if (pool == nullptr) return new FailedStream<v1::PoolEvent>(NoPool());
  StatusOr<ClientLimiter::Lease> lease = AdmitStream(context);
  if (!lease.ok()) return new FailedStream<v1::PoolEvent>(lease.status());
  // The connection's pid, when the kernel gave it, over the one claimed.
  Caller caller = CallerOf(context);
  Owner owner = caller.owner();
  if (owner.pid == 0) owner.pid = pid_t(request->pid());
  return new PoolReactor(pool, owner, std::move(lease).value());
}

grpc::ServerUnaryReactor* LocalService::Prewarm(grpc::CallbackServerContext* context,
                                                const v1::PrewarmRequest* request,
                                                v1::PrewarmResponse* response) {
  PoolRegistry* pool = core_->pool();
  if (pool == nullptr) return Reply(context, NoPool());
  Status checked = CheckName("peer", request->peer(), kMaxPeerName);
  if (!checked.ok()) return Reply(context, checked);
  return Reply(context, pool->Prewarm(CallerOf(context), request->client_id(), request->peer(),
                                      request->service(), ClampCount(request->channels())));
}

grpc::ServerUnaryReactor* LocalService::ReportPool(grpc::CallbackServerContext* context,
                                                   const v1::ReportPoolRequest* request,
                                                   v1::ReportPoolResponse* response) {
  PoolRegistry* pool = core_->pool();
  if (pool == nullptr) return Reply(context, NoPool());
  Status checked = CheckName("peer", request->peer(), kMaxPeerName);
  if (!checked.ok()) return Reply(context, checked);
  return Reply(context, pool->Report(CallerOf(context), request->client_id(), request->peer(),
                                     request->service(), ClampCount(request->warm()),
                                     ClampCount(request->in_use()), request->last_error()));
}

grpc::ServerUnaryReactor* LocalService::ListPools(grpc::CallbackServerContext* context,
                                                  const v1::ListPoolsRequest* request,
                                                  v1::ListPoolsResponse* response) {
  PoolRegistry* pool = core_->pool();
  if (pool == nullptr) return Reply(context, NoPool());
  for (const PoolRow& row : pool->ListFor(CallerOf(context))) {
    v1::PoolRow* out = response->add_pools();
    out->set_client_id(row.client_id);
    out->set_pid(row.pid);
    out->set_peer(row.peer);
    out->set_service(row.service);
    out->set_target(uint32_t(row.target));
    out->set_source(PoolSourceName(row.source));
    out->set_warm(uint32_t(row.warm));
    out->set_in_use(uint32_t(row.in_use));
    out->set_last_error(row.last_error);
  }
  return Reply(context, Status::Ok());
}

}  // namespace rdmad
