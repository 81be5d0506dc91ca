// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/rdma/wire.h"

#include <algorithm>
#include <array>
#include <deque>
#include <random>
#include <vector>

#include "client/src/rdma/resources.h"
#include "gtest/gtest.h"

namespace rdmad::internal {
namespace {

TEST(ImmTest, RoundTrips) {
  for (MessageType type : {MessageType::kData, MessageType::kCredit, MessageType::kClose,
                           MessageType::kNotify, MessageType::kRndv, MessageType::kRail}) {
    for (uint16_t credits : {0, 1, 64, 0xFFFF}) {
      for (int flags = 0; flags < 4; ++flags) {
        Imm imm;
        imm.type = type;
        imm.credits = credits;
        imm.done = static_cast<uint8_t>(credits * 7 + flags);
        if (type == MessageType::kData || type == MessageType::kRndv) {
          imm.first = flags & 1;
          imm.last = flags & 2;
        }
        auto back = DecodeImm(EncodeImm(imm));
        ASSERT_TRUE(back.has_value());
        EXPECT_EQ(back->type, imm.type);
        EXPECT_EQ(back->credits, imm.credits);
        EXPECT_EQ(back->done, imm.done);
        EXPECT_EQ(back->first, imm.first);
        EXPECT_EQ(back->last, imm.last);
      }
    }
  }
}

TEST(ImmTest, Layout) {
  Imm imm;
  imm.type = MessageType::kCredit;
  imm.credits = 0x1234;
  EXPECT_EQ(EncodeImm(imm), 0x10001234u);
  imm = Imm{MessageType::kData, true, true, 7};
  EXPECT_EQ(EncodeImm(imm), 0x03000007u);
  EXPECT_EQ(EncodeImm(Imm{MessageType::kClose, false, false, 0}), 0x20000000u);
  EXPECT_EQ(EncodeImm(Imm{MessageType::kNotify, false, false, 2}), 0x30000002u);
  EXPECT_EQ(EncodeImm(Imm{MessageType::kRndv, true, false, 3, 0xAB}), 0x41AB0003u);
}

TEST(RndvDescriptorTest, IsSixteenBigEndianBytes) {
  RndvDescriptor d{0x0102030405060708ull, 0x0A0B0C0D, 0x00010000};
  uint8_t raw[kRndvDescriptorBytes];
  EncodeRndv(d, raw);
  const uint8_t want[] = {1, 2, 3, 4, 5, 6, 7, 8, 0x0A, 0x0B, 0x0C, 0x0D, 0, 1, 0, 0};
  EXPECT_EQ(std::vector<uint8_t>(raw, raw + 16), std::vector<uint8_t>(want, want + 16));
  RndvDescriptor back = DecodeRndv(raw);
  EXPECT_EQ(back.addr, d.addr);
  EXPECT_EQ(back.rkey, d.rkey);
  EXPECT_EQ(back.len, d.len);
}

TEST(RailMessageTest, IsTwelveBytesWithA24BitQpnAndPsn) {
  RailMessage m;
  m.rail = 2;
  m.answer = true;
  m.qpn = 0xABCDEF;
  m.psn = 0x123456;
  uint8_t raw[kRailMessageBytes];
  EncodeRail(m, raw);
  const uint8_t want[kRailMessageBytes] = {2, 2, 0xAB, 0xCD, 0xEF, 0x12, 0x34, 0x56, 0, 0, 0, 0};
  EXPECT_TRUE(std::equal(raw, raw + kRailMessageBytes, want));
  auto back = DecodeRail(raw, kRailMessageBytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->rail, 2);
  EXPECT_TRUE(back->answer);
  EXPECT_EQ(back->qpn, 0xABCDEFu);
  EXPECT_EQ(back->psn, 0x123456u);
  // Another length, kind, QP 0/1 or a reserved byte set: not a RAIL message.
  EXPECT_FALSE(DecodeRail(raw, 11));
  EXPECT_FALSE(DecodeRail(nullptr, kRailMessageBytes));
  uint8_t bad[kRailMessageBytes];
  std::copy(raw, raw + kRailMessageBytes, bad);
  bad[1] = 3;
  EXPECT_FALSE(DecodeRail(bad, kRailMessageBytes));
  std::copy(raw, raw + kRailMessageBytes, bad);
  bad[11] = 1;
  EXPECT_FALSE(DecodeRail(bad, kRailMessageBytes));
  m.qpn = 1;
  EncodeRail(m, bad);
  EXPECT_FALSE(DecodeRail(bad, kRailMessageBytes));
}

TEST(ImmTest, RejectsMalformed) {
  EXPECT_FALSE(DecodeImm(0x60000000u));  // type 6
  EXPECT_FALSE(DecodeImm(0x53000000u));  // FIRST/LAST on RAIL
  EXPECT_FALSE(DecodeImm(0x33000000u));  // FIRST/LAST on NOTIFY
  EXPECT_FALSE(DecodeImm(0xF0000000u));
  EXPECT_FALSE(DecodeImm(0x08000000u));  // reserved bits
  EXPECT_FALSE(DecodeImm(0x04000000u));
  EXPECT_FALSE(DecodeImm(0x11000000u));  // FIRST on a CREDIT message
  EXPECT_FALSE(DecodeImm(0x22000000u));  // LAST on CLOSE
}

TEST(WrIdTest, ASignaledSendCarriesHowManyUnsignaledOnesItCoversBesideItsIndex) {
  for (WrKind kind : {WrKind::kSend, WrKind::kStaged, WrKind::kControl, WrKind::kOneSided}) {
    for (uint32_t index : {0u, 1u, 4095u, 0xFFFFFFFFu}) {
      for (uint32_t covered : {0u, 1u, 15u, 0xFFFFu}) {
        uint64_t id = WithCovered(MakeWrId(kind, index), covered);
        EXPECT_EQ(WrIdKind(id), kind);
        EXPECT_EQ(WrIdIndex(id), index);
        EXPECT_EQ(WrIdCovered(id), covered);
      }
    }
  }
  EXPECT_EQ(WrIdCovered(MakeWrId(WrKind::kSend, kUnsignaledIndex)), 0u);
}

TEST(CreditStateTest, KeepsAReserveForControlMessages) {
  CreditState c(3, 8);
  EXPECT_TRUE(c.CanSendData());
  c.OnSend();
  EXPECT_TRUE(c.CanSendData());
  c.OnSend();
  EXPECT_FALSE(c.CanSendData());  // the last credit is for CREDIT/CLOSE
  EXPECT_TRUE(c.CanSendControl());
  c.OnSend();
  EXPECT_FALSE(c.CanSendControl());
  EXPECT_TRUE(c.OnCreditsReturned(3, 3));
  EXPECT_FALSE(c.OnCreditsReturned(1, 3));  // more than the peer's ring
  EXPECT_EQ(c.credits(), 3u);
}

TEST(CreditStateTest, PiggybacksWhatItOwesAndAsksForACreditMessageAtThreeQuartersOfTheRing) {
  CreditState c(8, 8);
  for (int i = 0; i < 5; ++i) c.OnReposted();
  EXPECT_FALSE(c.CreditMessageDue());
  c.OnReposted();
  EXPECT_TRUE(c.CreditMessageDue());  // 6 of 8
  EXPECT_EQ(c.OnSend(), 6);
  EXPECT_EQ(c.owed(), 0u);
  EXPECT_FALSE(c.CreditMessageDue());
}

TEST(CreditStateTest, TheCreditMarkLeavesABlockedPeerNoWaitAndNeverFallsToOne) {
  // A peer with < 2 credits left this side owing ring - 1 once taken: the
  // mark is never above that, nor below 2.
  for (uint32_t ring : {3u, 4u, 5u, 8u, 31u, 32u, 63u, 1024u}) {
    CreditState c(ring, ring);
    EXPECT_LE(c.CreditMark(), ring - 1) << ring;
    EXPECT_GE(c.CreditMark(), 2u) << ring;
    EXPECT_GE(4 * c.CreditMark(), 3 * ring - 4) << ring;  // about three quarters
  }
  EXPECT_EQ(CreditState(31, 31).CreditMark(), 24u);
  EXPECT_EQ(CreditState(4, 4).CreditMark(), 3u);
  EXPECT_EQ(CreditState(3, 3).CreditMark(), 2u);
}

TEST(CreditStateTest, AGrownRingIsOwedToThePeerAndMovesTheMarks) {
  CreditState c(4, 4);  // the peer starts with this side's first 4 slots
  c.OnReposted();
  EXPECT_FALSE(c.HalfRingUsed(0));
  c.OnReposted();
  EXPECT_TRUE(c.HalfRingUsed(0));  // time to grow
  EXPECT_FALSE(c.CreditMessageDue());
  c.OnRingGrown(28);
  EXPECT_EQ(c.ring_slots(), 32u);
  EXPECT_EQ(c.owed(), 30u);
  EXPECT_EQ(c.OnSend(), 30);
  for (int i = 0; i < 15; ++i) c.OnReposted();
  EXPECT_FALSE(c.HalfRingUsed(0));  // half of 32 now
  c.OnReposted();
  EXPECT_TRUE(c.HalfRingUsed(0));
  for (int i = 0; i < 7; ++i) c.OnReposted();
  EXPECT_FALSE(c.CreditMessageDue());  // 23 of 32
  c.OnReposted();
  EXPECT_TRUE(c.CreditMessageDue());  // 24
}

TEST(CreditStateTest, OnlyASideThatAnswersWhatItTakesDefersTheRepost) {
  CreditState c(8, 8);
  EXPECT_FALSE(c.OnTaken());  // nothing sent yet: repost now
  c.OnReposted();
  EXPECT_FALSE(c.OnTaken());  // a side that only takes
  c.OnReposted();
  EXPECT_EQ(c.OnSend(), 2);
  EXPECT_TRUE(c.OnTaken());  // it answered: this one waits
  c.OnDeferredReposted();
  EXPECT_EQ(c.late(), 0u);    // nothing went out while it waited
  EXPECT_FALSE(c.OnTaken());  // the next, without an answer between
}

TEST(CreditStateTest, ADeferredSlotsCreditIsLateIfAMessageWentOutWhileItWaited) {
  CreditState c(4, 4);
  c.OnSend();
  EXPECT_TRUE(c.OnTaken());
  EXPECT_EQ(c.OnSend(), 0);  // the answer goes first
  c.OnDeferredReposted();
  EXPECT_EQ(c.owed(), 1u);
  EXPECT_EQ(c.late(), 1u);
  EXPECT_FALSE(c.HalfRingUsed(1));  // the answer would have returned it
  EXPECT_TRUE(c.HalfRingUsed(2));
  EXPECT_EQ(c.OnSend(), 1);  // the next message carries it, on time again
  EXPECT_EQ(c.late(), 0u);
  EXPECT_TRUE(c.HalfRingUsed(2));
}

TEST(CreditStateTest, RequestsAndAnswersWithDeferredRepostsNeverUseHalfASmallRing) {
  // Each end: its request/answer arrives (holding 1), it takes it,
  // answers, and reposts at its next wait; the first taken before any
  // answer is reposted at once.
  CreditState c(4, 4);
  for (int round = 0; round < 100; ++round) {
    if (round > 0) {
      ASSERT_TRUE(c.OnCreditsReturned(1, 4));  // the peer's message returned it
    }
    ASSERT_FALSE(c.HalfRingUsed(1)) << round;
    const bool deferred = c.OnTaken();
    ASSERT_EQ(deferred, round > 0) << round;
    if (!deferred) c.OnReposted();
    ASSERT_FALSE(c.HalfRingUsed(0)) << round;
    c.OnSend();
    if (deferred) c.OnDeferredReposted();
    ASSERT_FALSE(c.CreditMessageDue()) << round;
  }
}

TEST(CreditStateTest, TheSlotWhoseCreditMakesACreditMessageDueIsNotDeferred) {
  CreditState c(3, 3);  // the mark: 2
  c.OnSend();
  c.OnReposted();  // a CREDIT message's slot, say
  EXPECT_FALSE(c.OnTaken()) << "1 owed + this one is the mark";
  CreditState d(4, 4);  // the mark: 3
  d.OnSend();
  d.OnReposted();
  EXPECT_TRUE(d.OnTaken());
}

// Simulates two ends exchanging data fragments with the real credit rules,
// delivering and consuming in random order: the ring never overflows and
// there is always something that can happen until everything is consumed.
// Each ring starts with `first` slots and grows to `ring` once half of it
// is owed, as RdmaChannel does (or never, when it cannot get the memory).
// With `defer`, a consumed slot's repost may wait for the side's next
// consume or wait (RdmaChannel::DeferRepost, CreditState::OnTaken), a wait
// being one more thing that can happen.
struct Side {
  CreditState credits;
  uint32_t free_slots;  // posted receives at this side
  bool can_grow;
  uint32_t unconsumed = 0;
  int to_send;
  int consumed = 0;
  std::deque<std::pair<MessageType, uint16_t>> in_flight;  // towards the peer
  bool deferred = false;                                   // a consumed slot waits to be reposted
};

void RunSimulation(uint32_t ring, uint32_t first, bool can_grow, int messages, uint32_t seed,
                   bool defer = false) {
  std::mt19937 rng(seed);
  std::array<Side, 2> s = {
      Side{CreditState(first, first), first, can_grow, 0, messages, 0, {}},
      Side{CreditState(first, first), first, can_grow, 0, messages / 2, 0, {}}};
  const int total[2] = {messages / 2, messages};  // what each side must consume
  auto maybe_credit = [&](int x) {
    if (s[x].can_grow && s[x].credits.HalfRingUsed(s[x].unconsumed)) {
      s[x].can_grow = false;
      s[x].free_slots += ring - first;
      s[x].credits.OnRingGrown(ring - first);
    }
    if (s[x].credits.CreditMessageDue()) {
      s[x].in_flight.emplace_back(MessageType::kCredit, s[x].credits.OnSend());
    }
  };
  auto repost_deferred = [&](int x) {
    if (!s[x].deferred) return;
    s[x].deferred = false;
    ++s[x].free_slots;
    s[x].credits.OnDeferredReposted();
  };
  for (int step = 0;; ++step) {
    ASSERT_LT(step, 10'000'000) << "no progress";
    std::vector<int> actions;  // 0..1 send, 2..3 deliver, 4..5 consume, 6..7 wait
    for (int x = 0; x < 2; ++x) {
      if (s[x].to_send > 0 && s[x].credits.CanSendData()) actions.push_back(x);
      if (!s[x].in_flight.empty()) actions.push_back(2 + x);
      if (s[x].unconsumed > 0) actions.push_back(4 + x);
      if (s[x].deferred) actions.push_back(6 + x);
    }
    if (actions.empty()) {
      ASSERT_EQ(s[0].consumed, total[0]) << "deadlock: ring " << ring << " seed " << seed;
      ASSERT_EQ(s[1].consumed, total[1]) << "deadlock: ring " << ring << " seed " << seed;
      return;
    }
    int a = actions[rng() % actions.size()];
    int x = a % 2, y = 1 - x;
    if (a < 2) {
      s[x].in_flight.emplace_back(MessageType::kData, s[x].credits.OnSend());
      --s[x].to_send;
    } else if (a < 4) {
      auto [type, returned] = s[x].in_flight.front();
      s[x].in_flight.pop_front();
      ASSERT_GT(s[y].free_slots, 0u) << "ring overflow: ring " << ring << " seed " << seed;
      --s[y].free_slots;
      ASSERT_TRUE(s[y].credits.OnCreditsReturned(returned, ring));
      if (type == MessageType::kData) {
        ++s[y].unconsumed;
      } else {
        ++s[y].free_slots;
        s[y].credits.OnReposted();
      }
      maybe_credit(y);
    } else if (a < 6) {
      --s[x].unconsumed;
      ++s[x].consumed;
      repost_deferred(x);
      if (defer && s[x].credits.OnTaken()) {
        s[x].deferred = true;
      } else {
        ++s[x].free_slots;
        s[x].credits.OnReposted();
      }
      maybe_credit(x);
    } else {
      repost_deferred(x);
      maybe_credit(x);
    }
  }
}

TEST(CreditStateTest, NeitherOverflowsNorDeadlocksInRandomExchanges) {
  for (bool defer : {false, true}) {
    for (uint32_t ring : {3u, 4u, 5u, 6u, 8u, 64u}) {
      for (uint32_t seed = 1; seed <= 20; ++seed) {
        RunSimulation(ring, ring, false, 2000, seed, defer);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(CreditStateTest, RingsThatStartSmallAndGrowNeitherOverflowNorDeadlock) {
  for (bool defer : {false, true}) {
    for (auto [first, ring] : {std::pair{3u, 4u}, {3u, 32u}, {4u, 5u}, {4u, 32u}, {8u, 64u}}) {
      for (bool can_grow : {true, false}) {
        for (uint32_t seed = 1; seed <= 20; ++seed) {
          RunSimulation(ring, first, can_grow, 2000, seed, defer);
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

}  // namespace
}  // namespace rdmad::internal
