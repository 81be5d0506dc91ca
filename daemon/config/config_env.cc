// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ApplyEnvironment: the RDMA_* variables of the Ollama RDMA guide first, then
// RDMAD_DEVICES, then RDMAD_<SECTION>_<KEY> of every setting, so that RDMAD_*
// wins over RDMA_*. Errors name the variable: "RDMAD_QP_TIMEOUT=40: ...".

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>

#include "daemon/config/config.h"
#include "daemon/config/settings.h"

namespace rdmad {
namespace {

using K = SettingKind;

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

// Comma-separated items, trimmed; "" is the empty list.
std::vector<std::string> SplitList(std::string_view text) {
  std::vector<std::string> items;
  if (Trim(text).empty()) return items;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    items.emplace_back(Trim(text.substr(start, comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

bool ParseInt(std::string_view text, int base, int64_t* out) {
  text = Trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out, base);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string ParseBool(std::string_view text, SettingValue* out) {
  std::string lower(Trim(text));
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (lower == "true" || lower == "1" || lower == "yes") {
    *out = true;
  } else if (lower == "false" || lower == "0" || lower == "no") {
    *out = false;
  } else {
    return "not a boolean; use true/false, yes/no or 1/0";
  }
  return "";
}

// One scalar or list item of the setting from text: "" or a reason.
std::string ParseItem(const Setting& setting, std::string_view text, SettingValue* out) {
  int64_t number = 0;
  switch (setting.kind) {
    case K::kBool: return ParseBool(text, out);
    case K::kString:
    case K::kEnum:
    case K::kStringList: *out = std::string(text); break;
    case K::kOctalMode:
      text = Trim(text);
      if (text.starts_with("0o")) text.remove_prefix(2);
      if (!ParseInt(text, 8, &number)) return "not an octal mode (e.g. 0660)";
      *out = number;
      break;
    case K::kIntOrAuto:
      if (Trim(text) == "auto") {
        *out = std::string("auto");
        return "";
      }
      [[fallthrough]];
    case K::kInt:
    case K::kIntList:
      if (!ParseInt(text, 10, &number)) return "not an integer";
      *out = number;
      break;
  }
  return CheckSettingItem(setting, *out);
}

std::string ParseList(const Setting& setting, std::string_view text, SettingValue* out) {
  std::vector<std::string> strings;
  std::vector<int64_t> ints;
  for (const std::string& item : SplitList(text)) {
    SettingValue value;
    std::string reason = item.empty() ? "an empty item" : ParseItem(setting, item, &value);
    if (!reason.empty()) return QuoteToml(item) + " is " + reason;
    if (const auto* s = std::get_if<std::string>(&value)) strings.push_back(*s);
    if (const auto* n = std::get_if<int64_t>(&value)) ints.push_back(*n);
  }
  if (setting.kind == K::kStringList) {
    *out = std::move(strings);
  } else {
    *out = std::move(ints);
  }
  return "";
}

std::string ParseEnvValue(const Setting& setting, std::string_view text, SettingValue* out) {
  if (setting.kind == K::kStringList || setting.kind == K::kIntList) {
    return ParseList(setting, text, out);
  }
  return ParseItem(setting, text, out);
}

// RDMA_MTU: any size 256..4096, rounded down to the largest valid mtu.cap.
std::string ParseMtu(std::string_view text, SettingValue* out) {
  int64_t number = 0;
  if (!ParseInt(text, 10, &number)) return "not an integer";
  if (number < 256 || number > 4096) return "out of range; allowed 256..4096";
  int64_t cap = 256;
  while (cap * 2 <= number) cap *= 2;
  *out = cap;
  return "";
}

// Applies one alias; returns "" or a reason.
std::string ApplyAlias(const EnvAlias& alias, std::string_view text, Config* config) {
  if (alias.kind == EnvAlias::Kind::kDeviceFilter) {
    Status status = ParseDeviceFilter(text, &config->devices);
    return status.ok() ? "" : status.message();
  }
  const Setting* setting = FindSetting(alias.key);
  if (setting == nullptr) return "internal error: no setting " + std::string(alias.key);
  SettingValue value;
  std::string reason = alias.kind == EnvAlias::Kind::kMtu ? ParseMtu(text, &value)
                                                          : ParseEnvValue(*setting, text, &value);
  if (reason.empty()) setting->store(value, config);
  return reason;
}

}  // namespace

Status ApplyEnvironment(const EnvLookup& env, Config* config) {
  std::vector<std::string> errors;
  auto report = [&](std::string_view name, const std::string& text, const std::string& reason) {
    if (!reason.empty()) errors.push_back(std::string(name) + "=" + text + ": " + reason);
  };
  for (const EnvAlias& alias : EnvAliases()) {
    if (std::optional<std::string> text = env.Get(alias.name)) {
      report(alias.name, *text, ApplyAlias(alias, *text, config));
    }
  }
  for (const Setting& setting : Settings()) {
    if (setting.env.empty()) continue;
    std::optional<std::string> text = env.Get(setting.env);
    if (!text) continue;
    SettingValue value;
    std::string reason = ParseEnvValue(setting, *text, &value);
    if (reason.empty()) setting.store(value, config);
    report(setting.env, *text, reason);
  }
  if (errors.empty()) return Status::Ok();
  std::string message;
  for (const std::string& e : errors) message += (message.empty() ? "" : "\n") + e;
  return Status::InvalidArgument(message);
}

}  // namespace rdmad
