// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The RDMA channel's wire protocol and its credit accounting.
//
// Every message between the two ends is one IBV_WR_SEND_WITH_IMM into one
// receive slot of the peer's ring (slot_size bytes each, ring_slots of them,
// all posted before the endpoint is published). The 32-bit immediate
// (network byte order on the wire) says what it is:
//
//   bits  0..15  credits   receive slots the sender has reposted since its
//                          last message (credits returned to the peer)
//   bits 16..23  done      rendezvous descriptors of the peer this side has
//                          finished reading since its last message
//   bit  24      FIRST     first fragment of a message   (DATA, RNDV)
//   bit  25      LAST      last fragment of a message    (DATA, RNDV)
//   bits 26..27  reserved  0
//   bits 28..31  type      0 DATA, 1 CREDIT (no payload), 2 CLOSE (no payload),
//                          3 NOTIFY (a batch's notification, one fragment),
//                          4 RNDV (a 16-byte descriptor, RndvDescriptor),
//                          5 RAIL (a further rail coming back, RailMessage)
//
// A message is a sequence of fragments from FIRST to LAST (one for an
// empty message), sent in order; RC delivers them in order, so the
// receiver appends them. A DATA fragment carries raw user bytes (at most
// the peer's slot size). A RNDV fragment carries where up to
// RndvPool::kChunkSize bytes of the message wait in the sender's memory
// (address, rkey, length); the receiver RDMA READs them and returns the
// descriptor in a later immediate's done count (descriptors complete in
// the order they were sent), after which the sender may reuse that memory.
// Small messages travel as DATA (eager); large ones as RNDV (rendezvous),
// so the ring stays small whatever the messages' sizes. A NOTIFY (at most
// kMaxNotificationBytes, which every slot holds) follows the RDMA WRITEs of
// its batch on the same QP, so the peer sees it only once their data is in
// place (with IBV_SEND_FENCE after RDMA READs); it needs a data credit like
// DATA. A RAIL message (12 bytes, only between ends that paired further
// rails) offers a new QP for a further rail that came back, or answers such
// an offer with the peer's new QP (channel_rail_return.cc); it needs a data
// credit too.
//
// Credits: one credit = one receive posted at the peer. The peer's endpoint
// announces its initial credits (the slots it posted first) and its ring's
// full size (ring_slots); its ring starts small and grows once this side's
// messages used half of it before the peer returned credits, taken by the
// application or not (resources.h, HalfRingUsed), the new slots returned
// as credits like reposted ones, so a side never holds more credits than
// the peer's ring_slots. Every message uses one credit. A DATA fragment needs 2
// credits on hand (it leaves at least one in reserve); CREDIT and CLOSE
// messages need 1. The receiver reposts a slot as soon as its payload is
// consumed and owes one credit for it; it returns what it owes in the
// immediate of every message it sends, and sends a CREDIT message of its
// own when it owes the credit mark, three quarters of its current ring but
// at most its slots - 1 (CreditMark; and the peer gave it a credit to do
// so; never for a single slot, so CREDIT messages cannot answer each other
// forever), or when it owes done descriptors (only READs it completed cause
// those, so they cannot answer each other either). The reserve makes the
// exchange deadlock free: a side can reach 0 credits only through a CREDIT
// message that returned at least the mark (>= 2), so both sides can never
// be at 0 together; a blocked sender (< 2 credits) leaves the receiver
// owing its ring's slots - 1 >= the mark once it took the messages, hence
// rings need at least 3 slots. A sender never posts without a credit, so
// the ring never overflows and RNR NAKs (and their retries) never happen.
//
// Thread safety: plain values and pure functions.

#ifndef RDMAD_CLIENT_SRC_RDMA_WIRE_H_
#define RDMAD_CLIENT_SRC_RDMA_WIRE_H_

#include <algorithm>
#include <cstdint>
#include <optional>

