// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/channel_machine.h"

#include <array>

namespace rdmad {
namespace {

using P = ChannelPhase;
using E = ChannelEvent;

// The table. Self-transitions are listed where an event is expected and
// changes nothing (a reattaching channel keeps its deadline across a
// session flap); an event missing here is ignored.
constexpr ChannelTransition kTransitions[] = {
    {P::kPlanned, E::kConnect, P::kOpening},
    {P::kPlanned, E::kPlanExpired, P::kFailed},
    {P::kPlanned, E::kPeerLost, P::kFailed},
    {P::kPlanned, E::kClose, P::kClosed},
    {P::kPlanned, E::kFail, P::kFailed},

    {P::kOpening, E::kOpened, P::kEstablished},
    {P::kOpening, E::kPeerLost, P::kFailed},
    {P::kOpening, E::kClose, P::kClosed},
    {P::kOpening, E::kFail, P::kFailed},

    {P::kEstablished, E::kPeerLost, P::kPeerLost},
    {P::kEstablished, E::kReclaimedByPeer, P::kEstablished},
    {P::kEstablished, E::kHoldExpired, P::kClosed},
    {P::kEstablished, E::kClose, P::kClosed},
    {P::kEstablished, E::kFail, P::kFailed},

    {P::kPeerLost, E::kPeerBack, P::kConfirming},
    {P::kPeerLost, E::kReclaimedByPeer, P::kEstablished},
    {P::kPeerLost, E::kGraceExpired, P::kFailed},
    {P::kPeerLost, E::kClose, P::kClosed},
    {P::kPeerLost, E::kFail, P::kFailed},

    {P::kReattaching, E::kConfirmed, P::kEstablished},
    {P::kReattaching, E::kRefused, P::kFailed},
    {P::kReattaching, E::kGraceExpired, P::kFailed},
    {P::kReattaching, E::kPeerLost, P::kReattaching},
    {P::kReattaching, E::kPeerBack, P::kReattaching},
    {P::kReattaching, E::kReclaimedByPeer, P::kReattaching},
    {P::kReattaching, E::kClose, P::kClosed},
    {P::kReattaching, E::kFail, P::kFailed},

    {P::kConfirming, E::kConfirmed, P::kEstablished},
    {P::kConfirming, E::kGraceExpired, P::kEstablished},  // could not ask: it goes on
    {P::kConfirming, E::kRefused, P::kFailed},
    {P::kConfirming, E::kPeerLost, P::kPeerLost},
    {P::kConfirming, E::kReclaimedByPeer, P::kConfirming},
    {P::kConfirming, E::kClose, P::kClosed},
    {P::kConfirming, E::kFail, P::kFailed},
};

// The table as a dense lookup, built once at compile time.
constexpr auto kNext = [] {
  std::array<std::array<int8_t, kChannelEvents>, kChannelPhases> next{};
  for (auto& row : next) row.fill(-1);
  for (const ChannelTransition& t : kTransitions) {
    next[size_t(t.from)][size_t(t.event)] = int8_t(t.to);
  }
  return next;
}();

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

std::string_view ChannelPhaseName(ChannelPhase phase) {
  switch (phase) {
    case P::kPlanned: return "planned";
    case P::kOpening: return "opening";
    case P::kEstablished: return "established";
    case P::kPeerLost: return "peer_lost";
    case P::kReattaching: return "reattaching";
    case P::kConfirming: return "confirming";
    case P::kClosed: return "closed";
    case P::kFailed: return "failed";
  }
  return "unknown";
}

std::string_view ChannelEventName(ChannelEvent event) {
  switch (event) {
    case E::kConnect: return "connect";
    case E::kOpened: return "opened";
    case E::kPeerLost: return "peer_lost";
    case E::kPeerBack: return "peer_back";
    case E::kReclaimedByPeer: return "reclaimed_by_peer";
    case E::kConfirmed: return "confirmed";
    case E::kRefused: return "refused";
    case E::kGraceExpired: return "grace_expired";
    case E::kPlanExpired: return "plan_expired";
    case E::kHoldExpired: return "hold_expired";
    case E::kClose: return "close";
    case E::kFail: return "fail";
  }
  return "unknown";
}

ChannelState PublicState(ChannelPhase phase) {
  switch (phase) {
    case P::kPlanned: return ChannelState::kPlanned;
    case P::kOpening: return ChannelState::kOpening;
    case P::kEstablished:
    case P::kPeerLost:
    case P::kReattaching:
    case P::kConfirming: return ChannelState::kEstablished;
    case P::kClosed: return ChannelState::kClosed;
    case P::kFailed: return ChannelState::kFailed;
  }
  return ChannelState::kFailed;
}

std::span<const ChannelTransition> ChannelTransitions() { return kTransitions; }

std::optional<ChannelPhase> NextPhase(ChannelPhase from, ChannelEvent event) {
  if (size_t(from) >= kChannelPhases || size_t(event) >= kChannelEvents) return std::nullopt;
  int8_t to = kNext[size_t(from)][size_t(event)];
  if (to < 0) return std::nullopt;
  return ChannelPhase(to);
}

}  // namespace rdmad
