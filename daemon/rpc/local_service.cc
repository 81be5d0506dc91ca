// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/local_service.h"

#include <set>

#include "daemon/events/event_streamer.h"
#include "daemon/rpc/grpc_status.h"
#include "daemon/rpc/peer_convert.h"
#include "daemon/rpc/proto_convert.h"
#include "daemon/rpc/request_checks.h"
#include "spdlog/spdlog.h"

namespace rdmad {
namespace {

// EventKind and v1::EventKind share their numbers by design.
constexpr int kFirstEventKind = v1::CONFIG_RELOADED;
constexpr int kLastProtoEventKind = v1::RAIL_CHANGED;
static_assert(int(kLastEventKind) == kLastProtoEventKind);

static_assert(int(EventKind::kConfigReloaded) == v1::CONFIG_RELOADED);
static_assert(int(EventKind::kDaemonStopping) == v1::DAEMON_STOPPING);
static_assert(int(EventKind::kDeviceAdded) == v1::DEVICE_ADDED);
static_assert(int(EventKind::kGidRemoved) == v1::GID_REMOVED);
static_assert(int(EventKind::kRailChanged) == v1::RAIL_CHANGED);

v1::EventKind ToProto(EventKind kind) { return static_cast<v1::EventKind>(kind); }

StatusOr<std::set<EventKind>> KindsFromRequest(const v1::WatchEventsRequest& req) {
  std::set<EventKind> kinds;
  for (int kind : req.kinds()) {
    if (kind < kFirstEventKind || kind > kLastProtoEventKind) {
      return Status::InvalidArgument("kinds: unknown event kind " + std::to_string(kind));
    }
    kinds.insert(static_cast<EventKind>(kind));
  }
  return kinds;
}

// Handshake workers when limits.max_connects is unset (test fakes).
constexpr size_t kDefaultHandshakeWorkers = 64;

// Writes one WatchEvents stream; deletes itself when gRPC is done with it.
class EventStreamReactor final : public grpc::ServerWriteReactor<v1::Event>, public StreamWriter {
 public:
  EventStreamReactor(EventBus* bus, ClientLimiter::Lease lease)
      : lease_(std::move(lease)), streamer_(bus, this) {}

  void Start(std::set<EventKind> kinds) { streamer_.Start(std::move(kinds)); }

  // StreamWriter:
  void Begin() override { StartSendInitialMetadata(); }
  void Write(const DaemonEvent& event) override {
    out_.set_sequence(event.sequence);
    out_.set_unix_time_ms(event.unix_time_ms);
    out_.set_kind(ToProto(event.kind));
    out_.set_message(event.message);
    out_.set_device(event.device);
    out_.set_port(uint32_t(event.port));
    StartWrite(&out_);
  }
  void Finish(const Status& status) override {
    grpc::ServerWriteReactor<v1::Event>::Finish(ToGrpcStatus(status));
  }

  // grpc::ServerWriteReactor:
  void OnSendInitialMetadataDone(bool ok) override { streamer_.OnWriteDone(ok); }
  void OnWriteDone(bool ok) override { streamer_.OnWriteDone(ok); }
  void OnCancel() override { streamer_.Cancel(); }
  void OnDone() override {
    streamer_.Detach();
    delete this;
  }

