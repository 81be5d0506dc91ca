// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl topo against the real rdmad reading the topologies of real kinds
// of machine (rails.topology_xml, tests/fixtures/topology/), and the live
// change of that file on SIGHUP. The matrix's words are checked against
// what NCCL would say of each pair (make_fixtures.py says why).

#include <csignal>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "rdmad/client.h"
#include "tests/integration/daemon_process.h"
#include "tests/integration/rdmactl_fixture.h"

namespace rdmad {
namespace {

using Json = testing::RdmactlFixture::Json;
using testing::TempDir;

std::string Fixture(const std::string& name) {
  return std::string(RDMAD_SOURCE_DIR) + "/tests/fixtures/topology/" + name;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class RdmactlTopologyTest : public testing::RdmactlFixture {
 protected:
  static std::string Rails(const std::string& xml) {
    return "[echo]\nenabled = false\n[rails]\ntopology_xml = \"" + xml + "\"\n";
  }
  // rdmad on a sysfs without RDMA devices, reading the topology in xml.
  void StartWith(const std::string& xml) { StartDaemon(empty_.path(), Rails(xml)); }
  Json TopoJson() { return RdmactlJson({"topo"}); }

  TempDir empty_;
};

TEST_F(RdmactlTopologyTest, AnEightGpuServersMatrixNamesEachPathAsNcclDoes) {
  StartWith(Fixture("gpu8-nic8-2socket.xml"));
  std::string out;
  ASSERT_EQ(Rdmactl({"topo"}, &out), 0) << out;
  EXPECT_TRUE(Contains(out, "8 RDMA device(s), 8 GPU(s), 2 NUMA node(s)")) << out;
  EXPECT_TRUE(Contains(out, "NVIDIA DGX A100 (rdmad fixture)")) << out;
  EXPECT_TRUE(Contains(out, "PIX  = at most one PCIe switch between them")) << out;
  EXPECT_TRUE(Contains(out, "GA100 [A100 SXM4 80GB]")) << out;
  Json topo = TopoJson();
  ASSERT_EQ(topo["nics"].size(), 8u) << topo.dump(2);
  ASSERT_EQ(topo["gpus"].size(), 8u) << topo.dump(2);
  const Json& mlx5_0 = topo["nics"][0];
  EXPECT_EQ(mlx5_0["name"], "mlx5_0");
  EXPECT_EQ(mlx5_0["to_gpus"],
            Json::parse(R"(["PIX","PXB","NODE","NODE","SYS","SYS","SYS","SYS"])"));
  EXPECT_EQ(mlx5_0["to_nics"], Json::parse(R"(["X","PXB","NODE","NODE","SYS","SYS","SYS","SYS"])"));
  EXPECT_EQ(mlx5_0["place"]["numa_node"], 0);
  EXPECT_EQ(mlx5_0["place"]["cpus"], "0-7");
  EXPECT_EQ(mlx5_0["place"]["pci_address"], "0000:12:00.0");
  EXPECT_EQ(topo["nics"][7]["to_gpus"],
            Json::parse(R"(["SYS","SYS","SYS","SYS","NODE","NODE","PXB","PIX"])"));
  EXPECT_EQ(topo["gpus"][5]["place"]["numa_node"], 1);
  EXPECT_EQ(topo["gpus"][5]["vendor"], "NVIDIA");
  EXPECT_EQ(topo["gpus"][5]["class_id"], 0x0302);
  EXPECT_EQ(topo["error"], "");
  // The matrix row as printed.
  bool found = false;
  for (size_t at = out.find("\nmlx5_5 "); at != std::string::npos; at = std::string::npos) {
    std::string line = out.substr(at + 1, out.find('\n', at + 1) - at - 1);
    std::string words;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] != ' ' || (!words.empty() && words.back() != ' ')) words += line[i];
    }
    EXPECT_TRUE(Contains(words, "mlx5_5 SYS SYS SYS SYS PXB PIX NODE NODE ")) << line;
    found = true;
  }
  EXPECT_TRUE(found) << out;
}

