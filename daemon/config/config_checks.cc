// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/config/config_checks.h"

#include <arpa/inet.h>

#include <charconv>
#include <optional>

namespace rdmad {
namespace {

constexpr size_t kMaxSocketPath = 107;  // sizeof(sockaddr_un::sun_path) - 1

bool AllOf(std::string_view text, std::string_view extra) {
  for (char c : text) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              extra.find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

// Parses all of text as a decimal number in [min, max].
bool ParseNumber(std::string_view text, int min, int max, int* out) {
  if (text.empty()) return false;
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return false;
  if (value < min || value > max) return false;
  *out = value;
  return true;
}

bool IsIpLiteral(std::string_view text, int family) {
  unsigned char buf[16];
  std::string copy(text);
  return inet_pton(family, copy.c_str(), buf) == 1;
}

bool IsHostName(std::string_view text) {
  return !text.empty() && text.size() <= 253 && AllOf(text, ".-_") && text.front() != '-' &&
         text.front() != '.';
}

}  // namespace

bool AsBool(const SettingValue& value) {
  const bool* b = std::get_if<bool>(&value);
  return b != nullptr && *b;
}

int64_t AsInt(const SettingValue& value) {
  const int64_t* i = std::get_if<int64_t>(&value);
  return i == nullptr ? 0 : *i;
}

std::string AsString(const SettingValue& value) {
  const std::string* s = std::get_if<std::string>(&value);
  return s == nullptr ? std::string() : *s;
}

std::vector<std::string> AsStringList(const SettingValue& value) {
  const auto* l = std::get_if<std::vector<std::string>>(&value);
  return l == nullptr ? std::vector<std::string>() : *l;
}

std::vector<int64_t> AsIntList(const SettingValue& value) {
  const auto* l = std::get_if<std::vector<int64_t>>(&value);
  return l == nullptr ? std::vector<int64_t>() : *l;
}

std::vector<DeviceSpec> AsDeviceSpecs(const SettingValue& value) {
  std::vector<DeviceSpec> specs;
  for (const std::string& text : AsStringList(value)) {
    DeviceSpec spec;
    if (ParseDeviceSpecText(text, &spec).empty()) specs.push_back(spec);
  }
  return specs;
}

std::string ParseDeviceSpecText(std::string_view text, DeviceSpec* out) {
  if (text.empty()) return "invalid: an entry must name a device";
  if (text.front() == '^') {
    return "invalid: \"^\" is not valid inside a list; put the device in "
           "devices.exclude";
  }
  DeviceSpec spec;
  if (text.front() == '=') {
    spec.exact = true;
    text.remove_prefix(1);
  }
  size_t colon = text.find(':');
  std::string_view name = text.substr(0, colon);
  if (name.empty()) return "invalid: the device name is empty";
  if (!AllOf(name, "_.-")) {
    return "invalid: a device name has only letters, digits, '_', '.', '-' "
           "(form: [=]NAME[:PORT])";
  }
  if (colon != std::string_view::npos && !ParseNumber(text.substr(colon + 1), 1, 255, &spec.port)) {
    return "invalid: the port must be 1..255";
  }
  spec.name = std::string(name);
  *out = spec;
  return "";
}

std::string CheckSocketPath(const SettingValue& value) {
  std::string path = AsString(value);
  if (path.empty() || path.front() != '/') {
    return "invalid: the socket path must be absolute";
  }
  if (path.size() > kMaxSocketPath) {
    return "invalid: a socket path has at most 107 bytes";
  }
  return "";
}

std::string CheckAbsolutePathOrEmpty(const SettingValue& value) {
  std::string path = AsString(value);
  if (!path.empty() && path.front() != '/') return "invalid: the path must be absolute";
  return "";
}

std::string CheckGroupName(const SettingValue& value) {
  std::string name = AsString(value);
  if (name.empty()) return "";
  if (name.size() > 32 || name.front() == '-' || !AllOf(name, "_.-")) {
    return "invalid: not a group name (letters, digits, '_', '.', '-')";
  }
  return "";
}

std::string CheckSocketMode(const SettingValue& value) {
  int64_t mode = AsInt(value);
  if ((mode & 07) != 0) {
    return "invalid: it grants access to others; clear the o bits "
           "(e.g. 0o660)";
  }
  if ((mode & 0600) != 0600) {
    return "invalid: the owner needs read and write (0o600)";
  }
  return "";
}

std::string CheckListenHost(const SettingValue& value) {
  std::string host = AsString(value);
  if (IsIpLiteral(host, AF_INET) || IsIpLiteral(host, AF_INET6) || IsHostName(host)) {
    return "";
  }
  return "invalid: not an IP address or host name (no port here)";
}

std::string CheckNodeName(const SettingValue& value) {
  std::string name = AsString(value);
  if (name.empty() || IsHostName(name)) return "";
  return "invalid: not a host name (letters, digits, '.', '-', '_')";
}

std::string CheckFilePath(const SettingValue& value) {
  std::string path = AsString(value);
  if (path.empty() || path.front() == '/') return "";
  return "invalid: the path must be absolute";
}

std::string CheckKeyPrefix(const SettingValue& value) {
  std::string prefix = AsString(value);
  if (prefix.size() < 2 || prefix.front() != '/' || prefix.back() != '/') {
    return "invalid: an etcd key prefix starts and ends with \"/\"";
  }
  for (char c : prefix) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
      return "invalid: no spaces or control characters in a key prefix";
    }
  }
  return "";
}

