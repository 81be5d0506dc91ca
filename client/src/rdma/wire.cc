// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/rdma/wire.h"

namespace rdmad::internal {

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
