// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/channel_table.h"

#include <spdlog/spdlog.h>

#include <utility>

namespace rdmad {

ChannelTable::Entry* ChannelTable::FindLocked(uint64_t channel_id) {
  auto it = entries_.find(channel_id);
  return it == entries_.end() ? nullptr : &it->second;
}

const ChannelTable::Entry* ChannelTable::FindLocked(uint64_t channel_id) const {
  auto it = entries_.find(channel_id);
  return it == entries_.end() ? nullptr : &it->second;
}

ChannelTable::Entry* ChannelTable::FindOwnedLocked(const Caller& caller, uint64_t channel_id,
                                                   bool admin) {
  Entry* e = FindLocked(channel_id);
  if (e == nullptr) return nullptr;
  bool owns = caller.Is(e->record.owner_uid) || caller.Is(e->record.self_acceptor_uid);
  return owns || (admin && caller.admin) ? e : nullptr;
}

ChannelTable::Entry& ChannelTable::AddLocked(uint64_t channel_id, ChannelPhase phase) {
  Entry& e = entries_[channel_id];
  ledger_.Retire(e.record);  // an ended channel replaced (nothing for a new entry)
  e = Entry{};
  e.phase = phase;
  e.since = Now();
  e.record.channel_id = channel_id;
  e.record.state = PublicState(phase);
  return e;
}

void ChannelTable::EraseLocked(uint64_t channel_id) {
  auto it = entries_.find(channel_id);
  if (it == entries_.end()) return;
  ledger_.Retire(it->second.record);
  entries_.erase(it);
}

bool ChannelTable::ApplyLocked(Entry& e, ChannelEvent event) {
  std::optional<ChannelPhase> next = NextPhase(e.phase, event);
  // Each channel passes here several times while it opens: its description
  // is built only when the debug line is written.
  const bool debug = spdlog::should_log(spdlog::level::debug);
  if (!next) {
    if (debug) {
      spdlog::debug("{}: {} changes nothing in phase {}", DescribeChannel(e.record),
                    ChannelEventName(event), ChannelPhaseName(e.phase));
    }
    return false;
  }
  if (*next != e.phase) {
    if (debug) {
      spdlog::debug("{}: {} -> {} ({})", DescribeChannel(e.record), ChannelPhaseName(e.phase),
                    ChannelPhaseName(*next), ChannelEventName(event));
    }
    e.phase = *next;
    e.since = Now();
  }
  e.record.state = PublicState(e.phase);
  return true;
}

void ChannelTable::ResumeLocked(Entry& e, ChannelEvent event) {
  if (ApplyLocked(e, event)) e.record.reason = e.transport_reason;
}

std::optional<ChannelEnding> ChannelTable::EndLocked(Entry& e, ChannelEvent event,
                                                     const std::string& reason, bool tell_peer,
                                                     const std::string& peer_reason) {
  std::optional<ChannelPhase> next = NextPhase(e.phase, event);
  if (!next || !PhaseEnded(*next)) return std::nullopt;
  ChannelEnding ending;
  ending.was_established = e.record.state == ChannelState::kEstablished;
  bool peer_knows_it = e.phase != ChannelPhase::kPlanned;  // OpenChannel was sent
  ApplyLocked(e, event);
  e.record.reason = reason;
  for (auto& [token, holder] : e.holders) ending.holders.push_back(std::move(holder));
  e.holders.clear();
  ending.open = std::exchange(e.open, nullptr);
  ending.tell_peer = tell_peer && peer_knows_it && !e.peer_told;
  if (ending.tell_peer) e.peer_told = e.telling = true;
  ending.peer_reason = peer_reason;
  ending.record = e.record;
  ending.peer_key = e.peer_key;
  return ending;
}

std::optional<ChannelEnding> ChannelTable::LetGoLocked(Entry& e, const std::string& why) {
  if (!PhaseEnded(e.phase)) return EndLocked(e, ChannelEvent::kClose, why, true, why);
  // A channel that already failed here (say the session to the peer
  // flapped) is told to the peer now, which may still hold its side.
  if (e.peer_told || e.phase != ChannelPhase::kFailed || !e.held) return std::nullopt;
  e.peer_told = true;
  return LateTell(e, why);
}

ChannelEnding ChannelTable::LateTell(Entry& e, const std::string& peer_reason) {
  e.telling = true;
  ChannelEnding ending;
  ending.record = e.record;
  ending.peer_key = e.peer_key;
  ending.tell_peer = true;
  ending.peer_reason = peer_reason;
  ending.late = true;
  return ending;
}

void ChannelTable::ToldPeer(const std::vector<uint64_t>& channel_ids) {
  std::lock_guard lock(mu_);
  for (uint64_t id : channel_ids) {
    auto it = entries_.find(id);
    if (it != entries_.end()) it->second.telling = false;
  }
}

Status ChannelTable::CheckRunningLocked() const {
  if (stopping_) return Status::Unavailable("rdmad on " + host_name_ + " is stopping");
  return Status::Ok();
}

}  // namespace rdmad
