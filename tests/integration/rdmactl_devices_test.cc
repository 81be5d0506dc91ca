// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl's discovery verbs (devices, gids, route, counters, status, events)
// against the real rdmad, which reads a fixture sysfs tree (--sysfs-root)
// from tests/fixtures/sysfs/. The fixture devices are not real, so the verbs
// probe fails for them and MTUs and device limits stay unknown.

#include <filesystem>
#include <fstream>
#include <thread>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "rdmad/client.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/rdmactl_fixture.h"

namespace rdmad {
namespace {

using Json = testing::RdmactlFixture::Json;
using std::chrono::seconds;
using testing::Process;
using testing::TempDir;

constexpr char kNoDevices[] = "no RDMA devices; channels will use TCP";

std::string Fixture(const std::string& name) {
  return std::string(RDMAD_SOURCE_DIR) + "/tests/fixtures/sysfs/" + name;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class RdmactlDevicesTest : public testing::RdmactlFixture {};

TEST_F(RdmactlDevicesTest, NoDevicesMeansTcp) {
  TempDir empty;
  StartDaemon(empty.path());
  std::string out;
  EXPECT_EQ(Rdmactl({"devices"}, &out), 0);
  EXPECT_EQ(out, std::string(kNoDevices) + "\n");
  EXPECT_EQ(Rdmactl({"gids"}, &out), 0);
  EXPECT_EQ(out, std::string(kNoDevices) + "\n");
  EXPECT_EQ(Rdmactl({"status"}, &out), 0);
  EXPECT_TRUE(Contains(out, std::string("\n  ") + kNoDevices + "\n")) << out;
  EXPECT_EQ(RdmactlJson({"devices"}), Json::parse(R"({"devices":[]})"));
  Json status = RdmactlJson({"status"});
  EXPECT_EQ(status["devices"], Json::array());
  EXPECT_EQ(status["device_count"], 0);
  EXPECT_EQ(status["pid"], daemon_->pid());
}

TEST_F(RdmactlDevicesTest, RouteWithoutDevicesSaysTcpAndExitsOne) {
  TempDir empty;
  StartDaemon(empty.path());
  std::string out;
  EXPECT_EQ(Rdmactl({"route", "192.0.2.2"}, &out), 1);
  EXPECT_TRUE(Contains(out, "no RDMA path to 192.0.2.2: " + std::string(kNoDevices))) << out;
  EXPECT_TRUE(Contains(out, "channels to 192.0.2.2 will use TCP\n")) << out;
  Json json = RdmactlJson({"route", "192.0.2.2"}, 1);
  EXPECT_EQ(json["peer"], "192.0.2.2");
  EXPECT_EQ(json["transport"], "TCP");
  EXPECT_EQ(json["reason"], kNoDevices);
}

TEST_F(RdmactlDevicesTest, BadArgumentsAreReported) {
  TempDir empty;
  StartDaemon(empty.path());
  std::string out;
  // Neither a peer's name nor a host name: NOT_FOUND, saying both.
  EXPECT_EQ(Rdmactl({"route", "not-an-ip.invalid"}, &out), 1);
  EXPECT_TRUE(Contains(out, "NOT_FOUND")) << out;
  EXPECT_TRUE(Contains(out, "no peer named \"not-an-ip.invalid\"")) << out;
  EXPECT_TRUE(Contains(out, "does not resolve")) << out;
  EXPECT_EQ(Rdmactl({"devices", "mlx5_9"}, &out), 1);
  EXPECT_TRUE(Contains(out, "NOT_FOUND")) << out;
  EXPECT_TRUE(Contains(out, "mlx5_9")) << out;
  EXPECT_EQ(Rdmactl({"counters", "mlx5_9", "1"}, &out), 1);
  EXPECT_TRUE(Contains(out, "NOT_FOUND")) << out;
  EXPECT_EQ(Rdmactl({"route"}, &out), 64) << out;
  EXPECT_EQ(Rdmactl({"route", "192.0.2.2", "--peer-mtu", "big"}, &out), 64) << out;
  EXPECT_EQ(Rdmactl({"counters", "mlx5_0", "x"}, &out), 64) << out;
  EXPECT_EQ(Rdmactl({"devices", "a", "b"}, &out), 64) << out;
}

TEST_F(RdmactlDevicesTest, DevicesJsonHasEveryFieldOfTheFixture) {
  StartDaemon(Fixture("connectx-roce"));
  Json json = RdmactlJson({"devices"});
  ASSERT_EQ(json["devices"].size(), 2u) << json.dump(2);
  const Json& d = json["devices"][0];
  std::vector<std::string> keys;
  for (const auto& [key, value] : d.items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{
                      "name", "node_guid", "vendor_id", "vendor_part_id", "vendor", "driver",
                      "fw_ver", "hw_rev", "node_type", "numa_node", "pci_address", "parent_netdev",
                      "max_qp", "max_mr", "max_cq", "relaxed_ordering", "dmabuf", "ports"}));
  EXPECT_EQ(d["name"], "mlx5_0");
  EXPECT_EQ(d["node_guid"], "b8ce:f603:00a1:2b3c");
  EXPECT_EQ(d["vendor_id"], 0x15b3);
  EXPECT_EQ(d["vendor_part_id"], 0x101d);
  EXPECT_EQ(d["vendor"], "Mellanox/NVIDIA");
  EXPECT_EQ(d["driver"], "mlx5_core");
  EXPECT_EQ(d["fw_ver"], "22.36.1010");
  EXPECT_EQ(d["node_type"], "CA");
  EXPECT_EQ(d["numa_node"], 0);
  EXPECT_EQ(d["pci_address"], "0000:3b:00.0");
  EXPECT_EQ(d["parent_netdev"], "");
  ASSERT_EQ(d["ports"].size(), 1u);
  const Json& p = d["ports"][0];
  EXPECT_EQ(p["port"], 1);
  EXPECT_EQ(p["state"], "ACTIVE");
  EXPECT_EQ(p["state_code"], 4);
  EXPECT_EQ(p["phys_state"], "LinkUp");
  EXPECT_EQ(p["link_layer"], "Ethernet");
  EXPECT_EQ(p["transport"], "RoCE v2");
  EXPECT_EQ(p["rate"], "100 Gb/sec (4X EDR)");
  EXPECT_EQ(p["rate_gbps"], 100.0);
  EXPECT_EQ(p["netdev"], "enp59s0f0np0");
  EXPECT_EQ(p["netdev_mtu"], 9000);
  EXPECT_EQ(p["gids"].size(), 6u);
  EXPECT_EQ(json["devices"][1]["name"], "mlx5_1");
  EXPECT_EQ(json["devices"][1]["pci_address"], "0000:3b:00.1");
}

TEST_F(RdmactlDevicesTest, DevicesTableAndOneDevice) {
  StartDaemon(Fixture("connectx-roce"));
  std::string out;
  ASSERT_EQ(Rdmactl({"devices"}, &out), 0) << out;
  EXPECT_EQ(out.rfind("DEVICE  VENDOR           DRIVER     NODE  TRANSPORT  ACTIVE/PORTS", 0), 0u)
      << out;
  EXPECT_TRUE(Contains(out, "\nmlx5_0  Mellanox/NVIDIA  mlx5_core  CA    RoCE v2    1/1")) << out;
  EXPECT_TRUE(Contains(out,
                       "0000:3b:00.1\n  port 1: ACTIVE (LinkUp), Ethernet/RoCE v2, "
                       "100 Gb/sec (4X EDR), MTU unknown, netdev enp59s0f1np1 (MTU 9000), "
                       "4 GIDs\n"))
      << out;
  ASSERT_EQ(Rdmactl({"devices", "mlx5_1"}, &out), 0) << out;
  EXPECT_EQ(out.rfind("mlx5_1: Mellanox/NVIDIA CA, RoCE v2, 1/1 ports active\n", 0), 0u) << out;
  EXPECT_TRUE(Contains(out, "10.1.1.5")) << out;
  EXPECT_FALSE(Contains(out, "mlx5_0")) << out;
  Json one = RdmactlJson({"devices", "mlx5_1"});
  ASSERT_EQ(one["devices"].size(), 1u);
  EXPECT_EQ(one["devices"][0]["node_guid"], "b8ce:f603:00a1:2b3d");
}

TEST_F(RdmactlDevicesTest, GidsListTypesAndAddresses) {
  StartDaemon(Fixture("connectx-roce"));
  Json json = RdmactlJson({"gids"});
  ASSERT_EQ(json["gids"].size(), 10u) << json.dump(2);
  auto gid = [&json](const std::string& device, int index) {
    for (const Json& g : json["gids"]) {
      if (g["device"] == device && g["index"] == index) return g;
    }
    return Json();
  };
  EXPECT_EQ(gid("mlx5_0", 0)["type"], "RoCE v1");
  EXPECT_EQ(gid("mlx5_0", 0)["ip"], "fe80::bace:f6ff:fea1:2b3c");
  EXPECT_EQ(gid("mlx5_0", 3)["type"], "RoCE v2");
  EXPECT_EQ(gid("mlx5_0", 3)["gid"], "0000:0000:0000:0000:0000:ffff:0a01:0005");
  EXPECT_EQ(gid("mlx5_0", 3)["ip"], "10.1.0.5");
  EXPECT_EQ(gid("mlx5_0", 3)["netdev"], "enp59s0f0np0");
  EXPECT_EQ(gid("mlx5_0", 5)["ip"], "2001:db8:1::5");
  EXPECT_EQ(gid("mlx5_1", 3)["ip"], "10.1.1.5");
  EXPECT_EQ(gid("mlx5_1", 3)["port"], 1);
  std::string out;
  ASSERT_EQ(Rdmactl({"gids", "mlx5_1"}, &out), 0) << out;
  EXPECT_EQ(out.rfind("DEV     PORT  INDEX  GID", 0), 0u) << out;
  EXPECT_TRUE(Contains(out,
                       "\nmlx5_1  1     3      0000:0000:0000:0000:0000:ffff:0a01:0105  "
                       "RoCE v2  enp59s0f1np1  10.1.1.5\n"))
      << out;
  EXPECT_FALSE(Contains(out, "mlx5_0")) << out;
}

TEST_F(RdmactlDevicesTest, RoutePicksTheRoceV2GidOfThePeersSubnet) {
  StartDaemon(Fixture("connectx-roce"));
  Json json = RdmactlJson({"route", "10.1.0.9"});
  EXPECT_EQ(json["peer"], "10.1.0.9");
  EXPECT_EQ(json["device"], "mlx5_0");
  EXPECT_EQ(json["port"], 1);
  EXPECT_EQ(json["transport"], "RoCE v2");
  EXPECT_EQ(json["gid_index"], 3);
  EXPECT_EQ(json["gid"], "0000:0000:0000:0000:0000:ffff:0a01:0005");
  EXPECT_EQ(json["gid_type"], "RoCE v2");
  EXPECT_EQ(json["source_ip"], "10.1.0.5");
  EXPECT_EQ(json["netdev"], "enp59s0f0np0");
  EXPECT_EQ(json["mtu_cap"], 4096);
  EXPECT_EQ(json["qp"]["type"], "RC");
  EXPECT_EQ(json["reasons"].size(), 5u) << json.dump(2);
  std::string out;
  ASSERT_EQ(Rdmactl({"route", "10.1.0.9"}, &out), 0) << out;
  EXPECT_EQ(out.rfind("path to 10.1.0.9: RoCE v2 over mlx5_0 port 1\n", 0), 0u) << out;
  EXPECT_TRUE(Contains(out, "  GID        3  0000:0000:0000:0000:0000:ffff:0a01:0005 (RoCE v2)\n"))
      << out;
  EXPECT_TRUE(Contains(out, "  source IP  10.1.0.5\n")) << out;
  EXPECT_TRUE(Contains(out, "\nwhy:\n  device mlx5_0")) << out;
}

TEST_F(RdmactlDevicesTest, RouteHonoursTheConfiguredSubnetAndPeerMtu) {
  StartDaemon(Fixture("connectx-roce"), "[gid]\nsubnet = \"10.1.1.0/24\"\n");
  Json json = RdmactlJson({"route", "10.1.1.9", "--peer-mtu", "512"});
  EXPECT_EQ(json["device"], "mlx5_1");
  EXPECT_EQ(json["gid_index"], 3);
  EXPECT_EQ(json["source_ip"], "10.1.1.5");
  EXPECT_EQ(json["peer_active_mtu"], 512);
  EXPECT_EQ(json["mtu"], 512);
  std::string out;
  EXPECT_EQ(Rdmactl({"route", "10.1.1.9", "--peer-mtu", "1000"}, &out), 1);
  EXPECT_TRUE(Contains(out, "INVALID_ARGUMENT")) << out;
}

TEST_F(RdmactlDevicesTest, RouteToAnIpv6PeerUsesTheIpv6Gid) {
  StartDaemon(Fixture("connectx-roce"));
  Json json = RdmactlJson({"route", "2001:db8:1::9"});
  EXPECT_EQ(json["device"], "mlx5_0");
  EXPECT_EQ(json["gid_index"], 5);
  EXPECT_EQ(json["source_ip"], "2001:db8:1::5");
}

TEST_F(RdmactlDevicesTest, InfiniBandPortShowsItsLid) {
  StartDaemon(Fixture("infiniband-hca"));
  Json json = RdmactlJson({"devices"});
  ASSERT_EQ(json["devices"].size(), 1u);
  const Json& p = json["devices"][0]["ports"][0];
  EXPECT_EQ(json["devices"][0]["name"], "mlx5_2");
  EXPECT_EQ(json["devices"][0]["numa_node"], 1);
  EXPECT_EQ(p["link_layer"], "InfiniBand");
  EXPECT_EQ(p["transport"], "InfiniBand");
  EXPECT_EQ(p["lid"], 18);
  EXPECT_EQ(p["sm_lid"], 1);
  ASSERT_EQ(p["gids"].size(), 1u);
  EXPECT_EQ(p["gids"][0]["type"], "IB");
  EXPECT_EQ(p["gids"][0]["ip"], "");
  Json route = RdmactlJson({"route", "10.2.0.9"});
  EXPECT_EQ(route["transport"], "InfiniBand");
  EXPECT_EQ(route["lid"], 18);
  EXPECT_EQ(route["gid_index"], 0);
  std::string out;
  ASSERT_EQ(Rdmactl({"route", "10.2.0.9"}, &out), 0) << out;
  EXPECT_TRUE(Contains(out, "  LID        18\n")) << out;
  EXPECT_FALSE(Contains(out, "source IP")) << out;
  ASSERT_EQ(Rdmactl({"devices"}, &out), 0) << out;
  EXPECT_TRUE(Contains(out, "InfiniBand, 200 Gb/sec (4X HDR), MTU unknown, LID 18, SM LID 1"))
      << out;
}

TEST_F(RdmactlDevicesTest, CountersOfAPort) {
  StartDaemon(Fixture("connectx-roce"));
  Json json = RdmactlJson({"counters", "mlx5_0", "1"});
  EXPECT_EQ(json["counters"]["port_rcv_data"], 987654321);
  EXPECT_EQ(json["counters"]["np_cnp_sent"], 17);
  EXPECT_FALSE(json["counters"].contains("lifespan"));
  std::string out;
  ASSERT_EQ(Rdmactl({"counters", "mlx5_0", "1"}, &out), 0) << out;
  EXPECT_EQ(out.rfind("NAME ", 0), 0u) << out;
  EXPECT_TRUE(Contains(out, "\nport_rcv_data               987654321\n")) << out;
  EXPECT_TRUE(Contains(out, "\nport_xmit_packets           1000\n")) << out;
  EXPECT_EQ(Rdmactl({"counters", "mlx5_0", "2"}, &out), 1);
  EXPECT_TRUE(Contains(out, "NOT_FOUND")) << out;
}

TEST_F(RdmactlDevicesTest, StatusSummarisesTheDevices) {
  StartDaemon(Fixture("connectx-roce"));
  std::string out;
  ASSERT_EQ(Rdmactl({"status"}, &out), 0) << out;
  EXPECT_TRUE(Contains(out,
                       "  devices: 2 (2 ports, 2 active)\n"
                       "    mlx5_0  RoCE v2  1/1 ports active\n"
                       "    mlx5_1  RoCE v2  1/1 ports active\n"))
      << out;
  EXPECT_FALSE(Contains(out, "TCP")) << out;
  Json json = RdmactlJson({"status"});
  EXPECT_EQ(json["device_count"], 2);
  EXPECT_EQ(json["ports"], 2);
  EXPECT_EQ(json["active_ports"], 2);
  ASSERT_EQ(json["devices"].size(), 2u);
  EXPECT_EQ(json["devices"][1],
            Json::parse(R"({"name":"mlx5_1","node_type":"CA","transport":"RoCE v2",)"
                        R"("ports":1,"active_ports":1})"));
}

// A port going down in the sysfs tree reaches `rdmactl events` with its
// device and port (the monitor rescans at least every 10 s).
TEST_F(RdmactlDevicesTest, PortEventsNameDeviceAndPort) {
  TempDir sysfs;
  std::filesystem::copy(
      Fixture("connectx-roce"), sysfs.path(),
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  StartDaemon(sysfs.path());
  Process json_events(RDMACTL_BINARY, {"--socket", socket_, "--json", "events", "--count", "1"}, {},
                      dir_.File("events.json"));
  Process text_events(RDMACTL_BINARY, {"--socket", socket_, "events", "--count", "1"}, {},
                      dir_.File("events.txt"));
  ClientOptions options;
  options.socket_path = socket_;
  auto client = Client::Open(options);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto deadline = std::chrono::steady_clock::now() + seconds(10);
  while ((*client)->GetStatus()->event_subscribers < 2 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ((*client)->GetStatus()->event_subscribers, 2u);
  std::ofstream(sysfs.File("class/infiniband/mlx5_1/ports/1/state")) << "1: DOWN\n";
  ASSERT_EQ(json_events.WaitExit(seconds(20)).value_or(-1), 0) << json_events.log();
  ASSERT_EQ(text_events.WaitExit(seconds(5)).value_or(-1), 0) << text_events.log();
  Json event = Json::parse(json_events.log(), nullptr, false);
  ASSERT_FALSE(event.is_discarded()) << json_events.log();
  EXPECT_EQ(event["kind"], "port-state-changed");
  EXPECT_EQ(event["device"], "mlx5_1");
  EXPECT_EQ(event["port"], 1);
  EXPECT_TRUE(Contains(text_events.log(),
                       " port-state-changed mlx5_1 port 1: ACTIVE (LinkUp) -> DOWN (LinkUp)\n"))
      << text_events.log();
}

}  // namespace
}  // namespace rdmad
