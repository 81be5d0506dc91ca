// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/rdma/wire.h"

namespace rdmad::internal {
namespace {

constexpr uint32_t kCreditsMask = 0xFFFF;
constexpr uint32_t kFirstBit = 1u << 24;
constexpr uint32_t kLastBit = 1u << 25;
constexpr int kTypeShift = 28;
constexpr uint32_t kReservedMask = 0x00FF0000u | (3u << 26);

}  // namespace

uint32_t EncodeImm(const Imm& imm) {
  uint32_t v = imm.credits & kCreditsMask;
  if (imm.first) v |= kFirstBit;
  if (imm.last) v |= kLastBit;
  v |= static_cast<uint32_t>(imm.type) << kTypeShift;
  return v;
}

std::optional<Imm> DecodeImm(uint32_t v) {
  if ((v & kReservedMask) != 0) return std::nullopt;
  uint32_t type = v >> kTypeShift;
  if (type > static_cast<uint32_t>(MessageType::kNotify)) return std::nullopt;
  Imm imm;
  imm.type = static_cast<MessageType>(type);
  imm.first = (v & kFirstBit) != 0;
  imm.last = (v & kLastBit) != 0;
  imm.credits = static_cast<uint16_t>(v & kCreditsMask);
  if (imm.type != MessageType::kData && (imm.first || imm.last)) return std::nullopt;
  return imm;
}

}  // namespace rdmad::internal
