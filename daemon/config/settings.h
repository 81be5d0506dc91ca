// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The settings table: the one place every configuration key is described.
// The TOML parser, the environment overrides, DefaultConfig(), the shipped
// etc/rdmad/rdmad.toml and the table in docs/configuration.md all derive
// from it, so a key is added, renamed or re-ranged here and nowhere else.
//
// Thread safety: the table is immutable after first use (a function-local
// static) and may be read from any thread.

#ifndef RDMAD_DAEMON_CONFIG_SETTINGS_H_
#define RDMAD_DAEMON_CONFIG_SETTINGS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "daemon/config/config.h"
#include "rdmad/status.h"

namespace rdmad {

// How a setting is written in TOML and in the environment.
enum class SettingKind {
  kBool,        // true / false
  kInt,         // integer in [min, max], or one of choices when given
  kString,      // any string accepted by check
  kEnum,        // string, one of choices
  kStringList,  // array of strings, each accepted by check
  kIntList,     // array of integers, each in [min, max]
  kOctalMode,   // integer permission bits in [min, max], written 0o660
  kIntOrAuto,   // "auto" (stored as -1) or an integer in [min, max]
};

// A decoded value. Integers and modes are int64_t, "auto" of kIntOrAuto is
// the string "auto" (stored into Config as -1), lists are vectors.
using SettingValue =
    std::variant<bool, int64_t, std::string, std::vector<std::string>, std::vector<int64_t>>;

// Extra validation of one scalar (or one list item): returns "" when the
// value is acceptable, else a reason phrased to follow "is", e.g.
// "invalid: it grants access to others".
using SettingCheck = std::string (*)(const SettingValue& value);

// Stores an already validated value into the config. Settings of an array
// section ([[peers]], [[pool]]) store into that array's last entry.
using SettingStore = void (*)(const SettingValue& value, Config* config);

// One configuration key. Contract: help is one line; default_toml is the
// canonical TOML literal of the default (FormatSettingValue of the default
// reproduces it) and passes validation; required settings have no default.
struct Setting {
  std::string_view key;  // dotted: "qp.timeout"
  SettingKind kind;
  std::string_view default_toml = {};  // TOML literal; "" when required
  std::string_view help;               // one line
  std::string_view env = {};           // RDMAD_QP_TIMEOUT; "" when none
  int64_t min = 0;                     // integer kinds: inclusive range
  int64_t max = 0;
  std::vector<std::string_view> choices = {};  // kEnum, or kInt value set
  SettingCheck check = nullptr;                // extra check of each scalar / list item
  std::string_view check_doc = {};             // what check accepts, for the docs
  bool required = false;                       // only in array sections
  std::string_view example = {};               // TOML literal for array-section examples
  SettingStore store = nullptr;

  std::string_view section() const { return key.substr(0, key.find('.')); }
  std::string_view name() const { return key.substr(key.find('.') + 1); }
};

// A top-level table of the file. Array sections ([[peers]], [[pool]]) hold
// any number of entries and have no defaults or environment variables.
struct SettingSection {
  std::string_view name;
  std::string_view help;  // one line
  bool array = false;
  void (*add_entry)(Config* config) = nullptr;  // array sections: append one
};

// An environment variable that is not simply RDMAD_<KEY> of one setting.
struct EnvAlias {
  enum class Kind {
    kSetting,       // parsed like the setting named by key
    kMtu,           // 256..4096, rounded down to a valid mtu.cap
    kDeviceFilter,  // ParseDeviceFilter string; replaces devices.*
  };
  std::string_view name;  // "RDMA_TIMEOUT"
  Kind kind;
  std::string_view key;   // the setting it sets ("devices" for filters)
  std::string_view help;  // one line
};

// Every setting, in file order (section by section).
const std::vector<Setting>& Settings();

// Every section, in file order.
const std::vector<SettingSection>& SettingSections();

// The extra variables, in the order they are applied (RDMA_* first).
const std::vector<EnvAlias>& EnvAliases();

// The setting named by a dotted key, or nullptr.
const Setting* FindSetting(std::string_view key);

// The section of that name, or nullptr.
const SettingSection* FindSection(std::string_view name);

// The closest known key to an unknown dotted key when it is close enough to
// be a likely typo (the same name in another section counts as close), else
// "". Case is ignored.
std::string SuggestKey(std::string_view key);

// The closest section name to an unknown one, or "".
std::string SuggestSection(std::string_view name);

// Checks one scalar value or one list item against the setting's range,
// choices and check. Returns "" or a reason that follows "is", e.g.
// "out of range; allowed 0..31".
std::string CheckSettingItem(const Setting& setting, const SettingValue& item);

// The value as a TOML literal: 14, "RC", 0o660, ["a", "b"], "auto".
std::string FormatSettingValue(const Setting& setting, const SettingValue& value);

// A TOML basic string literal with escapes: "a\"b".
std::string QuoteToml(std::string_view text);

// The default value, decoded from default_toml. INTERNAL if the table is
// inconsistent (tests guarantee it is not).
StatusOr<SettingValue> DefaultSettingValue(const Setting& setting);

// The type and allowed-values texts shown in docs: "integer", "0..31".
std::string SettingTypeName(const Setting& setting);
std::string SettingAllowedText(const Setting& setting);

// The full text of the shipped etc/rdmad/rdmad.toml.
std::string RenderConfigTemplate();

// The Markdown settings table of docs/configuration.md (without markers).
std::string RenderSettingsDocTable();

}  // namespace rdmad

#endif  // RDMAD_DAEMON_CONFIG_SETTINGS_H_
