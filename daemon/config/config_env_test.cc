// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ApplyEnvironment and the device filter strings it reads.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "daemon/config/config.h"

namespace rdmad {
namespace {

using ::testing::HasSubstr;

EnvMap MapEnv(const std::map<std::string, std::string>& vars) {
  return EnvMap({vars.begin(), vars.end()});
}

// The defaults with vars applied; fails the test on error.
Config WithEnv(std::map<std::string, std::string> vars) {
  Config config = DefaultConfig();
  Status status = ApplyEnvironment(MapEnv(std::move(vars)), &config);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return config;
}

// The error of applying vars to the defaults.
std::string EnvError(std::map<std::string, std::string> vars) {
  Config config = DefaultConfig();
  Status status = ApplyEnvironment(MapEnv(std::move(vars)), &config);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  return status.message();
}

TEST(ApplyEnvironmentTest, EmptyEnvironmentChangesNothing) {
  Config config = DefaultConfig();
  ASSERT_TRUE(ApplyEnvironment(EmptyEnv(), &config).ok());
  EXPECT_EQ(config, DefaultConfig());
}

TEST(ApplyEnvironmentTest, RdmadVariablesByKind) {
  Config c = WithEnv({{"RDMAD_QP_TIMEOUT", "20"},
                      {"RDMAD_ECHO_ENABLED", "no"},
                      {"RDMAD_GID_OVERLAY_NETDEVS", "veth*, br-*"},
                      {"RDMAD_DAEMON_ALLOWED_UIDS", "0,1000"},
                      {"RDMAD_GID_FAMILY", "ipv6"},
                      {"RDMAD_DAEMON_SOCKET_MODE", "0640"},
                      {"RDMAD_DAEMON_SOCKET_GROUP", ""},
                      {"RDMAD_GID_INDEX", "3"},
                      {"RDMAD_DEVICES_INCLUDE", "mlx5,=mlx5_0:1"}});
  EXPECT_EQ(c.qp.timeout, 20);
  EXPECT_FALSE(c.echo.enabled);
  EXPECT_EQ(c.gid.overlay_netdevs, (std::vector<std::string>{"veth*", "br-*"}));
  EXPECT_EQ(c.daemon.allowed_uids, (std::vector<int64_t>{0, 1000}));
  EXPECT_EQ(c.gid.family, "ipv6");
  EXPECT_EQ(c.daemon.socket_mode, 0640u);
  EXPECT_EQ(c.daemon.socket_group, "");
  EXPECT_EQ(c.gid.index, 3);
  EXPECT_EQ(c.devices.include, (std::vector<DeviceSpec>{{"mlx5", false, 0}, {"mlx5_0", true, 1}}));
}

TEST(ApplyEnvironmentTest, BoolsModesAndAuto) {
  EXPECT_FALSE(WithEnv({{"RDMAD_ECHO_ENABLED", "0"}}).echo.enabled);
  EXPECT_TRUE(WithEnv({{"RDMAD_ECHO_ENABLED", "TRUE"}}).echo.enabled);
  EXPECT_EQ(WithEnv({{"RDMAD_DAEMON_SOCKET_MODE", "0o600"}}).daemon.socket_mode, 0600u);
  EXPECT_EQ(WithEnv({{"RDMAD_GID_INDEX", "auto"}}).gid.index, -1);
  EXPECT_TRUE(WithEnv({{"RDMAD_GID_OVERLAY_NETDEVS", ""}}).gid.overlay_netdevs.empty());
}

TEST(ApplyEnvironmentTest, ErrorsNameTheVariable) {
  EXPECT_EQ(EnvError({{"RDMAD_QP_TIMEOUT", "40"}}),
            "RDMAD_QP_TIMEOUT=40: out of range; allowed 0..31");
  EXPECT_EQ(EnvError({{"RDMAD_QP_TIMEOUT", "soon"}}), "RDMAD_QP_TIMEOUT=soon: not an integer");
  EXPECT_EQ(EnvError({{"RDMAD_ECHO_ENABLED", "maybe"}}),
            "RDMAD_ECHO_ENABLED=maybe: not a boolean; use true/false, "
            "yes/no or 1/0");
  EXPECT_EQ(EnvError({{"RDMAD_GID_FAMILY", "ip4"}}),
            "RDMAD_GID_FAMILY=ip4: not allowed; allowed: auto, ipv4, ipv6");
  EXPECT_EQ(EnvError({{"RDMAD_DAEMON_SOCKET_MODE", "0666"}}),
            "RDMAD_DAEMON_SOCKET_MODE=0666: invalid: it grants access to "
            "others; clear the o bits (e.g. 0o660)");
  EXPECT_EQ(EnvError({{"RDMAD_DAEMON_ALLOWED_UIDS", "0,x"}}),
            "RDMAD_DAEMON_ALLOWED_UIDS=0,x: \"x\" is not an integer");
  EXPECT_EQ(EnvError({{"RDMAD_DEVICES_EXCLUDE", "mlx5_0:300"}}),
            "RDMAD_DEVICES_EXCLUDE=mlx5_0:300: \"mlx5_0:300\" is invalid: the "
            "port must be 1..255");
}

TEST(ApplyEnvironmentTest, AllErrorsAreReported) {
  EXPECT_EQ(EnvError({{"RDMAD_QP_TIMEOUT", "40"}, {"RDMAD_MTU_CAP", "1000"}}),
            "RDMAD_MTU_CAP=1000: not allowed; allowed: 256, 512, 1024, 2048, "
            "4096\nRDMAD_QP_TIMEOUT=40: out of range; allowed 0..31");
}

TEST(ApplyEnvironmentTest, RdmaDeviceWithCaretExcludesTheWholeList) {
  Config c = WithEnv({{"RDMA_DEVICE", "^mlx5_0:1,mlx5_1"}});
  EXPECT_TRUE(c.devices.include.empty());
  EXPECT_EQ(c.devices.exclude,
            (std::vector<DeviceSpec>{{"mlx5_0", false, 1}, {"mlx5_1", false, 0}}));
}

TEST(ApplyEnvironmentTest, RdmaDeviceReplacesTheFileLists) {
  Config config = DefaultConfig();
  config.devices.exclude = {{"bnxt", false, 0}};
  ASSERT_TRUE(ApplyEnvironment(MapEnv({{"RDMA_DEVICE", "=mlx5_0:1"}}), &config).ok());
  EXPECT_EQ(config.devices.include, (std::vector<DeviceSpec>{{"mlx5_0", true, 1}}));
  EXPECT_TRUE(config.devices.exclude.empty());
  EXPECT_EQ(EnvError({{"RDMA_DEVICE", "mlx5_0,^mlx5_1"}}),
            "RDMA_DEVICE=mlx5_0,^mlx5_1: \"^mlx5_1\" is invalid: \"^\" goes "
            "only at the start of the whole filter, and then excludes every "
            "listed device");
}

TEST(ApplyEnvironmentTest, RdmaMtu) {
  EXPECT_EQ(WithEnv({{"RDMA_MTU", "1024"}}).mtu.cap, 1024);
  EXPECT_EQ(WithEnv({{"RDMA_MTU", "1500"}}).mtu.cap, 1024);
  EXPECT_EQ(WithEnv({{"RDMA_MTU", "4096"}}).mtu.cap, 4096);
  EXPECT_EQ(EnvError({{"RDMA_MTU", "9000"}}), "RDMA_MTU=9000: out of range; allowed 256..4096");
}

TEST(ApplyEnvironmentTest, RdmaTimeoutAndQpType) {
  EXPECT_EQ(WithEnv({{"RDMA_TIMEOUT", "18"}}).qp.timeout, 18);
  EXPECT_EQ(WithEnv({{"RDMA_QP_TYPE", "RC"}}).qp.type, "RC");
  EXPECT_EQ(EnvError({{"RDMA_QP_TYPE", "UD"}}), "RDMA_QP_TYPE=UD: not allowed; allowed: RC");
  EXPECT_EQ(EnvError({{"RDMA_TIMEOUT", "32"}}), "RDMA_TIMEOUT=32: out of range; allowed 0..31");
}

TEST(ApplyEnvironmentTest, RdmadWinsOverRdma) {
  Config c = WithEnv({{"RDMA_TIMEOUT", "10"},
                      {"RDMAD_QP_TIMEOUT", "20"},
                      {"RDMA_MTU", "1024"},
                      {"RDMAD_MTU_CAP", "2048"},
                      {"RDMA_DEVICE", "mlx5_0"},
                      {"RDMAD_DEVICES", "^mlx5_1"}});
  EXPECT_EQ(c.qp.timeout, 20);
  EXPECT_EQ(c.mtu.cap, 2048);
  EXPECT_TRUE(c.devices.include.empty());
  EXPECT_EQ(c.devices.exclude, (std::vector<DeviceSpec>{{"mlx5_1", false, 0}}));
}

TEST(ApplyEnvironmentTest, PerKeyDeviceListsWinOverFilterStrings) {
  Config c = WithEnv({{"RDMAD_DEVICES", "mlx5_0"}, {"RDMAD_DEVICES_INCLUDE", "mlx5_2"}});
  EXPECT_EQ(c.devices.include, (std::vector<DeviceSpec>{{"mlx5_2", false, 0}}));
}

TEST(ParseDeviceFilterTest, Forms) {
  Config::Devices d;
  ASSERT_TRUE(ParseDeviceFilter("", &d).ok());
  EXPECT_TRUE(d.include.empty() && d.exclude.empty());
  ASSERT_TRUE(ParseDeviceFilter("mlx5, =rxe0:1", &d).ok());
  EXPECT_EQ(d.include, (std::vector<DeviceSpec>{{"mlx5", false, 0}, {"rxe0", true, 1}}));
  EXPECT_TRUE(d.exclude.empty());
  ASSERT_TRUE(ParseDeviceFilter("^=mlx5_0", &d).ok());
  EXPECT_TRUE(d.include.empty());
  EXPECT_EQ(d.exclude, (std::vector<DeviceSpec>{{"mlx5_0", true, 0}}));
}

TEST(ParseDeviceFilterTest, ErrorsLeaveTheOutputAlone) {
  Config::Devices d;
  d.include = {{"keep", false, 0}};
  EXPECT_EQ(ParseDeviceFilter("^", &d).message(), "\"^\" must be followed by devices");
  EXPECT_THAT(ParseDeviceFilter("a,,b", &d).message(), HasSubstr("\"\" is invalid"));
  EXPECT_THAT(ParseDeviceFilter("mlx5:x", &d).message(), HasSubstr("the port must be 1..255"));
  EXPECT_EQ(d.include, (std::vector<DeviceSpec>{{"keep", false, 0}}));
}

TEST(DeviceSpecTest, RoundTrip) {
  for (std::string text : {"mlx5", "=mlx5_0", "mlx5_1:2", "=bnxt_re0:255"}) {
    StatusOr<DeviceSpec> spec = ParseDeviceSpec(text);
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    EXPECT_EQ(FormatDeviceSpec(*spec), text);
  }
  EXPECT_FALSE(ParseDeviceSpec("mlx5:256").ok());
  EXPECT_FALSE(ParseDeviceSpec("=").ok());
  EXPECT_FALSE(ParseDeviceSpec("^mlx5").ok());
}

}  // namespace
}  // namespace rdmad
