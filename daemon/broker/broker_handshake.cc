// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Broker: the handshake of channels, one or a batch at a time: the
// initiator's Connect (one OpenChannel to the peer daemon for the whole
// batch) and the acceptor's OnOpenChannel (one offer to the listener). A
// batch is all or nothing on both sides: when one of its channels fails or
// ends during the handshake, every other one ends too.

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <span>

#include "daemon/broker/broker.h"

namespace rdmad {
namespace {

// A peer's reply failure after which the peer may still hold the channel
// (it accepted, or may accept late): the peer is told that it is closed.
bool PeerMayHoldIt(StatusCode code) {
  return code != StatusCode::kNotFound && code != StatusCode::kPermissionDenied &&
         code != StatusCode::kAborted && code != StatusCode::kFailedPrecondition;
}

// "channels[I]." in a batch of more than one: the request field a message
// names ("" for a lone channel).
std::string FieldOf(size_t index, size_t count) {
  return count == 1 ? "" : "channels[" + std::to_string(index) + "].";
}

// The ids of a batch, in order, once every id and endpoint checked:
// INVALID_ARGUMENT naming the field for none, an id 0, a repeat, more
// than kMaxChannelBatch or a malformed endpoint.
StatusOr<std::vector<uint64_t>> CheckBatch(std::span<const ChannelOpening> channels) {
  if (channels.empty()) return Status::InvalidArgument("channels: none");
  if (channels.size() > kMaxChannelBatch) {
    return Status::InvalidArgument(
        fmt::format("channels: at most {} per batch, not {}", kMaxChannelBatch, channels.size()));
  }
  std::vector<uint64_t> ids;
  for (const ChannelOpening& c : channels) ids.push_back(c.channel_id);
  std::set<uint64_t> seen;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == 0)
      return Status::InvalidArgument(FieldOf(i, ids.size()) + "channel_id: required");
    if (!seen.insert(ids[i]).second) {
      return Status::InvalidArgument(fmt::format("{}channel_id: {:#018x} is in the batch twice",
                                                 FieldOf(i, ids.size()), ids[i]));
    }
  }
  for (size_t i = 0; i < ids.size(); ++i) {  // the ids first, then the endpoints
    Status valid = ValidateChannelEndpoint(channels[i].endpoint, /*listening=*/false);
    if (!valid.ok()) return Status::InvalidArgument(FieldOf(i, ids.size()) + valid.message());
  }
  return ids;
}

std::string Describe(const std::vector<uint64_t>& ids) {
  if (ids.size() == 1) return fmt::format("channel {:#018x}", ids[0]);
  return fmt::format("{} channels ({:#018x} ...)", ids.size(), ids[0]);
}

}  // namespace

StatusOr<ChannelEndpoint> Broker::Connect(const Caller& caller, uint64_t channel_id,
                                          const ChannelEndpoint& endpoint) {
  StatusOr<ChannelEndpoints> reply = Connect(caller, {ChannelOpening{channel_id, endpoint}});
  if (!reply.ok()) return reply.status();
  return std::move(reply.value().front());
}

StatusOr<OpenChannelCall> Broker::OpenLocked(const Caller& caller,
                                             const std::vector<ChannelOpening>& channels,
                                             std::string* peer_key) {
  std::vector<Entry*> entries;
  for (size_t i = 0; i < channels.size(); ++i) {
    uint64_t id = channels[i].channel_id;
    Entry* e = FindOwnedLocked(caller, id, /*admin=*/false);
    if (e == nullptr) return Status::NotFound("no planned channel " + std::to_string(id));
    const ChannelRecord& r = e->record;
    if (r.state != ChannelState::kPlanned) {
      return Status::FailedPrecondition("channel " + std::to_string(id) + " is " +
                                        std::string(ChannelStateName(r.state)) +
                                        (r.reason.empty() ? "" : ": " + r.reason));
    }
    if (i > 0 && (e->peer_key != entries[0]->peer_key || r.service != entries[0]->record.service)) {
      return Status::InvalidArgument(fmt::format(
          "{}channel_id: {:#018x} was planned for {} service {}, the batch for {} service {}",
          FieldOf(i, channels.size()), id, e->peer_key, r.service, entries[0]->peer_key,
          entries[0]->record.service));
    }
    entries.push_back(e);
  }
  OpenChannelCall call;
  call.service = entries[0]->record.service;
  call.initiator_host = options_.host_name;
  call.initiator_instance = options_.instance_id;
  call.channels = channels;
  *peer_key = entries[0]->peer_key;
  for (Entry* e : entries) ApplyLocked(*e, ChannelEvent::kConnect);
  return call;
}