std::string CheckDeviceSpec(const SettingValue& value) {
  DeviceSpec spec;
  return ParseDeviceSpecText(AsString(value), &spec);
}

std::string CheckCidr(const SettingValue& value) {
  std::string text = AsString(value);
  if (text.empty()) return "";
  size_t slash = text.find('/');
  if (slash == std::string::npos) {
    return "invalid: expected ADDRESS/PREFIX, e.g. 192.0.2.0/24";
  }
  std::string_view address = std::string_view(text).substr(0, slash);
  std::string_view prefix = std::string_view(text).substr(slash + 1);
  int bits = 0;
  if (IsIpLiteral(address, AF_INET)) {
    if (!ParseNumber(prefix, 0, 32, &bits)) {
      return "invalid: an IPv4 prefix length must be 0..32";
    }
    return "";
  }
  if (IsIpLiteral(address, AF_INET6)) {
    if (!ParseNumber(prefix, 0, 128, &bits)) {
      return "invalid: an IPv6 prefix length must be 0..128";
    }
    return "";
  }
  return "invalid: not an IPv4 or IPv6 address before the \"/\"";
}

std::string CheckNetdevGlob(const SettingValue& value) {
  std::string glob = AsString(value);
  if (glob.empty() || !AllOf(glob, "_.-:*?[]!@")) {
    return "invalid: a network device name or glob (e.g. \"docker*\")";
  }
  return "";
}

std::string CheckPeerName(const SettingValue& value) {
  std::string name = AsString(value);
  if (name.empty() || !AllOf(name, "._-")) {
    return "invalid: a peer name has only letters, digits, '.', '_', '-'";
  }
  return "";
}

std::string CheckPeerAddress(const SettingValue& value) {
  std::string owned = AsString(value);
  std::string_view text = owned;
  std::string_view host = text;
  std::optional<std::string_view> port;
  bool bracketed = !text.empty() && text.front() == '[';
  if (bracketed) {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return "invalid: missing \"]\"";
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') {
      return "invalid: expected \":PORT\" after \"]\"";
    }
    if (!rest.empty()) port = rest.substr(1);
  } else if (IsIpLiteral(text, AF_INET6)) {
    return "";
  } else if (size_t colon = text.rfind(':'); colon != text.npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  int number = 0;
  if (port && !ParseNumber(*port, 1, 65535, &number)) {
    return "invalid: the port must be 1..65535";
  }
  if (bracketed ? !IsIpLiteral(host, AF_INET6) : !IsIpLiteral(host, AF_INET) && !IsHostName(host)) {
    return bracketed ? "invalid: not an IPv6 address inside \"[]\""
                     : "invalid: expected HOST, HOST:PORT or [IPV6]:PORT";
  }
  return "";
}

std::string CheckServiceName(const SettingValue& value) {
  std::string name = AsString(value);
  if (name.empty() || !AllOf(name, "._/-")) {
    return "invalid: a service name has only letters, digits, '.', '_', "
           "'/', '-'";
  }
  return "";
}

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost" || host == "::1") return true;
  unsigned char buf[4];
  std::string copy(host);
  return inet_pton(AF_INET, copy.c_str(), buf) == 1 && buf[0] == 127;
}

}  // namespace rdmad
