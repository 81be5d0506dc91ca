// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/core/broker.h"

#include <spdlog/spdlog.h>

#include <future>
#include <random>

namespace rdmad {
namespace {

uint64_t RandomChannelId() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  uint64_t id = 0;
  while (id == 0) id = rng();
  return id;
}

}  // namespace

std::string_view ChannelStateName(ChannelState state) {
  switch (state) {
    case ChannelState::kPlanned: return "planned";
    case ChannelState::kOpening: return "opening";
    case ChannelState::kEstablished: return "established";
    case ChannelState::kFailed: return "failed";
    case ChannelState::kClosed: return "closed";
  }
  return "unknown";
}

std::string HostOfAddress(const std::string& address) {
  if (!address.empty() && address[0] == '[') {
    size_t end = address.find(']');
    return end == std::string::npos ? address : address.substr(1, end - 1);
  }
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || address.find(':') != colon) return address;
  return address.substr(0, colon);
}

Broker::Broker(BrokerOptions options)
    : options_(std::move(options)), services_(options_.host_name) {}

ChannelPlan Broker::Plan(const std::string& peer_ip, const std::string& tcp_reason) const {
  ChannelPlan plan;
  // The TCP acceptor listens where the peer can reach it: the loopback
  // address for a loopback peer, else the path's source address when one
  // resolved, else the wildcard (the endpoint then needs the host's
  // address; TODO: the address the peer session arrived on).
  bool v6 = peer_ip.find(':') != std::string::npos;
  bool loopback = peer_ip == "::1" || peer_ip.rfind("127.", 0) == 0;
  plan.tcp_bind_host = loopback ? peer_ip : (v6 ? "::" : "0.0.0.0");
  if (!tcp_reason.empty() || options_.force_tcp) {
    plan.tcp_reason = tcp_reason.empty() ? "the config forces TCP" : tcp_reason;
    return plan;
  }
  StatusOr<PathDecision> path = options_.resolve(PathRequest{peer_ip, 0});
  if (!path.ok()) {
    plan.tcp_reason = "no RDMA path to " + peer_ip + ": " + path.status().message();
    return plan;
  }
  plan.path = std::move(path).value();
  return plan;
}

StatusOr<PlannedChannel> Broker::PlanChannel(const std::string& peer, const std::string& service,
                                             bool force_tcp) {
  RDMAD_RETURN_IF_ERROR(ServiceRegistry::ValidateServiceName(service));
  StatusOr<BrokerPeer> found = options_.find_peer(peer);
  if (!found.ok()) return found.status();
  PlannedChannel planned;
  planned.channel_id = RandomChannelId();
  planned.peer_address = HostOfAddress(found.value().address);
  planned.plan =
      Plan(planned.peer_address, force_tcp ? "TCP requested by the application" : "");
  if (planned.plan.path) {
    spdlog::info("channel {:#x} to {} service {}: RDMA planned on {} port {} GID index {}",
                 planned.channel_id, peer, service, planned.plan.path->device,
                 planned.plan.path->port, planned.plan.path->gid_index);
  } else {
    spdlog::info("channel {:#x} to {} service {}: TCP planned: {}", planned.channel_id, peer,
                 service, planned.plan.tcp_reason);
  }
  std::lock_guard<std::mutex> lock(mu_);
  Planned& entry = channels_[planned.channel_id];
  entry.peer_key = peer;
  entry.record = ChannelRecord{planned.channel_id, found.value().name, service, true, "", "",
                               ChannelState::kPlanned, std::chrono::system_clock::now()};
  return planned;
}

