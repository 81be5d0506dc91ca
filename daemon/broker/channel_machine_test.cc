// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The channel state machine's table, walked: every legal transition, every
// illegal one, and the paths the broker's scenarios take.

#include "daemon/broker/channel_machine.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rdmad {
namespace {

using P = ChannelPhase;
using E = ChannelEvent;

std::vector<P> AllPhases() {
  std::vector<P> all;
  for (int i = 0; i < kChannelPhases; ++i) all.push_back(P(i));
  return all;
}

std::vector<E> AllEvents() {
  std::vector<E> all;
  for (int i = 0; i < kChannelEvents; ++i) all.push_back(E(i));
  return all;
}

TEST(ChannelMachineTest, EveryPhaseAndEventHasItsOwnName) {
  std::set<std::string_view> phases, events;
  for (P p : AllPhases()) EXPECT_TRUE(phases.insert(ChannelPhaseName(p)).second) << int(p);
  for (E e : AllEvents()) EXPECT_TRUE(events.insert(ChannelEventName(e)).second) << int(e);
  EXPECT_FALSE(phases.count("unknown"));
  EXPECT_FALSE(events.count("unknown"));
}

TEST(ChannelMachineTest, EveryPairIsTheTablesAnswerAndNothingElse) {
  std::map<std::pair<P, E>, P> table;
  for (const ChannelTransition& t : ChannelTransitions()) {
    EXPECT_TRUE(table.emplace(std::make_pair(t.from, t.event), t.to).second)
        << "listed twice: " << ChannelPhaseName(t.from) << " " << ChannelEventName(t.event);
  }
  size_t legal = 0;
  for (P p : AllPhases()) {
    for (E e : AllEvents()) {
      SCOPED_TRACE(std::string(ChannelPhaseName(p)) + " + " + std::string(ChannelEventName(e)));
      auto it = table.find({p, e});
      std::optional<P> next = NextPhase(p, e);
      if (it == table.end()) {
        EXPECT_FALSE(next.has_value()) << "-> " << ChannelPhaseName(*next);
      } else {
        ASSERT_TRUE(next.has_value());
        EXPECT_EQ(*next, it->second);
        ++legal;
      }
    }
  }
  EXPECT_EQ(legal, ChannelTransitions().size());
  EXPECT_FALSE(NextPhase(P(kChannelPhases), E::kClose).has_value());
  EXPECT_FALSE(NextPhase(P::kPlanned, E(kChannelEvents)).has_value());
}

TEST(ChannelMachineTest, AnEndedChannelTakesNoEvent) {
  for (P p : {P::kClosed, P::kFailed}) {
    EXPECT_TRUE(PhaseEnded(p));
    for (E e : AllEvents()) {
      EXPECT_FALSE(NextPhase(p, e).has_value())
          << ChannelPhaseName(p) << " + " << ChannelEventName(e);
    }
  }
}

TEST(ChannelMachineTest, EveryLiveChannelCanBeClosedAndFailed) {
  for (P p : AllPhases()) {
    if (PhaseEnded(p)) continue;
    EXPECT_EQ(NextPhase(p, E::kClose), P::kClosed) << ChannelPhaseName(p);
    EXPECT_EQ(NextPhase(p, E::kFail), P::kFailed) << ChannelPhaseName(p);
  }
}

TEST(ChannelMachineTest, EveryPhaseIsReachedFromWhereChannelsStart) {
  // A channel starts planned (initiator), opening (acceptor) or
  // reattaching (adopted after a restart).
  std::set<P> reached = {P::kPlanned, P::kOpening, P::kReattaching};
  for (bool grew = true; grew;) {
    grew = false;
    for (const ChannelTransition& t : ChannelTransitions()) {
      if (reached.count(t.from) && reached.insert(t.to).second) grew = true;
    }
  }
  EXPECT_EQ(reached.size(), size_t(kChannelPhases));
}

TEST(ChannelMachineTest, WhatTheApiShows) {
  EXPECT_EQ(PublicState(P::kPlanned), ChannelState::kPlanned);
  EXPECT_EQ(PublicState(P::kOpening), ChannelState::kOpening);
  for (P p : {P::kEstablished, P::kPeerLost, P::kReattaching, P::kConfirming}) {
    EXPECT_EQ(PublicState(p), ChannelState::kEstablished) << ChannelPhaseName(p);
    EXPECT_FALSE(ChannelEnded(PublicState(p)));
  }
  EXPECT_EQ(PublicState(P::kClosed), ChannelState::kClosed);
  EXPECT_EQ(PublicState(P::kFailed), ChannelState::kFailed);
  EXPECT_EQ(ChannelStateName(ChannelState::kEstablished), "established");
}

P Walk(P from, std::initializer_list<E> events) {
  for (E e : events) {
    std::optional<P> next = NextPhase(from, e);
    EXPECT_TRUE(next.has_value()) << ChannelPhaseName(from) << " + " << ChannelEventName(e);
    if (!next) return from;
    from = *next;
  }
  return from;
}

TEST(ChannelMachineTest, TheScenariosPathsThroughTheTable) {
  // An initiator's channel whose peer daemon restarts and takes it back.
  EXPECT_EQ(Walk(P::kPlanned, {E::kConnect, E::kOpened, E::kPeerLost, E::kReclaimedByPeer}),
            P::kEstablished);
  // The same peer instance back after a session loss: it confirms.
  EXPECT_EQ(Walk(P::kEstablished, {E::kPeerLost, E::kPeerBack, E::kConfirmed}), P::kEstablished);
  // Or cannot be asked within the grace: the channel goes on.
  EXPECT_EQ(Walk(P::kEstablished, {E::kPeerLost, E::kPeerBack, E::kGraceExpired}), P::kEstablished);
  // A peer away longer than the grace.
  EXPECT_EQ(Walk(P::kEstablished, {E::kPeerLost, E::kGraceExpired}), P::kFailed);
  // Adopted after this daemon restarted, across a flap of the session.
  EXPECT_EQ(Walk(P::kReattaching, {E::kPeerLost, E::kPeerBack, E::kConfirmed}), P::kEstablished);
  EXPECT_EQ(Walk(P::kReattaching, {E::kRefused}), P::kFailed);
  // Never connected, never held.
  EXPECT_EQ(Walk(P::kPlanned, {E::kPlanExpired}), P::kFailed);
  EXPECT_EQ(Walk(P::kOpening, {E::kOpened, E::kHoldExpired}), P::kClosed);
  // A handshake cut by the peer's loss fails; an established one waits.
  EXPECT_EQ(NextPhase(P::kOpening, E::kPeerLost), P::kFailed);
  EXPECT_EQ(NextPhase(P::kEstablished, E::kPeerLost), P::kPeerLost);
  // Answers that come late change nothing.
  EXPECT_FALSE(NextPhase(P::kEstablished, E::kOpened).has_value());
  EXPECT_FALSE(NextPhase(P::kEstablished, E::kConfirmed).has_value());
  EXPECT_FALSE(NextPhase(P::kPeerLost, E::kPeerLost).has_value());
}

}  // namespace
}  // namespace rdmad
