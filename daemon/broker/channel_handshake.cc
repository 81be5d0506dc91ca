// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/channel_handshake.h"

#include <spdlog/spdlog.h>

#include <optional>
#include <set>
#include <span>

#include "common/secure_random.h"

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

// Why a channel of ids can no longer go on (dropped from the table, or
// ended), for the first such one; nothing when all can. The table locked.
std::optional<std::string> EndedLocked(const ChannelTable& table,
                                       const std::vector<uint64_t>& ids) {
  for (uint64_t id : ids) {
    const ChannelTable::Entry* e = table.FindLocked(id);
    if (e == nullptr) return "the channel was dropped";
    if (ChannelEnded(e->record.state)) return e->record.reason;
  }
  return std::nullopt;
}

std::string Describe(const std::vector<uint64_t>& ids) {
  if (ids.size() == 1) return fmt::format("channel {:#018x}", ids[0]);
  return fmt::format("{} channels ({:#018x} ...)", ids.size(), ids[0]);
}

// Unguessable: a channel id names the channel in leases and peer calls.
uint64_t RandomChannelId() {
  uint64_t id = 0;
  while (id == 0) id = SecureRandomU64();
  return id;
}

bool IsLoopback(const std::string& ip) { return ip == "::1" || ip.rfind("127.", 0) == 0; }

// The local RDMA path of plan, if it is one, into record.
void SetPath(const ChannelPlan& plan, ChannelRecord* record) {
  if (!plan.path) return;
  record->device = plan.path->device;
  record->port = plan.path->port;
  record->gid = plan.path->gid;
}

}  // namespace

// The TCP acceptor listens where the initiator can reach it: the loopback
// address for a loopback peer, else the kernel's source address for
// reaching the peer (the address it routes from), else the wildcard.
std::string ChannelHandshake::TcpBindHost(const std::string& peer_ip) const {
  if (IsLoopback(peer_ip)) return peer_ip;
  std::optional<std::string> source = options_.source_address->SourceAddressFor(peer_ip);
  if (source && !source->empty()) {
    spdlog::debug("TCP for {}: listening on {}, the kernel's source address for it", peer_ip,
                  *source);
    return *source;
  }
  std::string wildcard = peer_ip.find(':') != std::string::npos ? "::" : "0.0.0.0";
  spdlog::warn("TCP for {}: no source address for it (no route?); listening on the wildcard {}",
               peer_ip, wildcard);
  return wildcard;
}

ChannelPlan ChannelHandshake::Plan(const std::string& peer_ip, const std::string& tcp_reason,
                                   pid_t pid) const {
  ChannelPlan plan;
  if (!tcp_reason.empty() || options_.force_tcp) {
    plan.tcp_reason = tcp_reason.empty() ? "the config forces TCP" : tcp_reason;
    return plan;
  }
  StatusOr<PathDecision> path = options_.network->ResolvePath(PathRequest{peer_ip, 0});
  if (!path.ok()) {
    plan.tcp_reason = "no RDMA path to " + peer_ip + ": " + path.status().message();
    return plan;
  }
  plan.path = std::move(path).value();
  plan.rails = options_.network->RailsFor(*plan.path, pid);
  for (const RailPathDecision& rail : plan.rails.further) {
    spdlog::info("rails to {}: also {}", peer_ip, rail.reason);
  }
  if (!plan.rails.first_striped) spdlog::info("rails to {}: {}", peer_ip, plan.rails.first_reason);
  return plan;
}

StatusOr<PlannedChannel> ChannelHandshake::PlanChannel(const Caller& caller,
                                                       const std::string& peer,
                                                       const std::string& service, bool force_tcp,
                                                       size_t count) {
  RDMAD_RETURN_IF_ERROR(ServiceRegistry::ValidateServiceName(service));
  if (count < 1 || count > kMaxChannelBatch) {
    return Status::InvalidArgument(
        fmt::format("count: 1..{} channels per batch, not {}", kMaxChannelBatch, count));
  }
  StatusOr<BrokerPeer> found = options_.network->FindPeer(
      peer, caller.self ? std::nullopt : std::optional<uid_t>(caller.uid));
  if (!found.ok()) return found.status();
  PlannedChannel planned;
  const uint64_t first = RandomChannelId();
  planned.peer_address = HostOfAddress(found.value().address);
  planned.plan =
      Plan(planned.peer_address, force_tcp ? "TCP requested by the application" : "", caller.pid);
  std::string what = count == 1 ? fmt::format("channel {:#018x}", first)
                                : fmt::format("{} channels ({:#018x} ...)", count, first);
  if (planned.plan.path) {
    spdlog::info("{} to {} service {}: RDMA planned on {} port {} GID index {}", what, peer,
                 service, planned.plan.path->device, planned.plan.path->port,
                 planned.plan.path->gid_index);
  } else {
    spdlog::info("{} to {} service {}: TCP planned: {}", what, peer, service,
                 planned.plan.tcp_reason);
  }
  auto lock = table_.Lock();
  RDMAD_RETURN_IF_ERROR(table_.CheckRunningLocked());
  const ChannelLimits& limits = table_.LimitsLocked();
  RDMAD_RETURN_IF_ERROR(limits.CheckDaemon(table_.RecordsLocked(), found.value().name, count));
  RDMAD_RETURN_IF_ERROR(
      limits.CheckOwner(table_.RecordsLocked(), caller, /*planning=*/true, count));
  RDMAD_RETURN_IF_ERROR(
      limits.CheckOwner(table_.RecordsLocked(), caller, /*planning=*/false, count));
  for (size_t i = 0; i < count; ++i) {
    uint64_t id = first;
    if (i > 0) {
      do id = RandomChannelId();
      while (table_.FindLocked(id) != nullptr);
    }
    planned.channel_ids.push_back(id);
    Entry& entry = table_.AddLocked(id, ChannelPhase::kPlanned);
    entry.peer_key = peer;
    entry.record.peer = found.value().name;
    entry.record.service = service;
    entry.record.initiator = true;
    entry.record.created = table_.WallNow();
    entry.record.owner_uid = caller.uid;
    entry.record.owner_pid = caller.pid;
    SetPath(planned.plan, &entry.record);
  }
  return planned;
}

