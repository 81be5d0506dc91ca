// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The local API's channel calls (LocalService, declared in local_service.h):
// the handshake (Listen, Accept, Reject, PlanChannel, Connect), the
// lifeline (HoldChannel, ReleaseChannel) and the table (ListChannels).

#include <algorithm>
#include <memory>

#include "common/traffic_convert.h"
#include "daemon/rpc/channel_convert.h"
#include "daemon/rpc/grpc_status.h"
#include "daemon/rpc/hold_reactor.h"
#include "daemon/rpc/listen_reactor.h"
#include "daemon/rpc/local_service.h"
#include "daemon/rpc/request_checks.h"
#include "spdlog/spdlog.h"

namespace rdmad {
namespace {

Status NoBroker() { return Status::Unavailable("this daemon has no channel broker"); }

}  // namespace

grpc::ServerWriteReactor<v1::ListenEvent>* LocalService::Listen(
    grpc::CallbackServerContext* context, const v1::ListenRequest* request) {
  Broker* broker = core_->broker();
  if (broker == nullptr) return new FailedStream<v1::ListenEvent>(NoBroker());
  StatusOr<ClientLimiter::Lease> lease = AdmitStream(context);
  if (!lease.ok()) return new FailedStream<v1::ListenEvent>(lease.status());
  return new ListenReactor(&broker->services(), request->service(), CallerOf(context),
                           std::move(lease).value());
}

grpc::ServerUnaryReactor* LocalService::Accept(grpc::CallbackServerContext* context,
                                               const v1::AcceptRequest* request,
                                               v1::AcceptResponse* response) {
  Broker* broker = core_->broker();
  if (broker == nullptr) return Reply(context, NoBroker());
  if (Status known = CheckKnownFields(*request); !known.ok()) return Reply(context, known);
  StatusOr<ChannelEndpoints> parsed = EndpointsFromProto(request->endpoints(), "endpoints");
  if (!parsed.ok()) return Reply(context, parsed.status());
  ChannelEndpoints endpoints = std::move(parsed).value();
  Caller caller = CallerOf(context);
  StatusOr<std::vector<uint64_t>> channel_ids =
      broker->services().ChannelsOf(caller, request->request_id());
  if (channel_ids.ok()) {  // the listener's own request: more channels for it?
    Status admitted = broker->AdmitChannels(caller, channel_ids.value());
    if (!admitted.ok()) {  // the initiator hears it at once
      Status failed = broker->services().Fail(caller, request->request_id(), admitted);
      if (!failed.ok()) spdlog::debug("request {}: {}", request->request_id(), failed.message());
      return Reply(context, admitted);
    }
  }
  std::vector<EndpointKind> transports;
  for (const ChannelEndpoint& e : endpoints) transports.push_back(KindOf(e));
  Status accepted = broker->services().Accept(caller, request->request_id(), std::move(endpoints));
  for (size_t i = 0; accepted.ok() && channel_ids.ok() && i < channel_ids.value().size(); ++i) {
    StatusOr<ChannelLease> lease = broker->LeaseOf(channel_ids.value()[i], transports[i]);
    response->add_leases(lease.ok() ? SerializeLease(lease.value(), broker->lease_sealer())
                                    : std::string());
  }
  return Reply(context, accepted);
}

grpc::ServerUnaryReactor* LocalService::Reject(grpc::CallbackServerContext* context,
                                               const v1::RejectRequest* request,
                                               v1::RejectResponse*) {
  Broker* broker = core_->broker();
  if (broker == nullptr) return Reply(context, NoBroker());
  std::string reason = request->reason().empty() ? "no reason given" : request->reason();
  return Reply(context,
               broker->services().Reject(CallerOf(context), request->request_id(), reason));
}

grpc::ServerUnaryReactor* LocalService::PlanChannel(grpc::CallbackServerContext* context,
                                                    const v1::PlanChannelRequest* request,
                                                    v1::PlanChannelResponse* response) {
  Broker* broker = core_->broker();
  if (broker == nullptr) return Reply(context, NoBroker());
  Status checked = CheckName("peer", request->peer(), kMaxPeerName);
  if (!checked.ok()) return Reply(context, checked);
  auto planned = broker->PlanChannel(CallerOf(context), request->peer(), request->service(),
                                     request->force_tcp(), std::max(1u, request->count()));
  if (planned.ok()) {
    for (uint64_t id : planned.value().channel_ids) response->add_channel_ids(id);
    ToProto(planned.value().plan, response->mutable_plan());
    response->set_peer_address(planned.value().peer_address);
  }
  return Reply(context, planned.status());
}

grpc::ServerUnaryReactor* LocalService::Connect(grpc::CallbackServerContext* context,
                                                const v1::ConnectRequest* request,
                                                v1::ConnectResponse* response) {
  Broker* broker = core_->broker();
  if (broker == nullptr) return Reply(context, NoBroker());
  if (Status known = CheckKnownFields(*request); !known.ok()) return Reply(context, known);
  StatusOr<std::vector<ChannelOpening>> channels = FromProto(request->channels());
  if (!channels.ok()) return Reply(context, channels.status());
  StatusOr<ClientLimiter::Lease> admitted = AdmitConnect(context);
  if (!admitted.ok()) return Reply(context, admitted.status());
  auto lease = std::make_shared<ClientLimiter::Lease>(std::move(admitted).value());
  auto* reactor = context->DefaultReactor();
  Caller caller = CallerOf(context);
  // The server's Shutdown waits for this Finish, and the daemon stops the
  // broker first (pending opens fail at once), so the broker outlives it.
  Status queued = handshakes_.Submit(
      [broker, context, reactor, response, lease, caller, channels = std::move(channels).value()] {
        StatusOr<ChannelEndpoints> peer = broker->Connect(caller, channels);
        for (size_t i = 0; peer.ok() && i < channels.size(); ++i) {
          uint64_t id = channels[i].channel_id;
          if (context->IsCancelled()) {  // nobody will hold it
            Status released =
                broker->Release(caller, id, "the application went away during the handshake");
            if (!released.ok()) spdlog::debug("channel {:#018x}: {}", id, released.ToString());
          }
          StatusOr<ChannelLease> channel_lease = broker->LeaseOf(id);
          v1::ConnectedChannel* c = response->add_channels();
          ToProto(peer.value()[i], c->mutable_peer());
          c->set_lease(channel_lease.ok()
                           ? SerializeLease(channel_lease.value(), broker->lease_sealer())
                           : std::string());
        }
        lease->Reset();  // before the answer: the client may Connect again at once
        reactor->Finish(ToGrpcStatus(peer.status()));
      });
  if (!queued.ok()) reactor->Finish(ToGrpcStatus(queued));
  return reactor;
}

grpc::ServerWriteReactor<v1::ChannelEvent>* LocalService::HoldChannel(
    grpc::CallbackServerContext* context, const v1::HoldChannelRequest* request) {
  Broker* broker = core_->broker();
  if (broker == nullptr) return new FailedStream<v1::ChannelEvent>(NoBroker());
  StatusOr<ClientLimiter::Lease> lease = AdmitStream(context);
  if (!lease.ok()) return new FailedStream<v1::ChannelEvent>(lease.status());
  if (Status known = CheckKnownFields(*request); !known.ok()) {
    return new FailedStream<v1::ChannelEvent>(known);
  }
  const int count = request->channel_ids_size();
  if (count == 0 || size_t(count) > kMaxChannelBatch) {
    return new FailedStream<v1::ChannelEvent>(Status::InvalidArgument(
        "channel_ids: 1 to " + std::to_string(kMaxChannelBatch) + " channels"));
  }
  if (request->leases_size() != 0 && request->leases_size() != count) {
    return new FailedStream<v1::ChannelEvent>(
        Status::InvalidArgument("leases: none, or one per channel_ids"));
  }
  Caller caller = CallerOf(context);
  std::vector<HoldReactor::Held> channels;
  for (int i = 0; i < count; ++i) {
    HoldReactor::Held held{request->channel_ids(i), false, {}};
    const std::string& bytes = request->leases_size() == 0 ? std::string() : request->leases(i);
    if (!bytes.empty()) {  // re-attaching after a restart of rdmad
      held.reattach = true;
      StatusOr<ChannelLease> channel = ParseLease(bytes, broker->lease_sealer());
      held.adopted =
          channel.ok() ? broker->Adopt(caller, held.channel_id, channel.value()) : channel.status();
    }
    if (!held.adopted.ok() && count == 1) return new FailedStream<v1::ChannelEvent>(held.adopted);
    channels.push_back(std::move(held));
  }
  return new HoldReactor(context, broker, caller, channels, std::move(lease).value());
}

grpc::ServerUnaryReactor* LocalService::ReleaseChannel(grpc::CallbackServerContext* context,
                                                       const v1::ReleaseChannelRequest* request,
                                                       v1::ReleaseChannelResponse*) {
  Broker* broker = core_->broker();
  if (broker == nullptr) return Reply(context, NoBroker());
  if (request->channel_id() == 0) {
    return Reply(context, Status::InvalidArgument("channel_id: required"));
  }
  Caller caller = CallerOf(context);
  if (request->has_traffic()) {  // the application's last account, before the close
    StatusOr<TrafficTotals> last = internal::FromProto(request->traffic());
    if (!last.ok())
      return Reply(context, Status::InvalidArgument("traffic: " + last.status().message()));
    broker->ReportTraffic(caller, {{request->channel_id(), *last}}, {});
  }
  std::string reason = "closed by the application";
  if (!request->reason().empty()) reason += ": " + request->reason();
  return Reply(context, broker->Release(caller, request->channel_id(), reason));
}

grpc::ServerUnaryReactor* LocalService::ReportChannel(grpc::CallbackServerContext* context,
                                                      const v1::ReportChannelRequest* request,
                                                      v1::ReportChannelResponse*) {
  Broker* broker = core_->broker();
  if (broker == nullptr) return Reply(context, NoBroker());
  if (request->channel_id() == 0) {
    return Reply(context, Status::InvalidArgument("channel_id: required"));
  }
  if (static_cast<size_t>(request->rails_size()) > internal::kMaxRails) {
    return Reply(context,
                 Status::InvalidArgument(fmt::format("rails: {} reported, at most {}",
                                                     request->rails_size(), internal::kMaxRails)));
  }
  std::vector<ChannelRailRecord> rails;
  for (const v1::ChannelRail& r : request->rails()) {
    ChannelRailRecord rail;
    rail.bytes_written = r.bytes_written();
    rail.bytes_read = r.bytes_read();
    rail.up = r.up();
    rail.reason = r.reason();
    rails.push_back(std::move(rail));
  }
  std::vector<std::string> changes;
  Status s = broker->ReportRails(CallerOf(context), request->channel_id(), rails, &changes);
  for (std::string& line : changes)
    core_->events().Publish(EventKind::kRailChanged, std::move(line));
  return Reply(context, s);
}

grpc::ServerUnaryReactor* LocalService::ReportTraffic(grpc::CallbackServerContext* context,
                                                      const v1::ReportTrafficRequest* request,
                                                      v1::ReportTrafficResponse* response) {
  Broker* broker = core_->broker();
  if (broker == nullptr) return Reply(context, NoBroker());
  constexpr int kMaxEntries = 4096;  // what the library sends at most (TrafficReporter)
  if (request->channels_size() > kMaxEntries || request->connects_size() > kMaxEntries) {
    return Reply(context, Status::InvalidArgument(fmt::format(
                              "{} channels and {} connects reported, at most {} of each",
                              request->channels_size(), request->connects_size(), kMaxEntries)));
  }
  std::vector<Broker::ReportedTraffic> channels;
  for (int i = 0; i < request->channels_size(); ++i) {
    StatusOr<TrafficTotals> totals = internal::FromProto(request->channels(i));
    if (!totals.ok()) {
      return Reply(context, Status::InvalidArgument(
                                fmt::format("channels[{}]: {}", i, totals.status().message())));
    }
    channels.push_back({request->channels(i).channel_id(), *totals});
  }
  std::vector<Broker::ReportedConnect> connects;
  for (const v1::ConnectTiming& c : request->connects()) {
    connects.push_back({c.channel_id(), c.pooled(), c.duration_ns()});
  }
  response->set_skipped(uint32_t(broker->ReportTraffic(CallerOf(context), channels, connects)));
  return Reply(context, Status::Ok());
}

grpc::ServerUnaryReactor* LocalService::ListChannels(grpc::CallbackServerContext* context,
                                                     const v1::ListChannelsRequest*,
                                                     v1::ListChannelsResponse* response) {
  Broker* broker = core_->broker();
  if (broker == nullptr) return Reply(context, Status::Ok());
  auto now = std::chrono::system_clock::now();
  for (const ChannelRecord& r : broker->ChannelsFor(CallerOf(context))) {
    ToProto(r, now, response->add_channels());
  }
  return Reply(context, Status::Ok());
}

}  // namespace rdmad
