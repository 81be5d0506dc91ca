// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// LocalService implements the rdmad.v1.Rdmad gRPC service with the callback
// API. Handlers only validate the request, call the DaemonCore and fill the
// reply; streams go through EventStreamer so their logic lives in the core.
//
// Per-client limits (docs/channels.md, "Local clients"): each call's process
// is known from its connection (ClientDirectory). Connect handshakes block
// on the peer, so they run on a bounded WorkerPool, at most
// limits.max_connects_per_client per process and limits.max_connects in
// total; server streams count against limits.max_streams_per_client while
// open. Beyond a limit the call ends at once with RESOURCE_EXHAUSTED naming
// it. The daemon's own process (the echo service) has no per-client limits.
//
// Thread safety: gRPC calls handlers concurrently; the directory, limiters
// and pool are thread-safe. Stop() once, after the server has stopped.

#ifndef RDMAD_DAEMON_RPC_LOCAL_SERVICE_H_
#define RDMAD_DAEMON_RPC_LOCAL_SERVICE_H_

#include "daemon/clients/client_limiter.h"
#include "daemon/clients/worker_pool.h"
#include "daemon/lifecycle/daemon.h"
#include "daemon/rpc/arena_messages.h"
#include "daemon/rpc/client_directory.h"
#include "rdmad/v1/rdmad.grpc.pb.h"

namespace rdmad {

class LocalService final : public v1::Rdmad::CallbackService {
 public:
  explicit LocalService(DaemonCore* core);

  // Where the server records each connection's process.
  ClientDirectory& clients() { return clients_; }
  // Joins the handshake workers (after the server's Shutdown and Wait).
  void Stop() { handshakes_.Stop(); }

  grpc::ServerUnaryReactor* GetStatus(grpc::CallbackServerContext* context,
                                      const v1::GetStatusRequest* request,
                                      v1::GetStatusResponse* response) override;

  grpc::ServerWriteReactor<v1::Event>* WatchEvents(grpc::CallbackServerContext* context,
                                                   const v1::WatchEventsRequest* request) override;

  grpc::ServerUnaryReactor* ListDevices(grpc::CallbackServerContext* context,
                                        const v1::ListDevicesRequest* request,
                                        v1::ListDevicesResponse* response) override;
  grpc::ServerUnaryReactor* GetDevice(grpc::CallbackServerContext* context,
                                      const v1::GetDeviceRequest* request,
                                      v1::Device* response) override;
  grpc::ServerUnaryReactor* GetPortCounters(grpc::CallbackServerContext* context,
                                            const v1::GetPortCountersRequest* request,
                                            v1::GetPortCountersResponse* response) override;
  grpc::ServerUnaryReactor* ResolvePath(grpc::CallbackServerContext* context,
                                        const v1::ResolvePathRequest* request,
                                        v1::Path* response) override;
  grpc::ServerUnaryReactor* ListPeers(grpc::CallbackServerContext* context,
                                      const v1::ListPeersRequest* request,
                                      v1::ListPeersResponse* response) override;
  // The host's topology and rails (topology_service.cc).
  grpc::ServerUnaryReactor* GetTopology(grpc::CallbackServerContext* context,
                                        const v1::GetTopologyRequest* request,
                                        v1::GetTopologyResponse* response) override;
  grpc::ServerUnaryReactor* PlanRails(grpc::CallbackServerContext* context,
                                      const v1::PlanRailsRequest* request,
                                      v1::RailPlan* response) override;

