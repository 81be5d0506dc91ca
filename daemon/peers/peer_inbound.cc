// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/peer_inbound.h"

#include <strings.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <vector>

#include "spdlog/spdlog.h"

namespace rdmad {
namespace {

constexpr size_t kMaxGreeted = 4096;
constexpr std::chrono::seconds kMaxTickerSleep{1};

int64_t UnixMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

BoundedStream<PeerEvent>::Options InboundStreamOptions() {
  BoundedStream<PeerEvent>::Options o;
  o.max_queued = PeerInbound::kMaxQueued;
  o.overflow = Status::ResourceExhausted("peer session closed: the peer does not read it");
  o.write_failed = Status::Unavailable("peer session write failed; the peer is gone");
  return o;
}

}  // namespace

InboundStream::InboundStream(PeerInbound* inbound, PeerStreamWriter* writer)
    : inbound_(inbound), stream_(writer, InboundStreamOptions()) {}

InboundStream::~InboundStream() { Detach(); }

void InboundStream::Start(const SessionOpen& open, const std::string& from,
                          const PeerIdentity& identity) {
  auto self = shared_from_this();  // the reactor may finish while this runs
  open_ = open;
  from_ = from;
  Status status = ValidateSessionOpen(open);
  if (status.ok()) status = identity.Covers(open.host_name);
  if (status.ok()) status = inbound_->CheckOwn(identity, open.instance_id, "Session", from);
  if (status.ok()) {
    inbound_->ClaimOwn();
    status = inbound_->instances_.Claim(open.instance_id, open.host_name);
  }
  if (status.ok()) {
    status = CheckProtocol(inbound_->LocalHello().protocol, open.protocol,
                           open.host_name + " (" + from + ")");
  }
  uint64_t id = 0;
  if (status.ok()) {
    id = inbound_->Register(shared_from_this());
    if (id == 0) status = Status::Unavailable("rdmad is stopping");
  }
  if (!status.ok()) {
    spdlog::warn("refusing a peer session from {}: {}", from, status.message());
    stream_.Abort(status);
    return;
  }
  spdlog::info("peer {} ({}) opened a session (heartbeat every {} ms)", open.host_name, from,
               open.heartbeat_interval_ms);
  {
    std::lock_guard lock(mu_);
    id_ = id;
    next_heartbeat_ = inbound_->Now();
  }
  Heartbeat(inbound_->Now());
}

void InboundStream::Detach() {
  uint64_t id;
  {
    std::lock_guard lock(mu_);
    id = std::exchange(id_, 0);
  }
  if (id != 0) inbound_->Unregister(id, open_);
}

bool InboundStream::Enqueue(PeerEvent event) {
  return stream_.Push(std::move(event), [this](PeerEvent& e) { e.sequence = ++sequence_; }) ==
         BoundedStream<PeerEvent>::Pushed::kQueued;
}

SteadyTime InboundStream::Heartbeat(SteadyTime now) {
  {
    std::lock_guard lock(mu_);
    if (stream_.ending()) return SteadyTime::max();
    if (now < next_heartbeat_) return next_heartbeat_;
    next_heartbeat_ = now + std::chrono::milliseconds(open_.heartbeat_interval_ms);
    // A write still pending: the peer is slow or gone; keepalive decides.
    if (!stream_.idle()) return next_heartbeat_;
  }
  PeerEvent beat;
  beat.kind = PeerEvent::Kind::kHeartbeat;
  beat.unix_time_ms = UnixMillis();
  Enqueue(std::move(beat));
  std::lock_guard lock(mu_);
  return next_heartbeat_;
}

void InboundStream::Close(const Status& status) { stream_.Abort(status); }

void InboundStream::OnWriteDone(bool ok) { stream_.OnWriteDone(ok); }

void InboundStream::Cancel() {
  Detach();
  spdlog::debug("peer session from {} ({}) cancelled", open_.host_name, from_);
  Close(Status::Cancelled("cancelled by the peer"));
}

PeerInbound::PeerInbound(const LocalHelloSource& hello, const Clock& clock)
    : hello_(hello), clock_(clock) {}

PeerInbound::~PeerInbound() { Close(); }

void PeerInbound::Start() {
  ticker_ = std::thread([this] {
    std::unique_lock lock(mu_);
    while (!closed_) {
      uint64_t seen = registrations_;
      lock.unlock();
      SteadyTime next = std::min(Tick(), std::chrono::steady_clock::now() + kMaxTickerSleep);
      lock.lock();
      cv_.wait_until(lock, next, [&] { return closed_ || registrations_ != seen; });
    }
  });
}

void PeerInbound::Close() {
  std::vector<std::shared_ptr<InboundStream>> streams;
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closed_ = true;
    for (auto& [id, entry] : streams_) {
      if (auto s = entry.stream.lock()) streams.push_back(s);
    }
    streams_.clear();
  }
  cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  for (auto& s : streams) s->Close(Status::Unavailable("rdmad is stopping"));
  if (!streams.empty()) spdlog::info("peer sessions served: {} closed", streams.size());
}

