// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/rdmactl/doctor_checks.h"

#include <gtest/gtest.h>

#include <string>

#include "client/rdmactl/doctor_host.h"
#include "daemon/config/config.h"

namespace rdmactl {
namespace {

// A healthy host: rxe0 on eth1 (192.0.2.1, MTU 9000), everything open.
HostFacts GoodHost() {
  HostFacts h;
  h.modules = {{"ib_uverbs", true}, {"rdma_ucm", true}};
  h.dev_dir = true;
  h.dev_nodes = {{"uverbs0", ""}, {"rdma_cm", ""}};
  h.socket_reached = true;
  h.socket_path = "/run/rdmad/rdmad.sock";
  h.netdev_addresses = {{"eth1", {"192.0.2.1"}}};
  return h;
}

DaemonFacts GoodDaemon() {
  DaemonFacts d;
  d.status.config_file = "/etc/rdmad/rdmad.toml";
  d.status.config_generation = 3;
  d.status.config_loaded_unix_ms = 1'000'000;
  d.bytes_per_channel = 192 << 10;
  rdmad::Device dev;
  dev.name = "rxe0";
  rdmad::Port p;
  p.port = 1;
  p.state = "ACTIVE";
  p.phys_state = "LinkUp";
  p.link_layer = "Ethernet";
  p.netdev = "eth1";
  p.netdev_mtu = 9000;
  p.active_mtu = 4096;
  rdmad::Gid g;
  g.ip = "192.0.2.1";
  g.type = "RoCE v2";
  p.gids = {g};
  dev.ports = {p};
  d.devices = {dev};
  return d;
}

CheckResult Named(const std::vector<CheckResult>& checks, const std::string& name) {
  for (const CheckResult& c : checks) {
    if (c.name == name) return c;
  }
  ADD_FAILURE() << "no check " << name;
  return {"none", CheckLevel::kFail, "no such check", ""};
}

// Without the daemon's plan the doctor sizes a channel with the config's
// defaults: the same numbers as the settings table's (daemon/config).
TEST(DoctorChecksTest, TheDefaultChannelIsSizedWithTheConfigsDefaults) {
  rdmad::Config defaults;
  EXPECT_EQ(DefaultPinnedPerChannel(),
            PinnedPerChannel(uint32_t(defaults.qp.send_depth), uint32_t(defaults.qp.recv_depth),
                             uint32_t(defaults.qp.slot_size)));
}

TEST(DoctorChecksTest, AHealthyHostIsOkEverywhere) {
  DaemonFacts d = GoodDaemon();
  auto checks = CheckHost(GoodHost(), &d, 16);
  EXPECT_EQ(DoctorExitCode(checks), 0) << RenderChecks(checks);
  EXPECT_EQ(checks.size(), 9u);
  EXPECT_NE(RenderChecks(checks).find("all checks ok"), std::string::npos);
}

TEST(DoctorChecksTest, EachBrokenThingIsNamedWithItsFix) {
  DaemonFacts d = GoodDaemon();
  HostFacts h = GoodHost();
  h.modules["ib_uverbs"] = false;
  CheckResult modules = Named(CheckHost(h, &d, 16), "modules");
  EXPECT_EQ(modules.level, CheckLevel::kFail);
  EXPECT_NE(modules.fix.find("modprobe ib_uverbs"), std::string::npos);

  h = GoodHost();
  h.missing_providers = {"mlx5_ib"};
  EXPECT_EQ(Named(CheckHost(h, &d, 16), "modules").fix, "modprobe mlx5_ib");

  h = GoodHost();
  h.dev_nodes["uverbs0"] = "Permission denied";
  CheckResult dev = Named(CheckHost(h, &d, 16), "dev-access");
  EXPECT_EQ(dev.level, CheckLevel::kFail);
  EXPECT_NE(dev.detail.find("/dev/infiniband/uverbs0 (Permission denied)"), std::string::npos);

  h = GoodHost();
  h.memlock = 64 << 10;  // not one 192 KiB channel
  EXPECT_EQ(Named(CheckHost(h, &d, 16), "memlock").level, CheckLevel::kFail);
  h.memlock = 1 << 20;  // 5 of 16
  CheckResult memlock = Named(CheckHost(h, &d, 16), "memlock");
  EXPECT_EQ(memlock.level, CheckLevel::kWarn);
  EXPECT_NE(memlock.detail.find("5 channels fit, 16 wanted"), std::string::npos) << memlock.detail;

  DaemonFacts down = GoodDaemon();
  down.devices[0].ports[0].state = "DOWN";
  down.devices[0].ports[0].phys_state = "Disabled";
  CheckResult ports = Named(CheckHost(GoodHost(), &down, 16), "ports");
  EXPECT_EQ(ports.level, CheckLevel::kFail);
  EXPECT_NE(ports.detail.find("rxe0 port 1 DOWN (Disabled)"), std::string::npos);

  h = GoodHost();
  h.netdev_addresses["eth1"].push_back("2001:db8::1");  // an address without its GID
  CheckResult gids = Named(CheckHost(h, &d, 16), "gids");
  EXPECT_EQ(gids.level, CheckLevel::kWarn);
  EXPECT_NE(gids.detail.find("no RoCE v2 GID for 2001:db8::1 on eth1 (rxe0)"), std::string::npos);
  h.netdev_addresses["eth1"] = {"192.0.2.9"};  // none of them has one
  EXPECT_EQ(Named(CheckHost(h, &d, 16), "gids").level, CheckLevel::kFail);

  DaemonFacts small = GoodDaemon();
  small.devices[0].ports[0].netdev_mtu = 1500;
  small.devices[0].ports[0].active_mtu = 1024;
  EXPECT_EQ(Named(CheckHost(GoodHost(), &small, 16), "mtu").level, CheckLevel::kWarn);
  small.devices[0].ports[0].active_mtu = 4096;  // more than 1500 carries
  EXPECT_EQ(Named(CheckHost(GoodHost(), &small, 16), "mtu").level, CheckLevel::kFail);

  h = GoodHost();
  h.roce_ecn["eth1"] = false;
  EXPECT_EQ(Named(CheckHost(h, &d, 16), "ecn").level, CheckLevel::kWarn);

  h = GoodHost();
  h.socket_reached = false;
  h.socket_group = "rdma";
  h.socket_error = "Permission denied";
  CheckResult socket = Named(CheckHost(h, nullptr, 16), "socket");
  EXPECT_EQ(socket.level, CheckLevel::kFail);
  EXPECT_EQ(socket.fix, "sudo usermod -aG rdma $USER, then log in again");

  DaemonFacts failed = GoodDaemon();
  failed.status.config_reload_error = "/etc/rdmad/rdmad.toml:5: qp.timeout: 99 is above 31\nmore";
  CheckResult config = Named(CheckHost(GoodHost(), &failed, 16), "config");
  EXPECT_EQ(config.level, CheckLevel::kWarn);
  EXPECT_NE(config.detail.find("rdmad.toml:5: qp.timeout"), std::string::npos);
  h = GoodHost();
  h.config_mtime_unix_ms = d.status.config_loaded_unix_ms + 60'000;
  EXPECT_EQ(Named(CheckHost(h, &d, 16), "config").fix, "systemctl reload rdmad");
}

TEST(DoctorChecksTest, ThePeersChecks) {
  PeerFacts p;
  p.peer = "node-b";
  EXPECT_EQ(Named(CheckPeer(p), "peer").level, CheckLevel::kFail);  // unknown
  rdmad::PeerInfo info;
  info.name = "node-b";
  info.address = "192.0.2.2:7581";
  info.state = rdmad::PeerState::kUp;
  info.remote_version = "0.2.0";
  info.remote_protocol = "1.0";
  info.clock_offset_ms = -2500;
  p.info = info;
  rdmad::Path path;
  path.device = "rxe0";
  path.local_active_mtu = 4096;
  path.peer_active_mtu = 1024;
  p.path = path;
  p.channel = rdmad::Status::Ok();
  p.transport = "RDMA";
  p.write = rdmad::Status::Ok();
  auto checks = CheckPeer(p);
  EXPECT_EQ(Named(checks, "peer").level, CheckLevel::kOk);
  EXPECT_EQ(Named(checks, "clock").level, CheckLevel::kWarn);
  EXPECT_NE(Named(checks, "clock").detail.find("2500 ms behind"), std::string::npos);
  EXPECT_EQ(Named(checks, "path").level, CheckLevel::kWarn);  // the MTUs differ
  EXPECT_EQ(Named(checks, "channel").level, CheckLevel::kOk);
  EXPECT_EQ(Named(checks, "write").level, CheckLevel::kOk);
  EXPECT_EQ(DoctorExitCode(checks), 1);
  p.write = rdmad::Status::Unavailable("RDMA WRITE failed: retry exceeded");
  EXPECT_EQ(DoctorExitCode(CheckPeer(p)), 2);
  p.info->state = rdmad::PeerState::kVersionMismatch;
  p.info->last_error = "peer speaks protocol 2.0";
  checks = CheckPeer(p);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_EQ(checks[0].fix, "run rdmad of the same major version on both hosts");
  Json json = ChecksJson(checks);
  EXPECT_EQ(json["status"], "fail");
  EXPECT_EQ(json["exit_code"], 2);
  EXPECT_EQ(json["checks"][0]["name"], "peer");
}

TEST(DoctorChecksTest, ProvidersOfTheCommonNics) {
  EXPECT_EQ(RdmaProviderOf("mlx5_core"), "mlx5_ib");
  EXPECT_EQ(RdmaProviderOf("ice"), "irdma");
  EXPECT_EQ(RdmaProviderOf("virtio_net"), "");
}

}  // namespace
}  // namespace rdmactl