namespace rdmad::internal {

enum class MessageType : uint8_t {
  kData = 0,
  kCredit = 1,
  kClose = 2,
  kNotify = 3,
  kRndv = 4,
  kRail = 5
};

struct Imm {
  MessageType type = MessageType::kData;
  bool first = false;
  bool last = false;
  uint16_t credits = 0;
  uint8_t done = 0;
};

// A RNDV fragment's payload: big-endian address, rkey, length.
struct RndvDescriptor {
  uint64_t addr = 0;
  uint32_t rkey = 0;
  uint32_t len = 0;
};
inline constexpr uint32_t kRndvDescriptorBytes = 16;
void EncodeRndv(const RndvDescriptor& d, uint8_t out[kRndvDescriptorBytes]);
RndvDescriptor DecodeRndv(const uint8_t in[kRndvDescriptorBytes]);

// A RAIL message's payload: the rail's index among the further rails, offer
// or answer, the new QP's number and first PSN (big endian, 24 bits each),
// four bytes 0.
struct RailMessage {
  uint8_t rail = 0;
  bool answer = false;
  uint32_t qpn = 0;
  uint32_t psn = 0;
};
inline constexpr uint32_t kRailMessageBytes = 12;
void EncodeRail(const RailMessage& m, uint8_t out[kRailMessageBytes]);
// nullopt unless len is kRailMessageBytes, the kind is offer (1) or answer
// (2), the QP number is not 0 or 1 and the reserved bytes are 0.
std::optional<RailMessage> DecodeRail(const uint8_t* in, uint32_t len);

inline constexpr uint32_t kMaxCreditsPerMessage = 0xFFFF;
inline constexpr uint32_t kMaxDonePerMessage = 0xFF;
inline constexpr uint32_t kDataCreditsNeeded = 2;  // one stays in reserve
inline constexpr uint32_t kControlCreditsNeeded = 1;
inline constexpr uint32_t kMinRingSlots = 3;

// The immediate's fields, as the layout above.
namespace imm_bits {
inline constexpr uint32_t kCreditsMask = 0xFFFF;
inline constexpr int kDoneShift = 16;
inline constexpr uint32_t kFirstBit = 1u << 24;
inline constexpr uint32_t kLastBit = 1u << 25;
inline constexpr uint32_t kReservedMask = 3u << 26;
inline constexpr int kTypeShift = 28;
}  // namespace imm_bits

// Host-order immediate for an Imm (callers htonl it). Inline, as its
// decoding: every message is encoded once and decoded once.
inline uint32_t EncodeImm(const Imm& imm) {
  uint32_t v =
      (imm.credits & imm_bits::kCreditsMask) | (uint32_t(imm.done) << imm_bits::kDoneShift);
  if (imm.first) v |= imm_bits::kFirstBit;
  if (imm.last) v |= imm_bits::kLastBit;
  return v | static_cast<uint32_t>(imm.type) << imm_bits::kTypeShift;
}
// nullopt for an unknown type, reserved bits set, or FIRST/LAST on a
// message that is not DATA or RNDV.
inline std::optional<Imm> DecodeImm(uint32_t v) {
  if ((v & imm_bits::kReservedMask) != 0) return std::nullopt;
  const uint32_t type = v >> imm_bits::kTypeShift;
  if (type > static_cast<uint32_t>(MessageType::kRail)) return std::nullopt;
  Imm imm;
  imm.type = static_cast<MessageType>(type);
  imm.first = (v & imm_bits::kFirstBit) != 0;
  imm.last = (v & imm_bits::kLastBit) != 0;
  imm.credits = static_cast<uint16_t>(v & imm_bits::kCreditsMask);
  imm.done = static_cast<uint8_t>(v >> imm_bits::kDoneShift);
  const bool fragments = imm.type == MessageType::kData || imm.type == MessageType::kRndv;
  if (!fragments && (imm.first || imm.last)) return std::nullopt;
  return imm;
}

// One side's credit state: what it may send, what it owes the peer.
class CreditState {
 public:
  // peer_credits: the peer endpoint's initial credits; ring_slots: this
  // side's ring (the most this side can ever owe).
  CreditState(uint32_t peer_credits, uint32_t ring_slots)
      : credits_(peer_credits), ring_slots_(ring_slots) {}

