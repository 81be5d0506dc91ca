// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/topology/topology.h"

#include <gtest/gtest.h>

#include "daemon/discovery/inventory.h"

namespace rdmad {
namespace {

PciPlace At(std::string address, std::vector<std::string> bridges, int numa = 0) {
  PciPlace place;
  place.address = std::move(address);
  place.bridges = std::move(bridges);
  place.numa_node = numa;
  return place;
}

TEST(PathBetweenTest, NamesEachDistanceAsNcclDoes) {
  // A switch (upstream port 02:00.0) under root port 01:00.0 of host bridge A.
  PciPlace gpu = At("0000:04:00.0", {"host:A", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0"});
  PciPlace nic = At("0000:05:00.0", {"host:A", "0000:01:00.0", "0000:02:00.0", "0000:03:08.0"});
  EXPECT_EQ(PathBetween(gpu, nic), PathType::kPix);
  EXPECT_EQ(PathBetween(gpu, gpu), PathType::kSelf);
  // Behind a second switch under the same one: several bridges.
  PciPlace deeper = At("0000:08:00.0", {"host:A", "0000:01:00.0", "0000:02:00.0", "0000:03:10.0",
                                        "0000:06:00.0", "0000:07:00.0"});
  EXPECT_EQ(PathBetween(gpu, deeper), PathType::kPxb);
  // Another root port of the same host bridge.
  PciPlace other_port = At("0000:0a:00.0", {"host:A", "0000:09:00.0"});
  EXPECT_EQ(PathBetween(gpu, other_port), PathType::kPhb);
  // Another host bridge: the same NUMA node or not.
  PciPlace same_node = At("0000:41:00.0", {"host:B", "0000:40:01.0"}, 0);
  PciPlace far = At("0000:81:00.0", {"host:C", "0000:80:01.0"}, 1);
  EXPECT_EQ(PathBetween(gpu, same_node), PathType::kNode);
  EXPECT_EQ(PathBetween(gpu, far), PathType::kSys);
  // Two functions of one device under one root port.
  PciPlace f0 = At("0000:0b:00.0", {"host:A", "0000:09:08.0"});
  PciPlace f1 = At("0000:0b:00.1", {"host:A", "0000:09:08.0"});
  EXPECT_EQ(PathBetween(f0, f1), PathType::kPix);
}

TEST(PathBetweenTest, AnUnplacedDeviceIsFarFromEverything) {
  PciPlace placed = At("0000:04:00.0", {"host:A", "0000:01:00.0"});
  EXPECT_EQ(PathBetween(placed, PciPlace{}), PathType::kSys);
  EXPECT_EQ(PathBetween(PciPlace{}, placed), PathType::kSys);
  // Unknown NUMA nodes on two host bridges are not "the same node".
  EXPECT_EQ(PathBetween(At("0000:01:00.0", {"host:A"}, -1), At("0000:41:00.0", {"host:B"}, -1)),
            PathType::kSys);
}

TEST(GpuClassTest, GpusAndAcceleratorsButNotTheBmcsVga) {
  EXPECT_TRUE(IsGpuClass(0x0302, 0x10de));   // NVIDIA 3D controller
  EXPECT_TRUE(IsGpuClass(0x0380, 0x1002));   // AMD Instinct
  EXPECT_TRUE(IsGpuClass(0x0300, 0x10de));   // a VGA GPU
  EXPECT_TRUE(IsGpuClass(0x1200, 0x1da3));   // Habana Gaudi
  EXPECT_FALSE(IsGpuClass(0x0300, 0x1a03));  // ASPEED BMC
  EXPECT_FALSE(IsGpuClass(0x0300, 0x102b));  // Matrox BMC
  EXPECT_FALSE(IsGpuClass(0x0207, 0x15b3));  // InfiniBand
  EXPECT_FALSE(IsGpuClass(0x0680, 0x10de));  // NVSwitch
  EXPECT_EQ(VendorName(0x10de), "NVIDIA");
  EXPECT_EQ(VendorName(0x1234), "0x1234");
}

}  // namespace
}  // namespace rdmad
