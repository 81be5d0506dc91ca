// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/config/config_toml.h"

#include <exception>
#include <utility>

namespace rdmad {
namespace {

using K = SettingKind;

bool IsList(K kind) { return kind == K::kStringList || kind == K::kIntList; }

bool HasStringItems(K kind) {
  return kind == K::kString || kind == K::kEnum || kind == K::kStringList;
}

bool HasIntItems(K kind) {
  return kind == K::kInt || kind == K::kOctalMode || kind == K::kIntList || kind == K::kIntOrAuto;
}

std::string_view ExpectedText(K kind) {
  switch (kind) {
    case K::kBool: return "a boolean";
    case K::kInt:
    case K::kOctalMode: return "an integer";
    case K::kString:
    case K::kEnum: return "a string";
    case K::kStringList: return "an array of strings";
    case K::kIntList: return "an array of integers";
    case K::kIntOrAuto: return "an integer or \"auto\"";
  }
  return "a value";
}

// The expected type of one list item (or of the scalar itself).
std::string_view ExpectedItemText(K kind) {
  if (kind == K::kStringList) return "a string";
  if (kind == K::kIntList) return "an integer";
  return ExpectedText(kind);
}

// The node as a raw value of the setting's item type; nullopt on a type
// mismatch. kIntOrAuto takes strings too; only "auto" passes its check.
std::optional<SettingValue> ItemValue(K kind, const toml::node& node) {
  if (kind == K::kBool) {
    if (const auto* b = node.as_boolean()) return SettingValue(b->get());
    return std::nullopt;
  }
  if (HasStringItems(kind) || kind == K::kIntOrAuto) {
    if (const auto* s = node.as_string()) return SettingValue(s->get());
  }
  if (HasIntItems(kind)) {
    if (const auto* i = node.as_integer()) return SettingValue(i->get());
  }
  return std::nullopt;
}

// Decodes and checks one scalar or list item.
std::optional<SettingValue> DecodeItem(const Setting& setting, const std::string& display_key,
                                       const toml::node& node, std::vector<ConfigIssue>* issues) {
  std::optional<SettingValue> value = ItemValue(setting.kind, node);
  if (!value) {
    AddIssue(node.source(),
             display_key + ": expected " + std::string(ExpectedItemText(setting.kind)) + ", got " +
                 std::string(TomlTypeName(node)),
             issues);
    return std::nullopt;
  }
  std::string reason = CheckSettingItem(setting, *value);
  if (!reason.empty()) {
    AddIssue(node.source(),
             display_key + " = " + FormatSettingValue(setting, *value) + " is " + reason, issues);
    return std::nullopt;
  }
  return value;
}

std::optional<SettingValue> DecodeList(const Setting& setting, std::string_view display_key,
                                       const toml::array& array, std::vector<ConfigIssue>* issues) {
  std::vector<std::string> strings;
  std::vector<int64_t> ints;
  bool ok = true;
  for (size_t i = 0; i < array.size(); ++i) {
    std::string item_key = std::string(display_key) + "[" + std::to_string(i) + "]";
    std::optional<SettingValue> item = DecodeItem(setting, item_key, array[i], issues);
    if (!item) {
      ok = false;
    } else if (const auto* s = std::get_if<std::string>(&*item)) {
      strings.push_back(*s);
    } else if (const auto* n = std::get_if<int64_t>(&*item)) {
      ints.push_back(*n);
    }
  }
  if (!ok) return std::nullopt;
  if (setting.kind == K::kStringList) return SettingValue(std::move(strings));
  return SettingValue(std::move(ints));
}

}  // namespace

void AddIssue(const toml::source_region& where, std::string message,
              std::vector<ConfigIssue>* issues) {
  issues->push_back({where.begin.line, where.begin.column, std::move(message)});
}

std::string_view TomlTypeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a floating-point number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

std::optional<SettingValue> DecodeTomlSetting(const Setting& setting, std::string_view display_key,
                                              const toml::node& node,
                                              std::vector<ConfigIssue>* issues) {
  if (!IsList(setting.kind)) {
    return DecodeItem(setting, std::string(display_key), node, issues);
  }
  const toml::array* array = node.as_array();
  if (array == nullptr) {
    AddIssue(node.source(),
             std::string(display_key) + ": expected " + std::string(ExpectedText(setting.kind)) +
                 ", got " + std::string(TomlTypeName(node)),
             issues);
    return std::nullopt;
  }
  return DecodeList(setting, display_key, *array, issues);
}

std::optional<toml::table> ParseTomlText(std::string_view text, std::string_view source_name,
                                         ConfigIssue* issue) {
  try {
    return toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    issue->line = e.source().begin.line;
    issue->column = e.source().begin.column;
    issue->message = std::string(e.description());
  } catch (const std::exception& e) {
    issue->line = 1;
    issue->column = 1;
    issue->message = std::string("cannot parse: ") + e.what();
  }
  return std::nullopt;
}

}  // namespace rdmad