TEST_F(RdmactlTopologyTest, EnvNamesTheGpusRailForEachTool) {
  StartWith(Fixture("gpu8-nic8-2socket.xml"));
  std::string out;
  ASSERT_EQ(Rdmactl({"env", "nccl", "--gpu", "3"}, &out), 0) << out;
  EXPECT_TRUE(Contains(out, "export NCCL_IB_HCA='=mlx5_3:1'\n")) << out;
  EXPECT_TRUE(Contains(out, "export NCCL_SOCKET_IFNAME='=ibp90s0'\n")) << out;
  EXPECT_TRUE(Contains(out, "# note: no RoCE GID known")) << out;
  EXPECT_FALSE(Contains(out, "NCCL_IB_GID_INDEX")) << out;
  ASSERT_EQ(Rdmactl({"env", "nvshmem", "--gpu", "0000:d9:00.0", "--rails", "2"}, &out), 0) << out;
  EXPECT_TRUE(Contains(out, "export NVSHMEM_HCA_LIST='mlx5_7:1,mlx5_6:1'\n")) << out;
  out.clear();
  ASSERT_EQ(Rdmactl({"--json", "env", "ucx", "--gpu", "91:00.0"}, &out), 0) << out;
  Json env = Json::parse(out, nullptr, false);
  ASSERT_FALSE(env.is_discarded()) << out;
  EXPECT_EQ(env["env"]["UCX_NET_DEVICES"], "mlx5_4:1") << out;
  EXPECT_EQ(env["plan"]["rails"][0]["path"], "PIX") << out;
  EXPECT_EQ(Rdmactl({"env", "mpi", "--gpu", "0"}, &out), 64) << out;
  EXPECT_EQ(Rdmactl({"env", "nccl", "--gpu", "8"}, &out), 1) << out;
  EXPECT_TRUE(Contains(out, "NOT_FOUND")) << out;
  // Explained, never recorded.
  EXPECT_EQ(TopoJson()["plans"].size(), 0u);
}

TEST_F(RdmactlTopologyTest, AFileThatCannotBeReadIsSaidAndAReloadReadsTheNewOne) {
  std::string bad = dir_.Write("broken.xml", "<topology version=\"2.0\"><object type=\"Mach");
  StartWith(bad);
  Json topo = TopoJson();
  EXPECT_TRUE(Contains(topo["error"].get<std::string>(), bad)) << topo.dump(2);
  EXPECT_EQ(topo["nics"].size(), 0u);
  std::string out;
  ASSERT_EQ(Rdmactl({"topo"}, &out), 0) << out;
  EXPECT_TRUE(Contains(out, "the last read failed")) << out;
  ClientOptions options;
  options.socket_path = socket_;
  auto client = Client::Open(options);
  ASSERT_TRUE(client.ok());
  auto events = (*client)->WatchEvents({EventKind::kConfigReloaded});
  ASSERT_TRUE(events.ok());
  dir_.Write("rdmad.toml", ConfigText(Rails(Fixture("nic2-host.xml"))));
  daemon_->Signal(SIGHUP);
  Event event;
  ASSERT_TRUE((*events)->Next(&event));
  topo = TopoJson();
  EXPECT_EQ(topo["error"], "") << topo.dump(2);
  EXPECT_EQ(topo["source"], Fixture("nic2-host.xml"));
  ASSERT_EQ(topo["nics"].size(), 2u);
  EXPECT_EQ(topo["gpus"].size(), 0u) << "the BMC's VGA is no GPU";
  EXPECT_EQ(topo["nics"][1]["to_nics"], Json::parse(R"(["PHB","X"])"));
  EXPECT_TRUE(Contains(daemon_->log(), "topology (" + Fixture("nic2-host.xml") + "): 2 RDMA"))
      << daemon_->log();
}

}  // namespace
}  // namespace rdmad
