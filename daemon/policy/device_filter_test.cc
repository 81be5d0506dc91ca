// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The device filter's NCCL_IB_HCA semantics, table by table. Filters are
// written as the user writes them and parsed by the config layer, so the
// tests also pin how "^" lands in devices.exclude.

#include "daemon/policy/device_filter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

namespace rdmad {
namespace {

DeviceSpec Spec(const std::string& text) {
  StatusOr<DeviceSpec> spec = ParseDeviceSpec(text);
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return spec.ok() ? *spec : DeviceSpec{};
}

// include: "mlx5,=rxe0"; exclude: "mlx5_1:2" (written without the "^").
Config::Devices Filter(const std::string& include, const std::string& exclude) {
  Config::Devices devices;
  if (!include.empty()) {
    Status status = ParseDeviceFilter(include, &devices);
    EXPECT_TRUE(status.ok()) << status.ToString();
  }
  if (!exclude.empty()) {
    Config::Devices excluded;
    Status status = ParseDeviceFilter("^" + exclude, &excluded);
    EXPECT_TRUE(status.ok()) << status.ToString();
    EXPECT_TRUE(excluded.include.empty());
    devices.exclude = excluded.exclude;
  }
  return devices;
}

TEST(DeviceFilterTest, CaretFilterStoresExcludes) {
  Config::Devices devices;
  ASSERT_TRUE(ParseDeviceFilter("^mlx5_1,=bnxt_re0:1", &devices).ok());
  EXPECT_TRUE(devices.include.empty());
  EXPECT_EQ(devices.exclude,
            (std::vector<DeviceSpec>{{"mlx5_1", false, 0}, {"bnxt_re0", true, 1}}));
}

struct SpecCase {
  std::string spec;
  std::string device;
  int port;
  bool matches;
};

TEST(DeviceFilterTest, DeviceSpecMatches) {
  for (const SpecCase& c : std::vector<SpecCase>{
           {"mlx5", "mlx5_0", 1, true},
           {"mlx5", "mlx5_0", 0, true},
           {"mlx5_1", "mlx5_10", 1, true},  // NCCL: a plain name is a prefix
           {"mlx5_0", "mlx5_0", 1, true},
           {"mlx5_0", "mlx5", 1, false},  // the name is longer than device
           {"lx5", "mlx5_0", 1, false},   // a prefix, not a substring
           {"=mlx5_1", "mlx5_1", 1, true},
           {"=mlx5_1", "mlx5_10", 1, false},
           {"=mlx5_1", "mlx5_", 1, false},
           {"mlx5_0:1", "mlx5_0", 1, true},
           {"mlx5_0:1", "mlx5_0", 2, false},
           {"mlx5_0:1", "mlx5_0", 0, true},  // the device has a port 1
           {"mlx5:2", "mlx5_3", 2, true},
           {"=mlx5_0:2", "mlx5_0", 2, true},
           {"=mlx5_0:2", "mlx5_0", 1, false},
           {"=mlx5_0:2", "mlx5_01", 2, false},
       }) {
    SCOPED_TRACE(c.spec + " vs " + c.device + " port " + std::to_string(c.port));
    EXPECT_EQ(DeviceSpecMatches(Spec(c.spec), c.device, c.port), c.matches);
  }
}

struct DecideCase {
  std::string name;
  std::string include;
  std::string exclude;
  std::string device;
  int port;
  bool selected;
  std::string reason;
};
void PrintTo(const DecideCase& c, std::ostream* os) { *os << c.name; }

class DeviceFilterDecideTest : public ::testing::TestWithParam<DecideCase> {};

TEST_P(DeviceFilterDecideTest, Decides) {
  const DecideCase& c = GetParam();
  Config::Devices filter = Filter(c.include, c.exclude);
  FilterDecision d = DecideDevice(filter, c.device, c.port);
  EXPECT_EQ(d.selected, c.selected);
  EXPECT_EQ(d.reason, c.reason);
  EXPECT_EQ(DeviceSelected(filter, c.device, c.port), c.selected);
  EXPECT_EQ(DescribeFilterDecision(filter, c.device, c.port), c.reason);
}

const char kEveryDevice[] = "selected: devices.include is empty (every device)";

INSTANTIATE_TEST_SUITE_P(
    Table, DeviceFilterDecideTest,
    ::testing::ValuesIn(std::vector<DecideCase>{
        {"EmptySelectsEverything", "", "", "rxe0", 1, true, kEveryDevice},
        {"EmptySelectsWholeDevice", "", "", "rxe0", 0, true, kEveryDevice},
        {"PrefixInclude", "mlx5", "", "mlx5_0", 1, true, "selected by devices.include \"mlx5\""},
        {"PrefixIncludeOtherVendor", "mlx5", "", "bnxt_re0", 1, false,
         "not matched by devices.include [\"mlx5\"]"},
        {"ExactInclude", "=mlx5_1", "", "mlx5_1", 1, true,
         "selected by devices.include \"=mlx5_1\""},
        {"ExactIncludeNotLongerName", "=mlx5_1", "", "mlx5_10", 1, false,
         "not matched by devices.include [\"=mlx5_1\"]"},
        {"PortIncludeOtherPort", "mlx5_0:1", "", "mlx5_0", 2, false,
         "not matched by devices.include [\"mlx5_0:1\"]"},
        {"PortIncludeWholeDevice", "mlx5_0:1", "", "mlx5_0", 0, true,
         "selected by devices.include \"mlx5_0:1\""},
        {"FirstMatchingIncludeIsNamed", "bnxt,mlx5_0:2,=rxe0,rxe", "", "rxe0", 1, true,
         "selected by devices.include \"=rxe0\""},
        {"NoMatchListsEveryInclude", "bnxt,=rxe0", "", "mlx5_0", 1, false,
         "not matched by devices.include [\"bnxt\", \"=rxe0\"]"},
        {"ExcludePrefix", "", "mlx5_1", "mlx5_1", 1, false,
         "excluded by devices.exclude \"mlx5_1\""},
        {"ExcludePrefixCoversLongerNames", "", "mlx5_1", "mlx5_11", 1, false,
         "excluded by devices.exclude \"mlx5_1\""},
        {"ExcludeLeavesOthers", "", "mlx5_1", "mlx5_0", 1, true, kEveryDevice},
        {"ExcludeWinsOverExactInclude", "=mlx5_1", "mlx5", "mlx5_1", 1, false,
         "excluded by devices.exclude \"mlx5\""},
        {"ExcludeWinsOverPrefixInclude", "mlx5", "=mlx5_1", "mlx5_1", 1, false,
         "excluded by devices.exclude \"=mlx5_1\""},
        {"IncludeStillAppliesBesideExclude", "mlx5", "=mlx5_1", "mlx5_0", 1, true,
         "selected by devices.include \"mlx5\""},
        {"ExcludedPort", "", "mlx5_0:2", "mlx5_0", 2, false,
         "excluded by devices.exclude \"mlx5_0:2\""},
        {"ExcludedPortLeavesOtherPort", "", "mlx5_0:2", "mlx5_0", 1, true, kEveryDevice},
        {"ExcludedPortLeavesTheDevice", "", "mlx5_0:2", "mlx5_0", 0, true, kEveryDevice},
        {"WholeDeviceExcludeCoversWholeDevice", "", "=mlx5_0", "mlx5_0", 0, false,
         "excluded by devices.exclude \"=mlx5_0\""},
        {"ExcludedPortButIncludedDevice", "=mlx5_0", "=mlx5_0:1", "mlx5_0", 1, false,
         "excluded by devices.exclude \"=mlx5_0:1\""},
    }),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace rdmad
