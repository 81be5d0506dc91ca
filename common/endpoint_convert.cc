// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/endpoint_convert.h"

#include <algorithm>

namespace rdmad::internal {
namespace {

void QpToProto(const QpAttributes& q, v1::QpAttributes* out) {
  out->set_type(q.type);
  out->set_timeout(q.timeout);
  out->set_retry_cnt(q.retry_cnt);
  out->set_rnr_retry(q.rnr_retry);
  out->set_min_rnr_timer(q.min_rnr_timer);
  out->set_traffic_class(q.traffic_class);
  out->set_service_level(q.service_level);
  out->set_hop_limit(q.hop_limit);
  out->set_max_inline(q.max_inline);
  out->set_send_depth(q.send_depth);
  out->set_recv_depth(q.recv_depth);
  out->set_qps_per_channel(q.qps_per_channel);
}

QpAttributes QpFromProto(const v1::QpAttributes& q) {
  QpAttributes out;
  out.type = q.type();
  out.timeout = q.timeout();
  out.retry_cnt = q.retry_cnt();
  out.rnr_retry = q.rnr_retry();
  out.min_rnr_timer = q.min_rnr_timer();
  out.traffic_class = q.traffic_class();
  out.service_level = q.service_level();
  out.hop_limit = q.hop_limit();
  out.max_inline = q.max_inline();
  out.send_depth = q.send_depth();
  out.recv_depth = q.recv_depth();
  out.qps_per_channel = q.qps_per_channel();
  return out;
}

void RdmaToProto(const RdmaEndpoint& e, v1::RdmaEndpoint* out) {
  out->set_device(e.device);
  out->set_port(e.port);
  out->set_qpn(e.qpn);
  out->set_psn(e.psn);
  out->set_gid(std::string(e.gid.begin(), e.gid.end()));
  out->set_gid_index(e.gid_index);
  out->set_gid_type(e.gid_type);
  out->set_lid(e.lid);
  out->set_active_mtu(e.active_mtu);
  QpToProto(e.qp, out->mutable_qp());
  out->set_ring_address(e.ring_address);
  out->set_ring_rkey(e.ring_rkey);
  out->set_ring_slots(e.ring_slots);
  out->set_slot_size(e.slot_size);
  out->set_credits(e.credits);
  out->set_device_tag(e.device_tag);
  out->set_responder_resources(e.responder_resources);
  for (const RailEndpoint& r : e.rails) {
    v1::RailEndpoint* rail = out->add_rails();
    rail->set_device(r.device);
    rail->set_port(r.port);
    rail->set_qpn(r.qpn);
    rail->set_psn(r.psn);
    rail->set_gid(std::string(r.gid.begin(), r.gid.end()));
    rail->set_gid_index(r.gid_index);
    rail->set_gid_type(r.gid_type);
    rail->set_lid(r.lid);
    rail->set_active_mtu(r.active_mtu);
    rail->set_prefix_len(r.prefix_len);
    rail->set_weight(r.weight);
    rail->set_device_tag(r.device_tag);
    rail->set_pair(r.pair);
    rail->set_responder_resources(r.responder_resources);
  }
}

StatusOr<RailEndpoint> RailFromProto(const v1::RailEndpoint& in) {
  if (in.gid().size() != 16) {
    return Status::InvalidArgument("RDMA endpoint: a rail's gid is " +
                                   std::to_string(in.gid().size()) + " bytes, not 16");
  }
  RailEndpoint r;
  r.device = in.device();
  r.port = in.port();
  r.qpn = in.qpn();
  r.psn = in.psn();
  std::copy(in.gid().begin(), in.gid().end(), r.gid.begin());
  r.gid_index = in.gid_index();
  r.gid_type = in.gid_type();
  r.lid = in.lid();
  r.active_mtu = in.active_mtu();
  r.prefix_len = in.prefix_len();
  r.weight = in.weight();
  r.device_tag = in.device_tag();
  r.pair = in.pair();
  r.responder_resources = in.responder_resources();
  return r;
}

StatusOr<RdmaEndpoint> RdmaFromProto(const v1::RdmaEndpoint& in) {
  if (in.gid().size() != 16) {
    return Status::InvalidArgument("RDMA endpoint: gid is " + std::to_string(in.gid().size()) +
                                   " bytes, not 16");
  }
  RdmaEndpoint e;
  e.device = in.device();
  e.port = in.port();
  e.qpn = in.qpn();
  e.psn = in.psn();
  std::copy(in.gid().begin(), in.gid().end(), e.gid.begin());
  e.gid_index = in.gid_index();
  e.gid_type = in.gid_type();
  e.lid = in.lid();
  e.active_mtu = in.active_mtu();
  e.qp = QpFromProto(in.qp());
  e.ring_address = in.ring_address();
  e.ring_rkey = in.ring_rkey();
  e.ring_slots = in.ring_slots();
  e.slot_size = in.slot_size();
  e.credits = in.credits();
  e.device_tag = in.device_tag();
  e.responder_resources = in.responder_resources();
  if (static_cast<size_t>(in.rails_size()) > kMaxRails - 1) {
    return Status::InvalidArgument("RDMA endpoint: " + std::to_string(in.rails_size()) +
                                   " further rails; at most " + std::to_string(kMaxRails - 1));
  }
  for (const v1::RailEndpoint& rail : in.rails()) {
    StatusOr<RailEndpoint> r = RailFromProto(rail);
    if (!r.ok()) return r.status();
    e.rails.push_back(std::move(r).value());
  }
  return e;
}

StatusOr<TcpEndpoint> TcpFromProto(const v1::TcpEndpoint& in) {
  if (in.token().size() != 32) {
    return Status::InvalidArgument("TCP endpoint: token is " + std::to_string(in.token().size()) +
                                   " bytes, not 32");
  }
  if (in.port() > 65535) {
    return Status::InvalidArgument("TCP endpoint: port " + std::to_string(in.port()) +
                                   " is out of range 1..65535");
  }
  TcpEndpoint e;
  e.host = in.host();
  e.port = static_cast<uint16_t>(in.port());
  std::copy(in.token().begin(), in.token().end(), e.token.begin());
  return e;
}

}  // namespace

void ToProto(const WireEndpoint& endpoint, v1::Endpoint* out) {
  if (endpoint.rdma) RdmaToProto(*endpoint.rdma, out->mutable_rdma());
  if (endpoint.tcp) {
    v1::TcpEndpoint* tcp = out->mutable_tcp();
    tcp->set_host(endpoint.tcp->host);
    tcp->set_port(endpoint.tcp->port);
    tcp->set_token(std::string(endpoint.tcp->token.begin(), endpoint.tcp->token.end()));
  }
  out->set_transport_reason(endpoint.transport_reason);
}

StatusOr<WireEndpoint> FromProto(const v1::Endpoint& in) {
  WireEndpoint out;
  out.transport_reason = in.transport_reason();
  if (in.has_rdma()) {
    StatusOr<RdmaEndpoint> rdma = RdmaFromProto(in.rdma());
    if (!rdma.ok()) return rdma.status();
    out.rdma = std::move(rdma).value();
  } else if (in.has_tcp()) {
    StatusOr<TcpEndpoint> tcp = TcpFromProto(in.tcp());
    if (!tcp.ok()) return tcp.status();
    out.tcp = std::move(tcp).value();
  } else {
    return Status::InvalidArgument("endpoint: neither rdma nor tcp is set");
  }
  return out;
}

RdmaPlan PlanFromPath(const v1::Path& path) {
  RdmaPlan plan;
  plan.device = path.device();
  plan.port = path.port();
  plan.gid_index = path.gid_index();
  plan.path_mtu_cap = path.mtu() != 0 ? path.mtu() : 4096;
  plan.qp = QpFromProto(path.qp());
  plan.spin_us = path.qp().spin_us();
  if (path.qp().slot_size() != 0) plan.slot_size = path.qp().slot_size();
  uint32_t relaxed = path.qp().relaxed_ordering();
  plan.relaxed_ordering = relaxed <= 2 ? static_cast<int>(relaxed) : 2;
  return plan;
}

}  // namespace rdmad::internal

namespace rdmad::internal {

RdmaPlan PlanFromChannelPlan(const v1::ChannelPlan& plan) {
  RdmaPlan out = PlanFromPath(plan.path());
  out.weight = plan.weight() != 0 ? plan.weight() : 1;
  out.first_striped = !plan.first_not_striped();
  for (const v1::RailPath& r : plan.rails()) {
    if (out.rails.size() == kMaxRails - 1) break;
    RailPlan rail;
    rail.device = r.device();
    rail.port = r.port();
    rail.gid_index = r.gid_index();
    rail.prefix_len = r.prefix_len();
    rail.weight = r.weight() != 0 ? r.weight() : 1;
    out.rails.push_back(std::move(rail));
  }
  return out;
}

}  // namespace rdmad::internal
