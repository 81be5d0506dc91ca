// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Defaults, loading, device filters and cross-setting validation. Parsing is
// in config_parse.cc, environment overrides in config_env.cc.

#include "daemon/config/config.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <system_error>

#include "daemon/config/config_checks.h"
#include "daemon/config/settings.h"

namespace rdmad {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return text;
}

Status ReadError(const std::string& path, int err) {
  std::string message = "cannot read " + path + ": " + std::generic_category().message(err);
  switch (err) {
    case ENOENT:
    case ENOTDIR: return Status::NotFound(message);
    case EACCES:
    case EPERM: return Status::PermissionDenied(message);
    default: return Status::FailedPrecondition(message);
  }
}

StatusOr<std::string> ReadFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ReadError(path, errno);
  std::string text;
  char buf[8192];
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      return ReadError(path, err);
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return text;
}

Config BuildDefaultConfig() {
  Config config;
  config.source = "<defaults>";
  for (const Setting& setting : Settings()) {
    const SettingSection* section = FindSection(setting.section());
    if (section == nullptr || section->array) continue;
    StatusOr<SettingValue> value = DefaultSettingValue(setting);
    if (value.ok()) setting.store(*value, &config);
  }
  return config;
}

}  // namespace

std::optional<std::string> EnvMap::Get(std::string_view name) const {
  auto it = vars_.find(name);
  if (it == vars_.end()) return std::nullopt;
  return it->second;
}

namespace {

class ProcessEnvironment final : public EnvLookup {
 public:
  std::optional<std::string> Get(std::string_view name) const override {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  }
};

}  // namespace

const EnvLookup& ProcessEnv() {
  static const ProcessEnvironment process;
  return process;
}

const EnvLookup& EmptyEnv() {
  static const EnvMap empty;
  return empty;
}

Config DefaultConfig() {
  static const Config* const defaults = new Config(BuildDefaultConfig());
  return *defaults;
}

StatusOr<Config> LoadConfig(const std::string& path, const EnvLookup& env) {
  StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  StatusOr<Config> config = ParseConfig(*text, path);
  if (!config.ok()) return config.status();
  RDMAD_RETURN_IF_ERROR(ApplyEnvironment(env, &*config));
  return config;
}

StatusOr<DeviceSpec> ParseDeviceSpec(std::string_view text) {
  DeviceSpec spec;
  std::string reason = ParseDeviceSpecText(text, &spec);
  if (!reason.empty()) {
    return Status::InvalidArgument(QuoteToml(text) + " is " + reason);
  }
  return spec;
}

std::string FormatDeviceSpec(const DeviceSpec& spec) {
  std::string text = (spec.exact ? "=" : "") + spec.name;
  if (spec.port != 0) text += ":" + std::to_string(spec.port);
  return text;
}

Status ParseDeviceFilter(std::string_view text, Config::Devices* out) {
  Config::Devices result;
  text = Trim(text);
  bool exclude = !text.empty() && text.front() == '^';
  if (exclude) text.remove_prefix(1);
  if (exclude && text.empty()) {
    return Status::InvalidArgument("\"^\" must be followed by devices");
  }
  size_t start = 0;
  while (!text.empty()) {
    size_t comma = text.find(',', start);
    std::string_view item = Trim(text.substr(start, comma - start));
    if (!item.empty() && item.front() == '^') {
      return Status::InvalidArgument(QuoteToml(item) +
                                     " is invalid: \"^\" goes only at the start of "
                                     "the whole filter, and then excludes every listed device");
    }
    StatusOr<DeviceSpec> spec = ParseDeviceSpec(item);
    if (!spec.ok()) return spec.status();
    (exclude ? result.exclude : result.include).push_back(*spec);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  *out = std::move(result);
  return Status::Ok();
}

Status ValidateConfig(const Config& config) {
  const Config::Daemon& d = config.daemon;
  int tls_parts = !d.tls_cert.empty() + !d.tls_key.empty() + !d.tls_ca.empty();
  std::string where = config.source + ": ";
  if (tls_parts != 0 && tls_parts != 3) {
    return Status::InvalidArgument(where +
                                   "daemon.tls_cert, daemon.tls_key and daemon.tls_ca go "
                                   "together: set all three for mutual TLS, or none");
  }
  if (tls_parts == 0 && d.peer_key_file.empty() && !IsLoopbackHost(d.peer_address)) {
    return Status::InvalidArgument(
        where + "daemon.peer_address = " + QuoteToml(d.peer_address) +
        " is not a loopback address, and peers would have no way to prove who they are: set "
        "daemon.tls_cert, daemon.tls_key and daemon.tls_ca (mutual TLS), or "
        "daemon.peer_key_file (a shared key: rdmactl peer-key FILE)");
  }
  const Config::Cluster& c = config.cluster;
  if (!c.endpoints.empty() && (d.peer_address == "0.0.0.0" || d.peer_address == "::")) {
    return Status::InvalidArgument(
        where + "cluster.endpoints is set, and daemon.peer_address = " + QuoteToml(d.peer_address) +
        " is no address another daemon can dial: the member record gives it to them");
  }
  if (c.tls_cert.empty() != c.tls_key.empty()) {
    return Status::InvalidArgument(where +
                                   "cluster.tls_cert and cluster.tls_key go together: set both "
                                   "for a client certificate to etcd, or neither");
  }
  if (!c.tls_cert.empty() && c.tls_ca.empty()) {
    return Status::InvalidArgument(
        where + "cluster.tls_cert needs cluster.tls_ca: TLS to etcd verifies its server first");
  }
  return Status::Ok();
}

}  // namespace rdmad
