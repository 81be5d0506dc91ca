// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/rpc/channel_convert.h"

#include "common/traffic_convert.h"
#include "daemon/rpc/proto_convert.h"

namespace rdmad {

void ToProto(const ChannelPlan& plan, v1::ChannelPlan* out) {
  if (plan.path) ToProto(*plan.path, out->mutable_path());
  out->set_tcp_reason(plan.tcp_reason);
  out->set_tcp_bind_host(plan.tcp_bind_host);
  if (!plan.path) return;
  out->set_weight(plan.rails.weight);
  out->set_first_not_striped(!plan.rails.first_striped);
  for (const RailPathDecision& r : plan.rails.further) {
    v1::RailPath* rail = out->add_rails();
    rail->set_device(r.device);
    rail->set_port(uint32_t(r.port));
    rail->set_gid_index(uint32_t(r.gid_index));
    rail->set_gid(r.gid);
    rail->set_gid_type(std::string(GidTypeName(r.gid_type)));
    rail->set_source_ip(r.source_ip);
    rail->set_prefix_len(uint32_t(r.prefix_len));
    rail->set_netdev(r.netdev);
    rail->set_active_mtu(uint32_t(r.active_mtu));
    rail->set_weight(r.weight);
    rail->set_reason(r.reason);
  }
}

void ToProto(const OpenChannelCall& call, v1::OpenChannelRequest* out) {
  out->set_service(call.service);
  out->set_initiator_host(call.initiator_host);
  out->set_initiator_instance(call.initiator_instance);
  for (const ChannelOpening& c : call.channels) ToProto(c, out->add_channels());
}

void ToProto(const ChannelRecord& r, std::chrono::system_clock::time_point now,
             v1::ChannelEntry* out) {
  out->set_id(r.channel_id);
  out->set_peer(r.peer);
  out->set_service(r.service);
  out->set_role(r.initiator ? "initiator" : "acceptor");
  out->set_transport(EndpointKindName(r.transport));
  out->set_state(std::string(ChannelStateName(r.state)));
  out->set_reason(r.reason);
  out->set_age_seconds(std::chrono::duration<double>(now - r.created).count());
  if (r.owner_uid != kNoUid) out->set_owner_uid(uint32_t(r.owner_uid));
  out->set_owner_pid(uint32_t(r.owner_pid));
  for (const ChannelRailRecord& rail : r.rails) {
    v1::ChannelRail* row = out->add_rails();
    row->set_device(rail.device);
    row->set_peer_device(rail.peer_device);
    row->set_bytes_written(rail.bytes_written);
    row->set_bytes_read(rail.bytes_read);
    row->set_up(rail.up);
    row->set_reason(rail.reason);
  }
  internal::ToProto(r.traffic, out->mutable_traffic());
  out->mutable_traffic()->set_channel_id(r.channel_id);
}

void ToProto(const ChannelOpening& opening, v1::ChannelOpening* out) {
  out->set_channel_id(opening.channel_id);
  ToProto(opening.endpoint, out->mutable_endpoint());
}

StatusOr<std::vector<ChannelOpening>> FromProto(
    const google::protobuf::RepeatedPtrField<v1::ChannelOpening>& in) {
  if (in.empty()) return Status::InvalidArgument("channels: required");
  if (size_t(in.size()) > kMaxChannelBatch) {
    return Status::InvalidArgument("channels: at most " + std::to_string(kMaxChannelBatch) +
                                   " per batch");
  }
  std::vector<ChannelOpening> out;
  for (int i = 0; i < in.size(); ++i) {
    StatusOr<ChannelEndpoint> endpoint = FromProto(in[i].endpoint());
    if (!endpoint.ok()) {
      return Status::InvalidArgument("channels[" + std::to_string(i) + "]." +
                                     endpoint.status().message());
    }
    out.push_back(ChannelOpening{in[i].channel_id(), std::move(endpoint).value()});
  }
  return out;
}

StatusOr<ChannelEndpoints> EndpointsFromProto(
    const google::protobuf::RepeatedPtrField<v1::Endpoint>& in, std::string_view field) {
  if (in.empty()) return Status::InvalidArgument(std::string(field) + ": required");
  if (size_t(in.size()) > kMaxChannelBatch) {
    return Status::InvalidArgument(std::string(field) + ": at most " +
                                   std::to_string(kMaxChannelBatch));
  }
  ChannelEndpoints out;
  for (int i = 0; i < in.size(); ++i) {
    StatusOr<ChannelEndpoint> one = FromProto(in[i]);
    if (!one.ok()) {
      return Status::InvalidArgument(std::string(field) + "[" + std::to_string(i) +
                                     "]: " + one.status().message());
    }
    out.push_back(std::move(one).value());
  }
  return out;
}

StatusOr<OpenChannelCall> FromProto(const v1::OpenChannelRequest& in) {
  StatusOr<std::vector<ChannelOpening>> channels = FromProto(in.channels());
  if (!channels.ok()) return channels.status();
  OpenChannelCall call;
  call.service = in.service();
  call.initiator_host = in.initiator_host();
  call.initiator_instance = in.initiator_instance();
  call.channels = std::move(channels).value();
  return call;
}

std::string SerializeLease(const ChannelLease& lease, const LeaseSealer& sealer) {
  v1::ChannelLease out;
  out.set_channel_id(lease.channel_id);
  out.set_peer(lease.peer);
  out.set_peer_key(lease.peer_key);
  out.set_service(lease.service);
  out.set_initiator(lease.initiator);
  out.set_transport(EndpointKindName(lease.transport));
  out.set_reason(lease.reason);
  out.set_device(lease.device);
  out.set_port(uint32_t(lease.port));
  out.set_gid(lease.gid);
  out.set_peer_instance(lease.peer_instance);
  out.set_self_instance(lease.self_instance);
  out.set_created_unix_ms(
      std::chrono::duration_cast<std::chrono::milliseconds>(lease.created.time_since_epoch())
          .count());
  out.set_owner_uid(uint32_t(lease.owner_uid));
  return sealer.Seal(out.SerializeAsString());
}

StatusOr<ChannelLease> ParseLease(const std::string& sealed, const LeaseSealer& sealer) {
  if (sealed.size() > 4096) return Status::InvalidArgument("lease: over 4096 bytes");
  StatusOr<std::string> bytes = sealer.Open(sealed);
  if (!bytes.ok()) return bytes.status();
  v1::ChannelLease in;
  if (!in.ParseFromString(*bytes)) {
    return Status::InvalidArgument("lease: not a lease this daemon gave");
  }
  if (in.port() > 255) return Status::InvalidArgument("lease: port: 0..255 required");
  for (const std::string* field :
       {&in.peer(), &in.peer_key(), &in.service(), &in.transport(), &in.device(), &in.gid(),
        &in.peer_instance(), &in.self_instance()}) {
    if (field->size() > 255) return Status::InvalidArgument("lease: a field over 255 bytes");
  }
  ChannelLease lease;
  lease.channel_id = in.channel_id();
  lease.peer = in.peer();
  lease.peer_key = in.peer_key();
  lease.service = in.service();
  lease.initiator = in.initiator();
  std::optional<EndpointKind> transport = ParseEndpointKind(in.transport());
  if (!transport) return Status::InvalidArgument("lease: not a lease this daemon gave");
  lease.transport = *transport;
  lease.reason = in.reason().substr(0, 1024);
  lease.device = in.device();
  lease.port = int(in.port());
  lease.owner_uid = in.has_owner_uid() ? uid_t(in.owner_uid()) : kNoUid;
  lease.gid = in.gid();
  lease.peer_instance = in.peer_instance();
  lease.self_instance = in.self_instance();
  lease.created =
      std::chrono::system_clock::time_point(std::chrono::milliseconds(in.created_unix_ms()));
  return lease;
}

}  // namespace rdmad