  uint32_t credits() const { return credits_; }
  uint32_t owed() const { return owed_; }

  bool CanSendData() const { return credits_ >= kDataCreditsNeeded; }
  bool CanSendControl() const { return credits_ >= kControlCreditsNeeded; }
  // How many owed credits make a CREDIT message due: three quarters of the
  // ring, but at most ring_slots - 1 (what a blocked peer leaves owed once
  // its messages were taken) and at least 2. A stream one way returns
  // credits every 3/4 ring instead of every half: a third fewer CREDIT
  // messages, and the peer still holds a quarter of the ring when one goes.
  uint32_t CreditMark() const {
    uint32_t mark = std::min((3 * ring_slots_ + 3) / 4, ring_slots_ - 1);
    return std::max<uint32_t>(mark, 2);
  }
  // The peer used at least half the ring since this side last returned
  // credits: `holding` slots hold messages not yet taken, owed() were
  // taken and reposted, less the late ones (OnDeferredReposted), which a
  // message already sent would have returned. When to grow a ring that
  // started small.
  bool HalfRingUsed(uint32_t holding) const {
    uint32_t half = (ring_slots_ + 1) / 2;
    return holding + owed_ - late_ >= (half < 2 ? 2 : half);
  }
  // True when a CREDIT message is due: CreditMark() owed, and a credit to
  // send it with. Never for 1 owed: else two CREDIT messages would answer
  // each other forever.
  bool CreditMessageDue() const { return owed_ >= CreditMark() && CanSendControl(); }

  // Takes a credit for one message and the credits to piggyback on it.
  // Precondition: credits() >= 1.
  uint16_t OnSend() {
    --credits_;
    uint32_t give = owed_ < kMaxCreditsPerMessage ? owed_ : kMaxCreditsPerMessage;
    owed_ -= give;
    late_ -= late_ < give ? late_ : give;
    answering_ = true;
    return static_cast<uint16_t>(give);
  }
  // Credits the peer returned. False (and no change) if they would exceed
  // what the peer can have posted: a protocol violation.
  bool OnCreditsReturned(uint32_t n, uint32_t peer_ring_slots) {
    if (uint64_t(credits_) + n > peer_ring_slots) return false;
    credits_ += n;
    return true;
  }
  // A slot of this side's ring was reposted.
  void OnReposted() {
    if (owed_ < ring_slots_) ++owed_;
  }
  // The application took the message in one of this side's slots. True
  // if its repost is to wait (RdmaChannel::DeferRepost; the caller then
  // calls OnDeferredReposted), else the caller reposts it now
  // (OnReposted). It waits only at a side that answers what it takes (a
  // message went out since it took the one before), where the post can
  // go after the answer, and not when its credit makes a CREDIT message
  // due: a side that only takes returns its credits on time. At most one
  // slot waits: the caller reposts the one before first.
  bool OnTaken() {
    const bool defer = answering_ && owed_ + 1 < CreditMark();
    answering_ = false;
    return defer;
  }
  // The deferred slot was reposted: owed like any repost, and late if a
  // message went out since it was taken (it would have carried the credit).
  void OnDeferredReposted() {
    if (owed_ < ring_slots_) {
      ++owed_;
      late_ += answering_ ? 1 : 0;
    }
  }
  uint32_t late() const { return late_; }
  // This side's ring grew by `added` slots, all posted: owed like reposts.
  void OnRingGrown(uint32_t added) {
    ring_slots_ += added;
    owed_ += added;
  }
  uint32_t ring_slots() const { return ring_slots_; }

 private:
  uint32_t credits_;
  uint32_t owed_ = 0;
  uint32_t late_ = 0;       // of owed_: late credits, at most 1
  bool answering_ = false;  // a message went out since a slot was last taken
  uint32_t ring_slots_;
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_RDMA_WIRE_H_
