// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Fuzz target: the config file, as rdmad reads it at start, on SIGHUP and
// for --check-config: the bytes are the TOML text (ParseConfig, then
// ValidateConfig). Everything after a line "#!env" (a TOML comment) is
// also read as NAME=VALUE lines, the environment overrides applied on top
// (ApplyEnvironment: RDMAD_* and the RDMA_* device filters). Every outcome
// is a config or INVALID_ARGUMENT naming the place, the same each time.

#include <map>
#include <string>

#include "daemon/config/config.h"
#include "tests/fuzz/fuzz_support.h"

using namespace rdmad;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInit();
  std::string_view text(reinterpret_cast<const char*>(data), size);

  std::map<std::string, std::string, std::less<>> env;
  size_t marker = text.find("#!env\n");
  if (marker != std::string_view::npos) {
    std::string_view rest = text.substr(marker + 6);
    while (!rest.empty() && env.size() < 16) {
      size_t end = rest.find('\n');
      std::string_view line = rest.substr(0, end);
      size_t eq = line.find('=');
      if (eq != std::string_view::npos) env[std::string(line.substr(0, eq))] = line.substr(eq + 1);
      if (end == std::string_view::npos) break;
      rest = rest.substr(end + 1);
    }
  }

  StatusOr<Config> parsed = ParseConfig(text, "fuzz.toml");
  fuzz::CheckStatus(parsed.status());
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.status().code() == StatusCode::kInvalidArgument);
    FUZZ_CHECK(parsed.status().message().find("fuzz.toml") != std::string::npos);
    return 0;
  }
  StatusOr<Config> again = ParseConfig(text, "fuzz.toml");
  FUZZ_CHECK(again.ok() && again.value() == parsed.value());
  Config config = std::move(parsed).value();
  fuzz::CheckStatus(ValidateConfig(config));

  Status applied = ApplyEnvironment(EnvMap(env), &config);
  fuzz::CheckStatus(applied);
  if (applied.ok()) fuzz::CheckStatus(ValidateConfig(config));
  for (const auto& [name, value] : env) {
    Config::Devices devices;
    fuzz::CheckStatus(ParseDeviceFilter(value, &devices));
    for (const DeviceSpec& spec : devices.include) {
      auto back = ParseDeviceSpec(FormatDeviceSpec(spec));
      FUZZ_CHECK_MSG(back.ok() && back.value() == spec, FormatDeviceSpec(spec));
    }
  }
  return 0;
}