StatusOr<ChannelEndpoints> Broker::Connect(const Caller& caller,
                                           const std::vector<ChannelOpening>& channels) {
  StatusOr<std::vector<uint64_t>> ids = CheckBatch(channels);
  if (!ids.ok()) return ids.status();
  std::string peer_key;
  StatusOr<OpenChannelCall> call = Status::Internal("not opened");
  {
    std::lock_guard<std::mutex> lock(mu_);
    call = OpenLocked(caller, channels, &peer_key);
  }
  if (!call.ok()) return call.status();
  StatusOr<BrokerPeer> peer = options_.network->AwaitPeer(peer_key, options_.open_timeout);
  StatusOr<std::shared_ptr<PeerLink>> link =
      peer.ok() ? peer.value().link : StatusOr<std::shared_ptr<PeerLink>>(peer.status());
  if (!link.ok()) {
    for (uint64_t id : ids.value()) Fail(id, link.status().message());
    return link.status();
  }
  auto open = std::make_shared<PendingOpen>();
  std::optional<std::string> ended;  // a channel of the batch let go meanwhile
  std::vector<Ending> endings;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (uint64_t id : ids.value()) {
      auto it = channels_.find(id);
      if (it == channels_.end()) ended = "the channel was dropped";
      if (it != channels_.end() && ChannelEnded(it->second.record.state)) {
        ended = it->second.record.reason;
      }
      if (ended) break;
    }
    for (uint64_t id : ids.value()) {
      auto it = channels_.find(id);
      if (it == channels_.end()) continue;
      if (ended) {  // nothing was sent: the peer has nothing to hear
        auto ending = EndLocked(it->second, ChannelEvent::kFail, *ended, false, "");
        if (ending) endings.push_back(std::move(*ending));
        continue;
      }
      it->second.record.peer_instance = peer.value().instance_id;
      it->second.open = open;
    }
  }
  if (ended) {
    Deliver(std::move(endings));
    return Status::Unavailable(*ended);
  }
  link.value()->OpenChannel(call.value(), options_.open_timeout,
                            [open](StatusOr<ChannelEndpoints> r) { open->Complete(std::move(r)); });
  return Conclude(ids.value(), peer_key, open->Wait());
}

StatusOr<ChannelEndpoints> Broker::Conclude(const std::vector<uint64_t>& ids,
                                            const std::string& peer_key,
                                            StatusOr<ChannelEndpoints> reply) {
  bool garbage = false;
  if (reply.ok()) {
    Status valid = Status::Ok();
    if (reply.value().size() != ids.size()) {
      valid = Status::InvalidArgument(
          fmt::format("answer has {} endpoints for {} channels", reply.value().size(), ids.size()));
    }
    for (size_t i = 0; valid.ok() && i < ids.size(); ++i) {
      valid = ValidateChannelEndpoint(reply.value()[i]);
      if (!valid.ok()) valid = Status::InvalidArgument(FieldOf(i, ids.size()) + valid.message());
    }
    if (!valid.ok()) reply = Status::InvalidArgument("the peer's " + valid.message());
    garbage = !valid.ok();
  }
  std::vector<Ending> endings;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A channel that ended meanwhile (the peer was lost, the app let go)
    // takes the batch with it.
    std::optional<std::string> ended;
    for (uint64_t id : ids) {
      auto it = channels_.find(id);
      if (it != channels_.end()) it->second.open.reset();
      if (ended) continue;
      if (it == channels_.end()) ended = "the channel was dropped";
      if (it != channels_.end() && ChannelEnded(it->second.record.state)) {
        ended = it->second.record.reason;
      }
    }
    bool answered = reply.ok();  // the peer accepted: it holds the channels
    if (ended) {
      reply = Status::Unavailable(*ended);
    } else if (!reply.ok() && reply.status().code() == StatusCode::kUnavailable) {
      auto it = channels_.find(ids[0]);  // "Socket closed", ...: say whose
      std::string peer = it == channels_.end() ? peer_key : it->second.record.peer;
      reply = Status::Unavailable("peer daemon " + peer + ": " + reply.status().message());
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      auto it = channels_.find(ids[i]);
      if (it == channels_.end()) continue;
      Entry& e = it->second;
      if (ChannelEnded(e.record.state)) {
        if (answered && !e.peer_told) {
          e.peer_told = true;  // it ended here before the peer's answer came
          endings.push_back(LateTell(e, "the initiator gave up: " + e.record.reason));
        }
      } else if (!reply.ok()) {
        bool tell = garbage || answered || PeerMayHoldIt(reply.status().code());
        auto ending = EndLocked(e, ChannelEvent::kFail, reply.status().message(), tell,
                                "the initiator gave up: " + reply.status().message());
        if (ending) endings.push_back(std::move(*ending));
      } else {
        const ChannelEndpoint& theirs = reply.value()[i];
        ApplyLocked(e, ChannelEvent::kOpened);
        e.record.transport = KindOf(theirs);
        e.record.reason = theirs.transport_reason;
      }
    }
  }
  std::string what = Describe(ids);
  if (!reply.ok()) spdlog::warn("{} to {}: {}", what, peer_key, reply.status().ToString());
  Deliver(std::move(endings));
  if (!reply.ok()) return reply.status();
  const ChannelEndpoint& first = reply.value().front();
  spdlog::info("{} to {} established over {}{}", what, peer_key, EndpointTransport(first),
               first.transport_reason.empty() ? "" : ": " + first.transport_reason);
  return reply;
}

