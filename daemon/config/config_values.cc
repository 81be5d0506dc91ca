// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Value checking, formatting and key suggestions of the settings table
// (declared in settings.h).

#include <algorithm>
#include <cctype>
#include <string>

#include "common/edit_distance.h"
#include "daemon/config/config_toml.h"
#include "daemon/config/settings.h"

namespace rdmad {
namespace {

using K = SettingKind;

std::string Join(const std::vector<std::string_view>& items, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += items[i];
  }
  return out;
}

std::string Octal(int64_t value) {
  std::string digits;
  uint64_t v = static_cast<uint64_t>(value);
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + (v & 7)));
    v >>= 3;
  } while (v != 0);
  return "0o" + digits;
}

std::string FormatInt(const Setting& setting, int64_t value) {
  if (setting.kind == K::kOctalMode) return Octal(value);
  return std::to_string(value);
}

// The inclusive range of an integer setting as users write it.
std::string RangeText(const Setting& setting) {
  if (setting.kind == K::kOctalMode) {
    return Octal(setting.min) + ".." + Octal(setting.max);
  }
  std::string range = std::to_string(setting.min) + ".." + std::to_string(setting.max);
  if (setting.kind == K::kIntOrAuto) return "\"auto\" or " + range;
  return range;
}

bool IsChoice(const Setting& setting, std::string_view text) {
  return std::find(setting.choices.begin(), setting.choices.end(), text) != setting.choices.end();
}

std::string NotAllowed(const Setting& setting) {
  if (setting.choices.empty()) return "not allowed; allowed: " + RangeText(setting);
  return "not allowed; allowed: " + Join(setting.choices, ", ");
}

// Whether a distance is small enough for a name of that length to be a typo.
bool CloseEnough(size_t distance, std::string_view name) {
  return distance <= std::max<size_t>(1, name.size() / 3);
}

}  // namespace

std::string CheckSettingItem(const Setting& setting, const SettingValue& item) {
  if (const auto* n = std::get_if<int64_t>(&item)) {
    if (!setting.choices.empty()) {
      if (!IsChoice(setting, std::to_string(*n))) return NotAllowed(setting);
    } else if (*n < setting.min || *n > setting.max) {
      return "out of range; allowed " + RangeText(setting);
    }
  } else if (const auto* s = std::get_if<std::string>(&item)) {
    if (setting.kind == K::kIntOrAuto && *s != "auto") {
      return NotAllowed(setting);
    }
    if (setting.kind == K::kEnum && !IsChoice(setting, *s)) {
      return NotAllowed(setting);
    }
  }
  return setting.check == nullptr ? std::string() : setting.check(item);
}

std::string QuoteToml(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          out += "\\u00";
          out += kHex[(c >> 4) & 0xf];
          out += kHex[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string FormatSettingValue(const Setting& setting, const SettingValue& value) {
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const auto* n = std::get_if<int64_t>(&value)) {
    return FormatInt(setting, *n);
  }
  if (const auto* s = std::get_if<std::string>(&value)) return QuoteToml(*s);
  std::vector<std::string> items;
  if (const auto* l = std::get_if<std::vector<std::string>>(&value)) {
    for (const std::string& s : *l) items.push_back(QuoteToml(s));
  } else if (const auto* l = std::get_if<std::vector<int64_t>>(&value)) {
    for (int64_t n : *l) items.push_back(FormatInt(setting, n));
  }
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    out += (i > 0 ? ", " : "") + items[i];
  }
  return out + "]";
}

std::string SuggestKey(std::string_view key) {
  size_t dot = key.find('.');
  std::string_view section =
      dot == std::string_view::npos ? std::string_view() : key.substr(0, dot);
  std::string_view name = dot == std::string_view::npos ? key : key.substr(dot + 1);
  std::string best;
  size_t best_score = SIZE_MAX;
  for (const Setting& s : Settings()) {
    size_t d = EditDistance(name, s.name());
    if (!CloseEnough(d, name)) continue;
    size_t score = 2 * d + (s.section() == section ? 0 : 1);
    if (score < best_score) {
      best_score = score;
      best = std::string(s.key);
    }
  }
  return best;
}

std::string SuggestSection(std::string_view name) {
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const SettingSection& s : SettingSections()) {
    size_t d = EditDistance(name, s.name);
    if (CloseEnough(d, name) && d < best_distance) {
      best_distance = d;
      best = std::string(s.name);
    }
  }
  return best;
}

StatusOr<SettingValue> DefaultSettingValue(const Setting& setting) {
  if (setting.default_toml.empty()) {
    return Status::Internal(std::string(setting.key) + " has no default");
  }
  ConfigIssue issue;
  std::optional<toml::table> table =
      ParseTomlText("value = " + std::string(setting.default_toml), "<default>", &issue);
  const toml::node* node = table ? table->get("value") : nullptr;
  if (node == nullptr) {
    return Status::Internal(std::string(setting.key) + ": bad default: " + issue.message);
  }
  std::vector<ConfigIssue> issues;
  std::optional<SettingValue> value = DecodeTomlSetting(setting, setting.key, *node, &issues);
  if (!value) {
    return Status::Internal("bad default: " + issues.front().message);
  }
  return *value;
}

std::string SettingTypeName(const Setting& setting) {
  switch (setting.kind) {
    case K::kBool: return "boolean";
    case K::kInt: return "integer";
    case K::kString: return "string";
    case K::kEnum: return "string (enum)";
    case K::kStringList: return "list of strings";
    case K::kIntList: return "list of integers";
    case K::kOctalMode: return "octal mode";
    case K::kIntOrAuto: return "integer or \"auto\"";
  }
  return "";
}

std::string SettingAllowedText(const Setting& setting) {
  std::string text;
  if (!setting.choices.empty()) {
    text = Join(setting.choices, ", ");
  } else if (setting.kind == K::kInt || setting.kind == K::kIntList ||
             setting.kind == K::kOctalMode || setting.kind == K::kIntOrAuto) {
    text = RangeText(setting);
  } else if (setting.kind == K::kBool) {
    text = "true, false";
  }
  if (!setting.check_doc.empty()) {
    text += (text.empty() ? "" : "; ") + std::string(setting.check_doc);
  }
  return text;
}

}  // namespace rdmad
