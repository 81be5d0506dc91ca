// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/discovery/inventory.h"

#include "gtest/gtest.h"

namespace rdmad {
namespace {

TEST(InventoryTest, EnumNames) {
  EXPECT_EQ(NodeTypeName(NodeType::kCa), "CA");
  EXPECT_EQ(NodeTypeName(NodeType::kRnic), "RNIC");
  EXPECT_EQ(NodeTypeName(NodeType::kSwitch), "Switch");
  EXPECT_EQ(NodeTypeName(NodeType::kUnknown), "unknown");
  EXPECT_EQ(LinkLayerName(LinkLayer::kInfiniBand), "InfiniBand");
  EXPECT_EQ(LinkLayerName(LinkLayer::kEthernet), "Ethernet");
  EXPECT_EQ(LinkLayerName(LinkLayer::kUnknown), "unknown");
  EXPECT_EQ(TransportName(Transport::kInfiniBand), "InfiniBand");
  EXPECT_EQ(TransportName(Transport::kRoceV1), "RoCE v1");
  EXPECT_EQ(TransportName(Transport::kRoceV2), "RoCE v2");
  EXPECT_EQ(TransportName(Transport::kIwarp), "iWARP");
  EXPECT_EQ(TransportName(Transport::kUnknown), "unknown");
  EXPECT_EQ(GidTypeName(GidType::kIb), "IB");
  EXPECT_EQ(GidTypeName(GidType::kRoceV1), "RoCE v1");
  EXPECT_EQ(GidTypeName(GidType::kRoceV2), "RoCE v2");
}

TEST(InventoryTest, VendorNames) {
  EXPECT_EQ(VendorName(0x15b3), "Mellanox/NVIDIA");
  EXPECT_EQ(VendorName(0x8086), "Intel");
  EXPECT_EQ(VendorName(0x14e4), "Broadcom");
  EXPECT_EQ(VendorName(0x1425), "Chelsio");
  EXPECT_EQ(VendorName(0x1d0f), "Amazon");
  EXPECT_EQ(VendorName(0x1dd8), "AMD Pensando");
  EXPECT_EQ(VendorName(0x0abc), "0x0abc");
  EXPECT_EQ(VendorName(0x12345), "0x12345");
}

TEST(InventoryTest, FindByName) {
  Inventory inventory;
  inventory.devices.resize(2);
  inventory.devices[0].name = "mlx5_0";
  inventory.devices[1].name = "rxe0";
  ASSERT_NE(inventory.Find("rxe0"), nullptr);
  EXPECT_EQ(inventory.Find("rxe0"), &inventory.devices[1]);
  EXPECT_EQ(inventory.Find("rxe"), nullptr);
  EXPECT_EQ(Inventory().Find("mlx5_0"), nullptr);
}

}  // namespace
}  // namespace rdmad
