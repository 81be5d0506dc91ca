// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/rdma/device.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "client/src/rdma/lab_channel_fixture.h"
#include "client/src/rdma/rdma_channel.h"

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

// The port's attributes and a GID entry as a burst of channels asks them:
// the kernel is asked once, and again once kQueryTtl has passed; each
// answer is the kernel's own.
TEST(DeviceLabRdmaDeviceTest, PortAndGidQueriesAreKeptForABurst) {
  const std::string name = lab::FirstDevice();
  if (name.empty()) GTEST_SKIP() << "no RDMA device on this host";
  auto device = RdmaDevice::Open(name);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  RdmaDevice& d = **device;
  const uint32_t gid_index = lab::LabPlan().gid_index;
  ibv_port_attr want{};
  ASSERT_EQ(ibv_query_port(d.context(), 1, &want), 0);
  ASSERT_EQ(want.state, IBV_PORT_ACTIVE);
  ibv_gid_entry want_gid{};
  ASSERT_EQ(ibv_query_gid_ex(d.context(), 1, gid_index, &want_gid, 0), 0);

  std::this_thread::sleep_for(RdmaDevice::kQueryTtl);  // what an earlier test left is stale
  const uint64_t before = d.kernel_queries();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 10; ++i) {
    ibv_port_attr got{};
    ASSERT_EQ(d.QueryPort(1, &got), 0);
    EXPECT_EQ(got.state, want.state);
    EXPECT_EQ(got.active_mtu, want.active_mtu);
    EXPECT_EQ(got.link_layer, want.link_layer);
    ibv_gid_entry gid{};
    ASSERT_EQ(d.QueryGidEntry(1, gid_index, &gid), 0);
    EXPECT_EQ(std::memcmp(gid.gid.raw, want_gid.gid.raw, 16), 0);
    EXPECT_EQ(gid.gid_type, want_gid.gid_type);
  }
  if (std::chrono::steady_clock::now() - start < RdmaDevice::kQueryTtl) {
    EXPECT_EQ(d.kernel_queries() - before, 2u) << "one port query and one GID query";
  }
  std::this_thread::sleep_for(RdmaDevice::kQueryTtl);
  const uint64_t later = d.kernel_queries();
  ibv_port_attr got{};
  ASSERT_EQ(d.QueryPort(1, &got), 0);
  EXPECT_EQ(d.kernel_queries() - later, 1u) << "kept past kQueryTtl";
}

// Channels opened together ask the kernel about their port and GID about
// once, not each.
TEST(DeviceLabRdmaDeviceTest, ChannelsOpenedTogetherQueryThePortAboutOnce) {
  if (lab::FirstDevice().empty()) GTEST_SKIP() << "no RDMA device on this host";
  const RdmaPlan plan = lab::LabPlan();
  auto device = RdmaDevice::Open(plan.device);
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  std::this_thread::sleep_for(RdmaDevice::kQueryTtl);
  const uint64_t before = (*device)->kernel_queries();
  auto start = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<PendingRdmaChannel>> ends;
  for (int i = 0; i < 8; ++i) {
    auto end = PendingRdmaChannel::Create(plan);
    ASSERT_TRUE(end.ok()) << end.status().ToString();
    ends.push_back(std::move(end).value());
  }
  auto ttls = (std::chrono::steady_clock::now() - start) / RdmaDevice::kQueryTtl + 1;
  EXPECT_LE((*device)->kernel_queries() - before, uint64_t(2 * ttls)) << "8 channel ends";
}

}  // namespace
}  // namespace rdmad::internal