StatusOr<PeerHello> PeerInbound::Hello(const PeerHello& remote, const std::string& from,
                                       const PeerIdentity& identity) {
  RDMAD_RETURN_IF_ERROR(ValidateHello(remote, "self"));
  Status covered = identity.Covers(remote.host_name);
  if (!covered.ok()) return Refused("Hello", from, covered);
  RDMAD_RETURN_IF_ERROR(CheckOwn(identity, remote.instance_id, "Hello", from));
  ClaimOwn();
  Status claimed = instances_.Claim(remote.instance_id, remote.host_name);
  if (!claimed.ok()) return Refused("Hello", from, claimed);
  PeerHello local = LocalHello();
  bool first;
  PeerAliveListener* alive;
  {
    std::lock_guard lock(mu_);
    if (greeted_.size() >= kMaxGreeted) greeted_.clear();
    first = greeted_.insert(remote.instance_id).second;
    alive = alive_;
  }
  Status version =
      CheckProtocol(local.protocol, remote.protocol, remote.host_name + " (" + from + ")");
  if (!first) {
    spdlog::trace("Hello from {} ({})", remote.host_name, from);
  } else if (!version.ok()) {
    spdlog::warn("{}; answering its Hello so it knows, refusing its session", version.message());
  } else {
    spdlog::info("Hello from peer {} ({}): rdmad {}, protocol {}, instance {}", remote.host_name,
                 from, remote.daemon_version, FormatProtocol(remote.protocol), remote.instance_id);
  }
  if (version.ok() && alive != nullptr) alive->OnPeerAlive(remote, PeerIpOf(from));
  return local;
}

std::shared_ptr<InboundStream> PeerInbound::NewStream(PeerStreamWriter* writer) {
  return std::make_shared<InboundStream>(this, writer);
}

uint64_t PeerInbound::Register(const std::shared_ptr<InboundStream>& stream) {
  {
    std::lock_guard lock(mu_);
    if (closed_) return 0;
    uint64_t id = next_id_++;
    streams_[id] = StreamEntry{stream, stream->instance_id()};
    ++registrations_;
    cv_.notify_all();
    return id;
  }
}

void PeerInbound::Unregister(uint64_t id, const SessionOpen& open) {
  InboundChannels* broker = nullptr;
  {
    std::lock_guard lock(mu_);
    if (streams_.erase(id) == 0) return;  // Close() took it: stopping
    // Another stream of the instance, even one ending right now, still
    // holds the session: the last one to unregister reports the loss, once.
    for (auto& [other, entry] : streams_) {
      if (entry.instance_id == open.instance_id) return;
    }
    broker = channels_;
  }
  spdlog::info("peer {} (instance {}): its session to this daemon ended", open.host_name,
               open.instance_id);
  if (broker) broker->OnSessionStreamLost(open.instance_id, open.host_name);
}

size_t PeerInbound::stream_count() const {
  std::lock_guard lock(mu_);
  return streams_.size();
}

Status PeerInbound::Send(const std::string& instance_id, const PeerEvent& event) {
  std::vector<std::shared_ptr<InboundStream>> targets;
  {
    std::lock_guard lock(mu_);
    for (auto& [id, entry] : streams_) {
      if (entry.instance_id != instance_id) continue;
      if (auto s = entry.stream.lock()) targets.push_back(s);
    }
  }
  if (targets.empty()) {
    return Status::NotFound("no open session from rdmad instance " + instance_id);
  }
  bool sent = false;
  for (auto& s : targets) sent = s->Enqueue(event) || sent;
  if (!sent) {
    return Status::ResourceExhausted("the session stream of rdmad instance " + instance_id +
                                     " is full: the peer does not read it");
  }
  return Status::Ok();
}

SteadyTime PeerInbound::Tick() {
  std::vector<std::shared_ptr<InboundStream>> streams;
  {
    std::lock_guard lock(mu_);
    for (auto& [id, entry] : streams_) {
      if (auto s = entry.stream.lock()) streams.push_back(s);
    }
  }
  SteadyTime now = Now();
  SteadyTime next = SteadyTime::max();
  for (auto& s : streams) next = std::min(next, s->Heartbeat(now));
  return next;
}

void PeerInbound::SetChannels(InboundChannels* channels) {
  std::lock_guard lock(mu_);
  channels_ = channels;
}

StatusOr<InboundChannels*> PeerInbound::Broker() {
  std::lock_guard lock(mu_);
  if (closed_) return Status::Unavailable("the daemon is stopping");
  if (channels_ == nullptr) return Status::Unavailable("this daemon has no channel broker");
  return channels_;
}

