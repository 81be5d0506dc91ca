// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Decoding of TOML nodes into settings values, shared by the file parser and
// DefaultSettingValue. Internal to the config code.
//
// Thread safety: stateless functions, safe from any thread.

#ifndef RDMAD_DAEMON_CONFIG_CONFIG_TOML_H_
#define RDMAD_DAEMON_CONFIG_CONFIG_TOML_H_

#include <toml++/toml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/settings.h"

namespace rdmad {

// One problem found in a file, at a 1-based line and column.
struct ConfigIssue {
  uint32_t line = 0;
  uint32_t column = 0;
  std::string message;  // without the "file:line:column: " prefix
};

// Appends an issue at the start of where.
void AddIssue(const toml::source_region& where, std::string message,
              std::vector<ConfigIssue>* issues);

// "an integer", "a string", ... for messages.
std::string_view TomlTypeName(const toml::node& node);

// Decodes node as the setting's value and validates it (range, choices,
// check; each list item on its own). display_key names the value in
// messages ("qp.timeout", "peers[0].name"). On error appends issues at the
// offending value or item and returns nullopt.
std::optional<SettingValue> DecodeTomlSetting(const Setting& setting, std::string_view display_key,
                                              const toml::node& node,
                                              std::vector<ConfigIssue>* issues);

// Parses TOML text without throwing: the table, or sets *issue.
std::optional<toml::table> ParseTomlText(std::string_view text, std::string_view source_name,
                                         ConfigIssue* issue);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_CONFIG_CONFIG_TOML_H_
