// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/lifecycle/daemon_main.h"

#include <unistd.h>

#include <cstdio>

#include "daemon/lifecycle/logging.h"
#include "spdlog/spdlog.h"

namespace rdmad {
namespace {

// Splits "--name=value" or takes the next argument as the value.
Status TakeValue(const std::vector<std::string>& args, size_t* i, const std::string& name,
                 std::string* value) {
  const std::string& arg = args[*i];
  if (arg.size() > name.size() && arg[name.size()] == '=') {
    *value = arg.substr(name.size() + 1);
  } else if (*i + 1 < args.size()) {
    *value = args[++*i];
  } else {
    return Status::InvalidArgument(name + " needs a value");
  }
  if (value->empty()) return Status::InvalidArgument(name + " needs a value");
  return Status::Ok();
}

bool FlagIs(const std::string& arg, const std::string& name) {
  return arg == name || arg.rfind(name + "=", 0) == 0;
}

int CheckConfig(const std::string& path) {
  auto config = LoadConfig(path, ProcessEnv());
  Status valid = config.ok() ? ValidateConfig(*config) : config.status();
  if (!valid.ok()) {
    std::fprintf(stderr, "%s\n", valid.message().c_str());
    return 1;
  }
  std::printf("%s: OK\n", path.c_str());
  return 0;
}

StatusOr<Config> LoadStartupConfig(const DaemonFlags& flags, const EnvLookup& env) {
  auto config = LoadConfig(flags.config_path, env);
  if (config.ok() || flags.config_given || config.status().code() != StatusCode::kNotFound) {
    return config;
  }
  spdlog::warn("{}; running with the built-in defaults", config.status().message());
  Config defaults = DefaultConfig();
  RDMAD_RETURN_IF_ERROR(ApplyEnvironment(env, &defaults));
  return defaults;
}

}  // namespace

StatusOr<DaemonFlags> ParseDaemonFlags(const std::vector<std::string>& args) {
  DaemonFlags flags;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    std::string value;
    if (arg == "--help" || arg == "-h") {
      flags.help = true;
    } else if (arg == "--version") {
      flags.version = true;
    } else if (FlagIs(arg, "--config")) {
      RDMAD_RETURN_IF_ERROR(TakeValue(args, &i, "--config", &value));
      flags.config_path = value;
      flags.config_given = true;
    } else if (FlagIs(arg, "--check-config")) {
      RDMAD_RETURN_IF_ERROR(TakeValue(args, &i, "--check-config", &value));
      flags.check_config = value;
    } else if (FlagIs(arg, "--socket")) {
      RDMAD_RETURN_IF_ERROR(TakeValue(args, &i, "--socket", &value));
      flags.socket = value;
    } else if (FlagIs(arg, "--sysfs-root")) {
      RDMAD_RETURN_IF_ERROR(TakeValue(args, &i, "--sysfs-root", &value));
      flags.sysfs_root = value;
    } else {
      return Status::InvalidArgument("unknown argument \"" + arg + "\"");
    }
  }
  return flags;
}

std::string DaemonUsage() {
  return std::string(
             "Usage: rdmad [--config FILE] [--socket PATH]\n"
             "       rdmad --check-config FILE\n"
             "\n"
             "The RDMA connection daemon: device discovery, path policy, peer\n"
             "sessions and the QP handshake broker for local applications.\n"
             "\n"
             "  --config FILE        configuration file (default ") +
         RDMAD_DEFAULT_CONFIG +
         ")\n"
         "  --check-config FILE  validate FILE (and the environment), exit 0 or 1\n"
         "  --socket PATH        local API socket; overrides daemon.socket\n"
         "  --sysfs-root DIR     for tests: read RDMA devices from this sysfs tree\n"
         "                       (default /sys)\n"
         "  --version            print the version and exit\n"
         "  --help               print this help and exit\n";
}

int DaemonMain(int argc, char** argv, const DaemonEdge& edge) {
  BlockDaemonSignals();
  SetupLogging(LogStyle::kAuto);
  auto flags = ParseDaemonFlags(std::vector<std::string>(argv + 1, argv + argc));
  if (!flags.ok()) {
    std::fprintf(stderr, "rdmad: %s\nTry 'rdmad --help'.\n", flags.status().message().c_str());
    return 2;
  }
  if (flags->help) {
    std::printf("%s", DaemonUsage().c_str());
    return 0;
  }
  if (flags->version) {
    std::printf("rdmad %s\n", RDMAD_VERSION);
    return 0;
  }
  if (flags->check_config) return CheckConfig(*flags->check_config);

  const EnvLookup& env = ProcessEnv();
  auto config = LoadStartupConfig(*flags, env);
  Status valid = config.ok() ? ValidateConfig(*config) : config.status();
  if (!valid.ok()) {
    spdlog::critical("refusing to start: {}", valid.message());
    return 1;
  }
  Status level = SetLogLevel(config->daemon.log_level);
  if (!level.ok()) spdlog::warn("{}", level.message());
  spdlog::info("rdmad {} starting (pid {}, config {})", RDMAD_VERSION, getpid(), config->source);
  DaemonOptions options;
  options.config_path = flags->config_path;
  options.socket_override = flags->socket;
  options.env = &env;
  if (flags->sysfs_root) {
    options.sysfs_root = *flags->sysfs_root;
    spdlog::warn("reading RDMA devices from {} (--sysfs-root), not /sys", options.sysfs_root);
  }
  Daemon daemon(std::move(options), std::move(config).value());
  return daemon.Run(edge);
}

}  // namespace rdmad