  // Channels (channel_service.cc): validate, call the broker, fill the
  // reply. Connect blocks on the peer, so it runs on a handshake worker.
  grpc::ServerWriteReactor<v1::ListenEvent>* Listen(grpc::CallbackServerContext* context,
                                                    const v1::ListenRequest* request) override;
  grpc::ServerUnaryReactor* Accept(grpc::CallbackServerContext* context,
                                   const v1::AcceptRequest* request,
                                   v1::AcceptResponse* response) override;
  grpc::ServerUnaryReactor* Reject(grpc::CallbackServerContext* context,
                                   const v1::RejectRequest* request,
                                   v1::RejectResponse* response) override;
  grpc::ServerUnaryReactor* PlanChannel(grpc::CallbackServerContext* context,
                                        const v1::PlanChannelRequest* request,
                                        v1::PlanChannelResponse* response) override;
  grpc::ServerUnaryReactor* Connect(grpc::CallbackServerContext* context,
                                    const v1::ConnectRequest* request,
                                    v1::ConnectResponse* response) override;
  grpc::ServerUnaryReactor* ListChannels(grpc::CallbackServerContext* context,
                                         const v1::ListChannelsRequest* request,
                                         v1::ListChannelsResponse* response) override;
  // The channel's lifeline (hold_reactor.h) and the application's close.
  grpc::ServerWriteReactor<v1::ChannelEvent>* HoldChannel(
      grpc::CallbackServerContext* context, const v1::HoldChannelRequest* request) override;
  grpc::ServerUnaryReactor* ReleaseChannel(grpc::CallbackServerContext* context,
                                           const v1::ReleaseChannelRequest* request,
                                           v1::ReleaseChannelResponse* response) override;
  grpc::ServerUnaryReactor* ReportChannel(grpc::CallbackServerContext* context,
                                          const v1::ReportChannelRequest* request,
                                          v1::ReportChannelResponse* response) override;
  grpc::ServerUnaryReactor* ReportTraffic(grpc::CallbackServerContext* context,
                                          const v1::ReportTrafficRequest* request,
                                          v1::ReportTrafficResponse* response) override;

  // Pooling (pool_service.cc): the PoolRegistry's targets and counts.
  grpc::ServerWriteReactor<v1::PoolEvent>* WatchPool(grpc::CallbackServerContext* context,
                                                     const v1::WatchPoolRequest* request) override;
  grpc::ServerUnaryReactor* Prewarm(grpc::CallbackServerContext* context,
                                    const v1::PrewarmRequest* request,
                                    v1::PrewarmResponse* response) override;
  grpc::ServerUnaryReactor* ReportPool(grpc::CallbackServerContext* context,
                                       const v1::ReportPoolRequest* request,
                                       v1::ReportPoolResponse* response) override;
  grpc::ServerUnaryReactor* ListPools(grpc::CallbackServerContext* context,
                                      const v1::ListPoolsRequest* request,
                                      v1::ListPoolsResponse* response) override;
  // cluster_service.cc
  grpc::ServerUnaryReactor* ListMembers(grpc::CallbackServerContext* context,
                                        const v1::ListMembersRequest* request,
                                        v1::ListMembersResponse* response) override;

 private:
  // A unit of the calling process's Connect or open-stream budget, or
  // RESOURCE_EXHAUSTED naming the limit.
  StatusOr<ClientLimiter::Lease> AdmitConnect(grpc::CallbackServerContext* context);
  StatusOr<ClientLimiter::Lease> AdmitStream(grpc::CallbackServerContext* context);
  // Who made the call (its connection's credentials; docs/security.md).
  Caller CallerOf(grpc::CallbackServerContext* context) const;

  DaemonCore* core_;
  ClientDirectory clients_;
  // The handshake's and the reports' calls carry an entry per channel:
  // their messages live on an arena per call.
  ArenaMessages<v1::ConnectRequest, v1::ConnectResponse> connect_messages_;
  ArenaMessages<v1::AcceptRequest, v1::AcceptResponse> accept_messages_;
  ArenaMessages<v1::ReportTrafficRequest, v1::ReportTrafficResponse> traffic_messages_;
  ClientLimiter connects_;
  ClientLimiter streams_;
  WorkerPool handshakes_;  // last: its tasks hold connects_ leases
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_LOCAL_SERVICE_H_
