// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/rdma/device.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace rdmad::internal {
namespace {

std::string InetNtop(const std::array<uint8_t, 16>& gid) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid.data(), buf, sizeof(buf));
  return buf;
}

// GidText keeps its last texts; whatever it formatted before, each text is
// the GID's own, as inet_ntop writes it.
TEST(GidTextTest, EachTextIsItsGidsWhateverCameBefore) {
  std::array<uint8_t, 16> v4 = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 0, 2, 1};
  std::array<uint8_t, 16> peer = v4;
  peer[15] = 2;
  std::array<uint8_t, 16> link = {0xfe, 0x80, 0,    0,    0,    0,    0,    0,
                                  0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55};
  std::array<uint8_t, 16> zero{};
  const std::vector<const std::array<uint8_t, 16>*> order = {
      &v4, &peer, &v4, &link, &peer, &v4, &link, &link, &zero, &v4, &zero, &peer};
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(GidText(order[i]->data()), InetNtop(*order[i])) << "call " << i;
  }
  EXPECT_EQ(GidText(v4.data()), "::ffff:192.0.2.1");
  EXPECT_EQ(GidText(zero.data()), "::");
}

}  // namespace
}  // namespace rdmad::internal