StatusOr<ChannelEndpoints> Broker::OnOpenChannel(const OpenChannelCall& call,
                                                 const std::string& peer_ip) {
  RDMAD_RETURN_IF_ERROR(ServiceRegistry::ValidateServiceName(call.service));
  StatusOr<std::vector<uint64_t>> ids = CheckBatch(call.channels);
  if (!ids.ok()) return ids.status();
  IncomingChannelRequest request;
  request.peer = call.initiator_host;
  request.service = call.service;
  request.channels = call.channels;
  request.plan = Plan(peer_ip, call.channels.front().endpoint.tcp ? "the initiator chose TCP" : "");
  request.plan.tcp_bind_host = TcpBindHost(peer_ip);  // if the acceptor falls back to TCP
  request.deadline = options_.accept_deadline;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return Status::Unavailable("rdmad on " + options_.host_name + " is stopping");
    // A channel to this daemon itself shares the initiator's entry.
    std::vector<uint64_t> fresh;
    for (uint64_t id : ids.value()) {
      auto it = channels_.find(id);
      bool self = it != channels_.end() && it->second.record.initiator &&
                  call.initiator_instance == options_.instance_id;
      if (it != channels_.end() && !ChannelEnded(it->second.record.state) && !self) {
        return Status::AlreadyExists(
            fmt::format("channel {:#018x} already exists on {}", id, options_.host_name));
      }
      if (!self) fresh.push_back(id);
    }
    if (!fresh.empty()) {
      RDMAD_RETURN_IF_ERROR(
          limits_.CheckDaemon(RecordsLocked(), call.initiator_host, fresh.size()));
    }
    for (uint64_t id : fresh) {
      Entry& entry = channels_[id];
      entry = Entry{};
      entry.since = Now();
      entry.record.channel_id = id;
      entry.record.peer = call.initiator_host;
      entry.record.service = call.service;
      entry.record.initiator = false;
      entry.phase = ChannelPhase::kOpening;  // an acceptor's channel starts here
      entry.record.state = PublicState(entry.phase);
      entry.record.created = options_.clock->WallNow();
      entry.record.peer_instance = call.initiator_instance;
      SetPath(request.plan, &entry.record);
    }
  }
  // The channels are the listener's from the offer on: its application may
  // hold them as soon as it has accepted.
  auto owned_by = [this, &ids](const Owner& listener) {
    std::lock_guard<std::mutex> lock(mu_);
    for (uint64_t id : ids.value()) {
      auto it = channels_.find(id);
      if (it == channels_.end()) continue;
      ChannelRecord& r = it->second.record;
      if (r.initiator) {  // a channel to this daemon itself
        r.self_acceptor_uid = listener.uid;
      } else {
        r.owner_uid = listener.uid;
        r.owner_pid = listener.pid;
      }
    }
  };
  StatusOr<ChannelEndpoints> answer = services_.Offer(std::move(request), owned_by);
  std::vector<Ending> endings;
  {
    std::lock_guard<std::mutex> lock(mu_);
    endings = AnsweredLocked(ids.value(), &answer);
  }
  Deliver(std::move(endings));
  return answer;
}

std::vector<Broker::Ending> Broker::AnsweredLocked(const std::vector<uint64_t>& ids,
                                                   StatusOr<ChannelEndpoints>* answer) {
  std::vector<Ending> endings;
  // Closed by the initiator meanwhile: the acceptor's holds hear it, and
  // the batch's other channels end with it.
  bool closed = false;
  for (uint64_t id : ids) {
    auto it = channels_.find(id);
    closed = closed || it == channels_.end() || ChannelEnded(it->second.record.state);
  }
  if (closed) *answer = Status::Unavailable("the channel was closed during the handshake");
  for (size_t i = 0; i < ids.size(); ++i) {
    auto it = channels_.find(ids[i]);
    if (it == channels_.end()) continue;
    Entry& e = it->second;
    if (!answer->ok()) {
      auto ending = EndLocked(e, ChannelEvent::kFail, answer->status().message(), false, "");
      if (ending) endings.push_back(std::move(*ending));
    } else {
      const ChannelEndpoint& mine = answer->value()[i];
      ApplyLocked(e, ChannelEvent::kOpened);
      e.record.transport = KindOf(mine);
      e.record.reason = mine.transport_reason;
    }
  }
  return endings;
}

}  // namespace rdmad