 private:
  ClientLimiter::Lease lease_;  // one of the client's open streams
  v1::Event out_;               // the one write in flight
  EventStreamer streamer_;
};

}  // namespace

LocalService::LocalService(DaemonCore* core)
    : core_(core),
      connects_({"Connect handshakes in flight", "limits.max_connects_per_client",
                 "limits.max_connects", ""},
                core_->quota_refusals()),
      streams_({"streams open", "limits.max_streams_per_client", "", "limits.max_streams_per_uid"},
               core_->quota_refusals()),
      handshakes_({.name = "Connect handshakes",
                   .max_workers = kDefaultHandshakeWorkers,
                   .max_queued = kDefaultHandshakeWorkers}) {
  SetMessageAllocatorFor_Connect(&connect_messages_);
  SetMessageAllocatorFor_Accept(&accept_messages_);
  SetMessageAllocatorFor_ReportTraffic(&traffic_messages_);
}

Caller LocalService::CallerOf(grpc::CallbackServerContext* context) const {
  return clients_.Identify(context->peer(), core_->admin_group());
}

StatusOr<ClientLimiter::Lease> LocalService::AdmitConnect(grpc::CallbackServerContext* context) {
  ClientLimits limits = core_->client_limits();
  Caller caller = CallerOf(context);
  // Admission bounds the handshakes in flight; the pool has a worker for each.
  size_t workers = limits.max_connects > 0 ? limits.max_connects : kDefaultHandshakeWorkers;
  handshakes_.SetLimits(workers, workers);
  return connects_.Acquire(caller.name, caller.self ? 0 : limits.max_connects_per_client,
                           limits.max_connects);
}

StatusOr<ClientLimiter::Lease> LocalService::AdmitStream(grpc::CallbackServerContext* context) {
  Caller caller = CallerOf(context);
  if (caller.self) return streams_.Acquire(caller.name, 0, 0);
  ClientLimits limits = core_->client_limits();
  std::string uid = caller.uid == kNoUid ? "" : "uid " + std::to_string(caller.uid);
  return streams_.Acquire(caller.name, uid, limits.max_streams_per_client,
                          limits.max_streams_per_uid, 0);
}

grpc::ServerUnaryReactor* LocalService::GetStatus(grpc::CallbackServerContext* context,
                                                  const v1::GetStatusRequest*,
                                                  v1::GetStatusResponse* response) {
  ToProto(core_->GetStatus(), response);
  return Reply(context, Status::Ok());
}

grpc::ServerUnaryReactor* LocalService::ListDevices(grpc::CallbackServerContext* context,
                                                    const v1::ListDevicesRequest*,
                                                    v1::ListDevicesResponse* response) {
  for (const DeviceInfo& d : core_->inventory()->devices) ToProto(d, response->add_devices());
  return Reply(context, Status::Ok());
}

grpc::ServerUnaryReactor* LocalService::GetDevice(grpc::CallbackServerContext* context,
                                                  const v1::GetDeviceRequest* request,
                                                  v1::Device* response) {
  Status checked = CheckName("name", request->name(), kMaxDeviceName);
  if (!checked.ok()) return Reply(context, checked);
  auto inventory = core_->inventory();
  const DeviceInfo* device = inventory->Find(request->name());
  if (device == nullptr) {
    return Reply(context, Status::NotFound("no RDMA device named " + Quote(request->name())));
  }
  ToProto(*device, response);
  return Reply(context, Status::Ok());
}

grpc::ServerUnaryReactor* LocalService::GetPortCounters(grpc::CallbackServerContext* context,
                                                        const v1::GetPortCountersRequest* request,
                                                        v1::GetPortCountersResponse* response) {
  Status checked = CheckName("device", request->device(), kMaxDeviceName);
  if (!checked.ok()) return Reply(context, checked);
  if (request->port() == 0 || request->port() > 255) {
    return Reply(context, Status::InvalidArgument("port: 1..255 required"));
  }
  auto counters = core_->PortCounters(request->device(), int(request->port()));
  if (counters.ok()) response->mutable_counters()->insert(counters->begin(), counters->end());
  return Reply(context, counters.status());
}

grpc::ServerUnaryReactor* LocalService::ResolvePath(grpc::CallbackServerContext* context,
                                                    const v1::ResolvePathRequest* request,
                                                    v1::Path* response) {
  Status checked = CheckName("peer_address", request->peer_address(), kMaxPeerName);
  if (!checked.ok()) return Reply(context, checked);
  auto path = core_->ResolvePath(PathRequest{
      request->peer_address(), int(std::min<uint32_t>(request->peer_active_mtu(), 1u << 20))});
  if (path.ok()) ToProto(*path, response);
  return Reply(context, path.status());
}

grpc::ServerUnaryReactor* LocalService::ListPeers(grpc::CallbackServerContext* context,
                                                  const v1::ListPeersRequest*,
                                                  v1::ListPeersResponse* response) {
  std::vector<ChannelRecord> channels;
  if (Broker* broker = core_->broker()) channels = broker->Channels();
  for (const PeerSnapshot& p : core_->ListPeers()) {
    v1::Peer* peer = response->add_peers();
    ToProto(p, peer);
    peer->set_channels(uint32_t(EstablishedChannelsWith(p, channels)));
  }
  return Reply(context, Status::Ok());
}

grpc::ServerWriteReactor<v1::Event>* LocalService::WatchEvents(
    grpc::CallbackServerContext* context, const v1::WatchEventsRequest* request) {
  auto kinds = KindsFromRequest(*request);
  if (!kinds.ok()) return new FailedStream<v1::Event>(kinds.status());
  StatusOr<ClientLimiter::Lease> lease = AdmitStream(context);
  if (!lease.ok()) return new FailedStream<v1::Event>(lease.status());
  auto* reactor = new EventStreamReactor(&core_->events(), std::move(lease).value());
  reactor->Start(std::move(kinds).value());
  return reactor;
}

}  // namespace rdmad