StatusOr<ChannelEndpoint> Broker::Connect(uint64_t channel_id, const ChannelEndpoint& endpoint) {
  RDMAD_RETURN_IF_ERROR(ValidateChannelEndpoint(endpoint, /*listening=*/false));
  OpenChannelCall call;
  std::string peer_key;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = channels_.find(channel_id);
    if (it == channels_.end() || it->second.record.state != ChannelState::kPlanned) {
      return Status::NotFound("no planned channel " + std::to_string(channel_id));
    }
    it->second.record.state = ChannelState::kOpening;
    peer_key = it->second.peer_key;
    call.service = it->second.record.service;
  }
  call.channel_id = channel_id;
  call.initiator_host = options_.host_name;
  call.initiator_instance = options_.instance_id;
  call.initiator = endpoint;
  StatusOr<BrokerPeer> peer = options_.find_peer(peer_key);
  StatusOr<std::shared_ptr<PeerLink>> link =
      peer.ok() ? peer.value().link : StatusOr<std::shared_ptr<PeerLink>>(peer.status());
  if (!link.ok()) {
    Update(channel_id, ChannelState::kFailed, "", link.status().message());
    return link.status();
  }
  auto promise = std::make_shared<std::promise<StatusOr<ChannelEndpoint>>>();
  auto answer = promise->get_future();
  link.value()->OpenChannel(call, options_.open_timeout,
                            [promise](StatusOr<ChannelEndpoint> r) { promise->set_value(std::move(r)); });
  StatusOr<ChannelEndpoint> reply = answer.get();
  if (reply.ok()) {
    Status valid = ValidateChannelEndpoint(reply.value());
    if (!valid.ok()) reply = Status::InvalidArgument("the peer's " + valid.message());
  }
  if (!reply.ok()) {
    spdlog::warn("channel {:#x} to {}: {}", channel_id, peer_key, reply.status().ToString());
    Update(channel_id, ChannelState::kFailed, "", reply.status().message());
    return reply.status();
  }
  spdlog::info("channel {:#x} to {} established over {}{}", channel_id, peer_key,
               EndpointTransport(reply.value()),
               reply.value().transport_reason.empty() ? "" : ": " + reply.value().transport_reason);
  Update(channel_id, ChannelState::kEstablished, EndpointTransport(reply.value()),
         reply.value().transport_reason);
  return reply;
}

StatusOr<ChannelEndpoint> Broker::OnOpenChannel(const OpenChannelCall& call,
                                                const std::string& peer_ip) {
  RDMAD_RETURN_IF_ERROR(ServiceRegistry::ValidateServiceName(call.service));
  RDMAD_RETURN_IF_ERROR(ValidateChannelEndpoint(call.initiator, /*listening=*/false));
  IncomingChannelRequest request;
  request.channel_id = call.channel_id;
  request.peer = call.initiator_host;
  request.service = call.service;
  request.initiator = call.initiator;
  request.plan = Plan(peer_ip, call.initiator.tcp ? "the initiator chose TCP" : "");
  request.deadline = options_.accept_deadline;
  {
    std::lock_guard<std::mutex> lock(mu_);
    channels_[call.channel_id].record =
        ChannelRecord{call.channel_id, call.initiator_host, call.service, false, "", "",
                      ChannelState::kOpening, std::chrono::system_clock::now()};
  }
  StatusOr<ChannelEndpoint> answer = services_.Offer(std::move(request));
  if (!answer.ok()) {
    Update(call.channel_id, ChannelState::kFailed, "", answer.status().message());
    return answer;
  }
  Update(call.channel_id, ChannelState::kEstablished, EndpointTransport(answer.value()),
         answer.value().transport_reason);
  return answer;
}

void Broker::Update(uint64_t channel_id, ChannelState state, const std::string& transport,
                    const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = channels_.find(channel_id);
  if (it == channels_.end()) return;
  it->second.record.state = state;
  if (!transport.empty()) it->second.record.transport = transport;
  it->second.record.reason = reason;
}

std::vector<ChannelRecord> Broker::Channels() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ChannelRecord> out;
  for (const auto& [id, entry] : channels_) out.push_back(entry.record);
  return out;
}

}  // namespace rdmad