void ChannelHandshake::Fail(uint64_t channel_id, const std::string& reason) {
  std::vector<ChannelEnding> endings;
  {
    auto lock = table_.Lock();
    Entry* e = table_.FindLocked(channel_id);
    if (e == nullptr) return;
    auto ending = table_.EndLocked(*e, ChannelEvent::kFail, reason, false, "");
    if (ending) endings.push_back(std::move(*ending));
  }
  teller_.Deliver(std::move(endings));
}

StatusOr<OpenChannelCall> ChannelHandshake::OpenLocked(const Caller& caller,
                                                       const std::vector<ChannelOpening>& channels,
                                                       std::string* peer_key) {
  std::vector<Entry*> entries;
  for (size_t i = 0; i < channels.size(); ++i) {
    uint64_t id = channels[i].channel_id;
    Entry* e = table_.FindOwnedLocked(caller, id, /*admin=*/false);
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
  for (Entry* e : entries) table_.ApplyLocked(*e, ChannelEvent::kConnect);
  return call;
}

StatusOr<ChannelEndpoints> ChannelHandshake::Connect(const Caller& caller,
                                                     const std::vector<ChannelOpening>& channels) {
  StatusOr<std::vector<uint64_t>> ids = CheckBatch(channels);
  if (!ids.ok()) return ids.status();
  std::string peer_key;
  StatusOr<OpenChannelCall> call = Status::Internal("not opened");
  {
    auto lock = table_.Lock();
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
  std::vector<ChannelEnding> endings;
  {
    auto lock = table_.Lock();
    ended = EndedLocked(table_, ids.value());
    for (uint64_t id : ids.value()) {
      Entry* e = table_.FindLocked(id);
      if (e == nullptr) continue;
      if (ended) {  // nothing was sent: the peer has nothing to hear
        auto ending = table_.EndLocked(*e, ChannelEvent::kFail, *ended, false, "");
        if (ending) endings.push_back(std::move(*ending));
        continue;
      }
      e->record.peer_instance = peer.value().instance_id;
      e->open = open;
    }
  }
  if (ended) {
    teller_.Deliver(std::move(endings));
    return Status::Unavailable(*ended);
  }
  link.value()->OpenChannel(call.value(), options_.open_timeout,
                            [open](StatusOr<ChannelEndpoints> r) { open->Complete(std::move(r)); });
  return Conclude(ids.value(), channels, peer_key, open->Wait());
}

StatusOr<ChannelEndpoints> ChannelHandshake::Conclude(const std::vector<uint64_t>& ids,
                                                      const std::vector<ChannelOpening>& mine,
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
  std::vector<ChannelEnding> endings;
  {
    auto lock = table_.Lock();
    // A channel that ended meanwhile (the peer was lost, the app let go)
    // takes the batch with it.
    std::optional<std::string> ended = EndedLocked(table_, ids);
    for (uint64_t id : ids) {
      if (Entry* e = table_.FindLocked(id)) e->open.reset();
    }
    bool answered = reply.ok();  // the peer accepted: it holds the channels
    if (ended) {
      reply = Status::Unavailable(*ended);
    } else if (!reply.ok() && reply.status().code() == StatusCode::kUnavailable) {
      const Entry* first = table_.FindLocked(ids[0]);  // "Socket closed", ...: say whose
      std::string peer = first == nullptr ? peer_key : first->record.peer;
      reply = Status::Unavailable("peer daemon " + peer + ": " + reply.status().message());
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      Entry* found = table_.FindLocked(ids[i]);
      if (found == nullptr) continue;
      Entry& e = *found;
      if (ChannelEnded(e.record.state)) {
        if (answered && !e.peer_told) {
          e.peer_told = true;  // it ended here before the peer's answer came
          endings.push_back(ChannelTable::LateTell(e, "the initiator gave up: " + e.record.reason));
        }
      } else if (!reply.ok()) {
        bool tell = garbage || answered || PeerMayHoldIt(reply.status().code());
        auto ending = table_.EndLocked(e, ChannelEvent::kFail, reply.status().message(), tell,
                                       "the initiator gave up: " + reply.status().message());
        if (ending) endings.push_back(std::move(*ending));
      } else {
        const ChannelEndpoint& theirs = reply.value()[i];
        table_.ApplyLocked(e, ChannelEvent::kOpened);
        e.record.transport = KindOf(theirs);
        e.record.reason = theirs.transport_reason;
        e.record.rails = RailsOf(mine[i].endpoint, theirs, /*initiator_side=*/true);
      }
    }
  }
  std::string what = Describe(ids);
  if (!reply.ok()) spdlog::warn("{} to {}: {}", what, peer_key, reply.status().ToString());
  teller_.Deliver(std::move(endings));
  if (!reply.ok()) return reply.status();
  const ChannelEndpoint& first = reply.value().front();
  spdlog::info("{} to {} established over {}{}", what, peer_key, EndpointTransport(first),
               first.transport_reason.empty() ? "" : ": " + first.transport_reason);
  return reply;
}

StatusOr<ChannelEndpoints> ChannelHandshake::OnOpenChannel(const OpenChannelCall& call,
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
    auto lock = table_.Lock();
    RDMAD_RETURN_IF_ERROR(table_.CheckRunningLocked());
    // A channel to this daemon itself shares the initiator's entry.
    std::vector<uint64_t> fresh;
    for (uint64_t id : ids.value()) {
      const Entry* e = table_.FindLocked(id);
      bool self =
          e != nullptr && e->record.initiator && call.initiator_instance == options_.instance_id;
      if (e != nullptr && !ChannelEnded(e->record.state) && !self) {
        return Status::AlreadyExists(
            fmt::format("channel {:#018x} already exists on {}", id, options_.host_name));
      }
      if (!self) fresh.push_back(id);
    }
    if (!fresh.empty()) {
      RDMAD_RETURN_IF_ERROR(table_.LimitsLocked().CheckDaemon(table_.RecordsLocked(),
                                                              call.initiator_host, fresh.size()));
    }
    for (uint64_t id : fresh) {
      // An acceptor's channel starts in opening.
      Entry& entry = table_.AddLocked(id, ChannelPhase::kOpening);
      entry.record.peer = call.initiator_host;
      entry.record.service = call.service;
      entry.record.initiator = false;
      entry.record.created = table_.WallNow();
      entry.record.peer_instance = call.initiator_instance;
      SetPath(request.plan, &entry.record);
    }
  }
  // The channels are the listener's from the offer on: its application may
  // hold them as soon as it has accepted.
  auto owned_by = [this, &ids](const Owner& listener) {
    auto lock = table_.Lock();
    for (uint64_t id : ids.value()) {
      Entry* e = table_.FindLocked(id);
      if (e == nullptr) continue;
      ChannelRecord& r = e->record;
      if (r.initiator) {  // a channel to this daemon itself
        r.self_acceptor_uid = listener.uid;
      } else {
        r.owner_uid = listener.uid;
        r.owner_pid = listener.pid;
      }
    }
  };
  StatusOr<ChannelEndpoints> answer = services_.Offer(std::move(request), owned_by);
  std::vector<ChannelEnding> endings;
  {
    auto lock = table_.Lock();
    endings = AnsweredLocked(ids.value(), call.channels, &answer);
  }
  teller_.Deliver(std::move(endings));
  return answer;
}

std::vector<ChannelEnding> ChannelHandshake::AnsweredLocked(
    const std::vector<uint64_t>& ids, const std::vector<ChannelOpening>& initiators,
    StatusOr<ChannelEndpoints>* answer) {
  std::vector<ChannelEnding> endings;
  // Closed by the initiator meanwhile: the acceptor's holds hear it, and
  // the batch's other channels end with it.
  if (EndedLocked(table_, ids)) {
    *answer = Status::Unavailable("the channel was closed during the handshake");
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    Entry* found = table_.FindLocked(ids[i]);
    if (found == nullptr) continue;
    Entry& e = *found;
    if (!answer->ok()) {
      auto ending = table_.EndLocked(e, ChannelEvent::kFail, answer->status().message(), false, "");
      if (ending) endings.push_back(std::move(*ending));
    } else {
      const ChannelEndpoint& mine = answer->value()[i];
      table_.ApplyLocked(e, ChannelEvent::kOpened);
      e.record.transport = KindOf(mine);
      e.record.reason = mine.transport_reason;
      if (!e.record.initiator && i < initiators.size()) {  // not a channel to itself
        e.record.rails = RailsOf(initiators[i].endpoint, mine, /*initiator_side=*/false);
      }
    }
  }
  return endings;
}

}  // namespace rdmad
