// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The broker's channel state machine: every phase a channel of the table
// can be in, every event that moves it, and the one table of legal
// transitions (kTransitions in channel_machine.cc). The broker changes a
// channel's phase only through NextPhase; an event the table does not list
// for the phase changes nothing (the broker logs it and goes on: a late
// answer, a loss already seen, a close racing another).
//
//   planned --connect--> opening --opened--> established
//   established --peer_lost--> peer_lost --peer_back--> confirming
//   peer_lost --reclaimed_by_peer--> established
//   (adopted) reattaching --confirmed--> established
//   confirming --confirmed | grace_expired--> established
//   any live phase --close--> closed, --fail--> failed
//   planned --plan_expired--> failed; established --hold_expired--> closed
//   peer_lost, reattaching --grace_expired / refused--> failed
//
// What the local API and `rdmactl channels` show is the coarser
// ChannelState (PublicState): peer_lost, reattaching and confirming are
// established channels whose data path goes on in the applications.
//
// Thread safety: pure functions over constant tables.

#ifndef RDMAD_DAEMON_BROKER_CHANNEL_MACHINE_H_
#define RDMAD_DAEMON_BROKER_CHANNEL_MACHINE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace rdmad {

// What `rdmactl channels` shows.
enum class ChannelState { kPlanned, kOpening, kEstablished, kFailed, kClosed };
std::string_view ChannelStateName(ChannelState state);
inline bool ChannelEnded(ChannelState s) {
  return s == ChannelState::kFailed || s == ChannelState::kClosed;
}

enum class ChannelPhase : uint8_t {
  kPlanned,      // PlanChannel gave an id; the application has not Connected
  kOpening,      // OpenChannel sent to the peer, or offered to the listener
  kEstablished,  // both endpoints known; the applications hold the data path
  kPeerLost,     // established; the peer daemon is lost, waited for up to peer_grace
  kReattaching,  // adopted from its lease after this daemon restarted; the peer has not confirmed
  kConfirming,   // the lost peer is back (same instance); asked whether it still has the channel
  kClosed,
  kFailed,
};
inline constexpr int kChannelPhases = 8;

enum class ChannelEvent : uint8_t {
  kConnect,          // the application's Connect sends OpenChannel
  kOpened,           // the peer or the listener answered with an endpoint
  kPeerLost,         // the session with the peer daemon ended
  kPeerBack,         // the same peer instance is up again
  kReclaimedByPeer,  // the peer (or its successor) took the channel back: ReclaimChannel
  kConfirmed,        // the peer answered our ReclaimChannel: it still has the channel
  kRefused,          // the peer answered it no longer has the channel
  kGraceExpired,     // peer_grace passed in peer_lost, reattaching or confirming
  kPlanExpired,      // plan_lifetime passed without Connect
  kHoldExpired,      // hold_grace passed without a HoldChannel
  kClose,            // the application, the peer or the daemon's shutdown closed it
  kFail,             // the handshake, the path or the peer failed it
};
inline constexpr int kChannelEvents = 12;

std::string_view ChannelPhaseName(ChannelPhase phase);
std::string_view ChannelEventName(ChannelEvent event);
ChannelState PublicState(ChannelPhase phase);
inline bool PhaseEnded(ChannelPhase p) {
  return p == ChannelPhase::kClosed || p == ChannelPhase::kFailed;
}

struct ChannelTransition {
  ChannelPhase from;
  ChannelEvent event;
  ChannelPhase to;
};
// Every legal transition, once.
std::span<const ChannelTransition> ChannelTransitions();
// Where event moves a channel in phase from; nullopt: not a transition.
std::optional<ChannelPhase> NextPhase(ChannelPhase from, ChannelEvent event);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_BROKER_CHANNEL_MACHINE_H_
