// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/rdma/wire.h"

namespace rdmad::internal {
namespace {

constexpr uint32_t kCreditsMask = 0xFFFF;
constexpr uint32_t kFirstBit = 1u << 24;
constexpr uint32_t kLastBit = 1u << 25;
constexpr int kTypeShift = 28;
constexpr int kDoneShift = 16;
constexpr uint32_t kReservedMask = 3u << 26;

}  // namespace

uint32_t EncodeImm(const Imm& imm) {
  uint32_t v = (imm.credits & kCreditsMask) | (uint32_t(imm.done) << kDoneShift);
  if (imm.first) v |= kFirstBit;
  if (imm.last) v |= kLastBit;
  v |= static_cast<uint32_t>(imm.type) << kTypeShift;
  return v;
}

std::optional<Imm> DecodeImm(uint32_t v) {
  if ((v & kReservedMask) != 0) return std::nullopt;
  uint32_t type = v >> kTypeShift;
  if (type > static_cast<uint32_t>(MessageType::kRail)) return std::nullopt;
  Imm imm;
  imm.type = static_cast<MessageType>(type);
  imm.first = (v & kFirstBit) != 0;
  imm.last = (v & kLastBit) != 0;
  imm.credits = static_cast<uint16_t>(v & kCreditsMask);
  imm.done = static_cast<uint8_t>(v >> kDoneShift);
  bool fragments = imm.type == MessageType::kData || imm.type == MessageType::kRndv;
  if (!fragments && (imm.first || imm.last)) return std::nullopt;
  return imm;
}

void EncodeRail(const RailMessage& m, uint8_t out[kRailMessageBytes]) {
  out[0] = m.rail;
  out[1] = m.answer ? 2 : 1;
  for (int i = 0; i < 3; ++i) out[2 + i] = uint8_t(m.qpn >> (16 - 8 * i));
  for (int i = 0; i < 3; ++i) out[5 + i] = uint8_t(m.psn >> (16 - 8 * i));
  for (int i = 8; i < 12; ++i) out[i] = 0;
}

std::optional<RailMessage> DecodeRail(const uint8_t* in, uint32_t len) {
  if (in == nullptr || len != kRailMessageBytes || (in[1] != 1 && in[1] != 2)) return std::nullopt;
  for (int i = 8; i < 12; ++i) {
    if (in[i] != 0) return std::nullopt;
  }
  RailMessage m;
  m.rail = in[0];
  m.answer = in[1] == 2;
  for (int i = 0; i < 3; ++i) m.qpn = (m.qpn << 8) | in[2 + i];
  for (int i = 0; i < 3; ++i) m.psn = (m.psn << 8) | in[5 + i];
  if (m.qpn < 2) return std::nullopt;
  return m;
}

void EncodeRndv(const RndvDescriptor& d, uint8_t out[kRndvDescriptorBytes]) {
  for (int i = 0; i < 8; ++i) out[i] = uint8_t(d.addr >> (56 - 8 * i));
  for (int i = 0; i < 4; ++i) out[8 + i] = uint8_t(d.rkey >> (24 - 8 * i));
  for (int i = 0; i < 4; ++i) out[12 + i] = uint8_t(d.len >> (24 - 8 * i));
}

RndvDescriptor DecodeRndv(const uint8_t in[kRndvDescriptorBytes]) {
  RndvDescriptor d;
  for (int i = 0; i < 8; ++i) d.addr = (d.addr << 8) | in[i];
  for (int i = 0; i < 4; ++i) d.rkey = (d.rkey << 8) | in[8 + i];
  for (int i = 0; i < 4; ++i) d.len = (d.len << 8) | in[12 + i];
  return d;
}

}  // namespace rdmad::internal