StatusOr<ChannelEndpoints> PeerInbound::OpenChannel(const OpenChannelCall& call,
                                                    const std::string& from,
                                                    const PeerIdentity& identity) {
  Status covered = identity.Covers(call.initiator_host);
  if (!covered.ok()) return Refused("OpenChannel", from, covered);
  RDMAD_RETURN_IF_ERROR(CheckOwn(identity, call.initiator_instance, "OpenChannel", from));
  auto broker = Broker();
  if (!broker.ok()) return broker.status();
  return (*broker)->OnOpenChannel(call, PeerIpOf(from));
}

Status PeerInbound::CloseChannel(const CloseChannelCall& call, const PeerIdentity& identity) {
  RDMAD_RETURN_IF_ERROR(CheckInstance(identity, call.initiator_instance, "CloseChannel").status());
  auto broker = Broker();
  if (!broker.ok()) return broker.status();
  return (*broker)->OnCloseChannel(call);
}

Status PeerInbound::ReclaimChannel(const ReclaimChannelCall& call, const PeerIdentity& identity) {
  auto node = CheckInstance(identity, call.instance, "ReclaimChannel");
  if (!node.ok()) return node.status();
  ReclaimChannelCall checked = call;
  checked.caller_node = *node;
  if (auto previous = instances_.NodeOf(call.previous_instance)) {
    if (strcasecmp(previous->c_str(), node->c_str()) != 0) {
      return Refused(
          "ReclaimChannel", "instance " + call.instance.substr(0, 32),
          Status::PermissionDenied("rdmad instance " + call.previous_instance.substr(0, 32) +
                                   " was node " + *previous + "'s, not " + *node + "'s"));
    }
    checked.previous_node_known = true;
  }
  auto broker = Broker();
  if (!broker.ok()) return broker.status();
  return (*broker)->OnReclaimChannel(checked);
}

Status PeerInbound::CheckOwn(const PeerIdentity& identity, const std::string& instance_id,
                             const std::string& what, const std::string& from) {
  if (identity.this_process || instance_id != own_instance()) return Status::Ok();
  return Refused(what, from,
                 Status::PermissionDenied("rdmad instance " + instance_id.substr(0, 32) +
                                          " is this daemon's own: only this daemon's process "
                                          "speaks for it"));
}

void PeerInbound::ClaimOwn() {
  std::call_once(own_claimed_, [this] {
    PeerHello own = LocalHello();
    Status claimed = instances_.Claim(own.instance_id, own.host_name);
    if (!claimed.ok()) spdlog::warn("this daemon's own instance: {}", claimed.message());
  });
}

StatusOr<std::string> PeerInbound::CheckInstance(const PeerIdentity& identity,
                                                 const std::string& instance_id,
                                                 const std::string& what) {
  RDMAD_RETURN_IF_ERROR(CheckOwn(identity, instance_id, what, "instance " + instance_id));
  std::optional<std::string> node = instances_.NodeOf(instance_id);
  Status covered = !node ? Status::PermissionDenied("rdmad instance " + instance_id.substr(0, 32) +
                                                    " never said Hello to this daemon")
                         : identity.Covers(*node);
  if (!covered.ok()) return Refused(what, "instance " + instance_id.substr(0, 32), covered);
  return *node;
}

// Logged on the 1st, 2nd, 4th, 8th ... refusal: a peer cannot flood the log.
Status PeerInbound::Refused(const std::string& what, const std::string& from, Status refusal) {
  static std::atomic<uint64_t> refused{0};
  uint64_t n = ++refused;
  if (std::has_single_bit(n)) {
    spdlog::warn("peer {} from {} refused: {} ({} refused so far)", what, from, refusal.message(),
                 n);
  }
  return refusal;
}

void PeerInbound::SetAliveListener(PeerAliveListener* listener) {
  std::lock_guard lock(mu_);
  alive_ = listener;
}

std::string PeerIpOf(const std::string& from) {
  std::string s = from;
  for (const char* prefix : {"ipv4:", "ipv6:"}) {
    if (s.rfind(prefix, 0) == 0) s = s.substr(5);
  }
  for (auto [enc, dec] : {std::pair{"%5B", "["}, std::pair{"%5D", "]"}}) {
    for (size_t at; (at = s.find(enc)) != std::string::npos;) s.replace(at, 3, dec);
  }
  if (!s.empty() && s[0] == '[') {
    size_t end = s.find(']');
    return end == std::string::npos ? s : s.substr(1, end - 1);
  }
  size_t colon = s.rfind(':');
  return colon == std::string::npos ? s : s.substr(0, colon);
}

}  // namespace rdmad
