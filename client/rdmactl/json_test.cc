// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/json.h"

#include <fstream>
#include <regex>
#include <sstream>

#include "gtest/gtest.h"

namespace rdmactl {
namespace {

std::vector<std::string> Keys(const Json& json) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : json.items()) keys.push_back(key);
  return keys;
}

// The member names of `struct name` in rdmad/devices.h, in order: the JSON
// keys must be exactly these (the lab compares them with ibv_devinfo -v).
std::vector<std::string> StructMembers(const std::string& name) {
  std::ifstream in(RDMAD_SOURCE_DIR "/client/include/rdmad/devices.h");
  std::stringstream text;
  text << in.rdbuf();
  std::string header = text.str();
  size_t start = header.find("struct " + name + " {");
  size_t end = header.find("\n};", start);
  EXPECT_NE(start, std::string::npos) << name;
  std::string body = header.substr(start, end - start);
  std::regex member(R"(\n  [A-Za-z_0-9:<>]+ ([a-z_0-9]+)( = [^;]+)?;)");
  std::vector<std::string> names;
  for (std::sregex_iterator it(body.begin(), body.end(), member), stop; it != stop; ++it) {
    names.push_back((*it)[1]);
  }
  return names;
}

rdmad::Device SampleDevice() {
  rdmad::Device d;
  d.name = "mlx5_0";
  d.numa_node = -1;
  rdmad::Port p;
  p.port = 1;
  p.rate_gbps = 100;
  p.gids = {{3, "0000:0000:0000:0000:0000:ffff:0a01:0005", "RoCE v2", "eth0", "10.1.0.5"}};
  d.ports = {p};
  return d;
}

TEST(JsonTest, DeviceKeysAreTheStructMemberNames) {
  Json device = RecordJson(SampleDevice());
  EXPECT_EQ(Keys(device), StructMembers("Device"));
  EXPECT_EQ(Keys(device["ports"][0]), StructMembers("Port"));
  EXPECT_EQ(Keys(device["ports"][0]["gids"][0]), StructMembers("Gid"));
  EXPECT_EQ(device["numa_node"], -1);
  EXPECT_EQ(device["ports"][0]["rate_gbps"], 100.0);
  EXPECT_EQ(device["ports"][0]["gids"][0]["ip"], "10.1.0.5");
}

TEST(JsonTest, TheStructParserSeesEveryMember) {
  EXPECT_EQ(StructMembers("Device").size(), 18u);
  EXPECT_EQ(StructMembers("Port").size(), 15u);
  EXPECT_EQ(StructMembers("Gid").size(), 5u);
}

TEST(JsonTest, PathKeysArePeerThenTheStructMemberNames) {
  rdmad::Path path;
  path.reasons = {"a", "b"};
  Json json = PathJson("10.1.0.9", path);
  std::vector<std::string> expected{"peer"};
  for (const std::string& m : StructMembers("Path")) expected.push_back(m);
  EXPECT_EQ(Keys(json), expected);
  EXPECT_EQ(Keys(json["qp"]), StructMembers("QpAttributes"));
  EXPECT_EQ(json["reasons"], Json::array({"a", "b"}));
}

TEST(JsonTest, GidsAreFlattenedWithDeviceAndPort) {
  Json json = GidsJson({SampleDevice()});
  ASSERT_EQ(json["gids"].size(), 1u);
  EXPECT_EQ(Keys(json["gids"][0]),
            (std::vector<std::string>{"device", "port", "index", "gid", "type", "netdev", "ip"}));
  EXPECT_EQ(json["gids"][0]["device"], "mlx5_0");
  EXPECT_EQ(json["gids"][0]["index"], 3);
  EXPECT_EQ(GidsJson({}), Json::parse(R"({"gids":[]})"));
}

TEST(JsonTest, EmptyListsStayLists) {
  EXPECT_EQ(DevicesJson({}).dump(), R"({"devices":[]})");
  EXPECT_EQ(StatusJson({}, {})["devices"], Json::array());
}

TEST(JsonTest, TcpFallbackNamesPeerAndReason) {
  EXPECT_EQ(TcpFallbackJson("192.0.2.2", "no RDMA devices; channels will use TCP").dump(),
            R"({"peer":"192.0.2.2","transport":"TCP","reason":"no RDMA devices; channels )"
            R"(will use TCP"})");
}

TEST(JsonTest, StatusSummarisesDevices) {
  rdmad::DaemonStatus s;
  s.device_count = 1;
  Json json = StatusJson(s, {SampleDevice()});
  EXPECT_EQ(json["device_count"], 1);
  EXPECT_EQ(json["devices"][0]["name"], "mlx5_0");
  EXPECT_EQ(json["devices"][0]["ports"], 1);
  EXPECT_EQ(json["devices"][0]["active_ports"], 0);
}

TEST(JsonTest, EventsCarryDeviceAndPort) {
  rdmad::Event e;
  e.kind = rdmad::EventKind::kGidAdded;
  e.device = "rxe0";
  e.port = 1;
  Json json = RecordJson(e);
  EXPECT_EQ(json["kind"], "gid-added");
  EXPECT_EQ(json["device"], "rxe0");
  EXPECT_EQ(json["port"], 1);
}

TEST(JsonTest, DumpReplacesBytesThatAreNotUtf8) {
  rdmad::Gid gid;
  gid.netdev = "eth\xff";
  EXPECT_EQ(DumpJson(RecordJson(gid), -1),
            "{\"index\":0,\"gid\":\"\",\"type\":\"\",\"netdev\":\"eth\xef\xbf\xbd\",\"ip\":\"\"}");
}

TEST(JsonTest, CountersAreAnObject) {
  Json json = CountersJson("mlx5_0", 1, {{"symbol_error", 0}});
  EXPECT_EQ(json.dump(), R"({"device":"mlx5_0","port":1,"counters":{"symbol_error":0}})");
}

}  // namespace
}  // namespace rdmactl
