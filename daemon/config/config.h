// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The daemon's configuration: a plain value built from the defaults in the
// settings table (settings.h), then /etc/rdmad/rdmad.toml, then the
// environment (RDMAD_* and the Ollama-guide RDMA_* variables). Every error
// names where the bad value came from (file:line:column, or the variable).
//
// Thread safety: Config is a value; share it as std::shared_ptr<const Config>.

#ifndef RDMAD_DAEMON_CONFIG_CONFIG_H_
#define RDMAD_DAEMON_CONFIG_CONFIG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rdmad/status.h"

namespace rdmad {

// One entry of a device filter in the NCCL_IB_HCA style: "mlx5" matches every
// device whose name starts with mlx5, "=mlx5_0" only that device, and a
// ":PORT" suffix restricts the match to one port.
struct DeviceSpec {
  std::string name;
  bool exact = false;
  int port = 0;  // 0: every port
  friend bool operator==(const DeviceSpec&, const DeviceSpec&) = default;
};

struct PeerConfig {
  std::string name;
  std::string address;  // "host" or "host:port"
  friend bool operator==(const PeerConfig&, const PeerConfig&) = default;
};

struct PoolTarget {
  std::string peer;
  std::string service;
  int channels = 1;
  friend bool operator==(const PoolTarget&, const PoolTarget&) = default;
};

struct Config {
  // Where the values came from: the file path, or "<defaults>".
  std::string source;

  struct Daemon {
    std::string socket;                 // local API socket path
    std::string socket_group;           // group owning the socket ("" keeps the daemon's)
    std::string node_name;              // this daemon's name to its peers ("": host name)
    std::string admin_group;            // sees and closes every client's channels ("": root only)
    std::string state_dir;              // kept across restarts ("": systemd's, else the socket's)
    std::string peer_key_file;          // shared peer key ("": none)
    uint32_t socket_mode = 0;           // permission bits, never world-accessible
    std::vector<int64_t> allowed_uids;  // empty: every uid the socket admits
    std::string log_level;              // trace|debug|info|warn|error
    std::string peer_address;           // peer (daemon-to-daemon) listen address
    int peer_port = 0;
    std::string tls_cert;
    std::string tls_key;
    std::string tls_ca;
    int peer_breaker_failures = 5;  // failed attempts in a row; 0: never
    int peer_breaker_open_s = 30;   // seconds a tripped peer is not dialled
    int peer_channel_grace_s = 10;  // channels wait this long for a lost peer daemon
    int peer_idle_close_s = 300;    // sessions opened on first use close unused; 0: never
    friend bool operator==(const Daemon&, const Daemon&) = default;
  } daemon;

  struct Devices {
    std::vector<DeviceSpec> include;  // empty: every device
    std::vector<DeviceSpec> exclude;
    friend bool operator==(const Devices&, const Devices&) = default;
  } devices;

  struct Gid {
    int index = -1;                            // -1: auto
    std::string family;                        // auto|ipv4|ipv6
    std::string subnet;                        // "" or CIDR
    std::string roce_version;                  // v2|v1|prefer-v2
    std::vector<std::string> overlay_netdevs;  // glob patterns
    friend bool operator==(const Gid&, const Gid&) = default;
  } gid;

  struct Mtu {
    int cap = 4096;  // 256|512|1024|2048|4096
    friend bool operator==(const Mtu&, const Mtu&) = default;
  } mtu;

  struct Qp {
    std::string type;  // RC
    int timeout = 14;
    int retry_cnt = 7;
    int rnr_retry = 7;
    int min_rnr_timer = 12;
    int traffic_class = 0;
    int service_level = 0;
    int hop_limit = 64;
    int max_inline = 48;
    int send_depth = 127;
    int recv_depth = 31;
    int per_channel = 1;
    int spin_us = 50;
    int slot_size = 4096;
    int relaxed_ordering = 2;  // 0 off, 1 on if supported, 2 auto
    friend bool operator==(const Qp&, const Qp&) = default;
  } qp;

  struct Limits {
    int max_channels_per_peer = 0;
    int max_channels = 0;
    int idle_timeout_s = 0;
    int max_connects_per_client = 0;
    int max_connects = 0;
    int max_streams_per_client = 0;
    int max_streams_per_uid = 0;
    int max_channels_per_client = 0;
    int max_channels_per_uid = 0;
    int max_plans_per_client = 0;
    int max_plans_per_uid = 0;
    int max_listeners_per_client = 0;
    int max_listeners_per_uid = 0;
    int max_connections_per_uid = 0;
    int max_peer_sessions_per_uid = 0;
    friend bool operator==(const Limits&, const Limits&) = default;
  } limits;

  struct Echo {
    bool enabled = true;
    friend bool operator==(const Echo&, const Echo&) = default;
  } echo;

  struct Rails {
    std::string topology_xml;  // hwloc XML in place of sysfs ("": this host)
    int per_channel = 0;       // devices a channel stripes over; 0: every usable one (up to 8)
    friend bool operator==(const Rails&, const Rails&) = default;
  } rails;

  struct Metrics {
    bool enabled = false;               // serve /metrics (read at start)
    std::string address = "127.0.0.1";  // the HTTP listener's address
    int port = 9581;
    friend bool operator==(const Metrics&, const Metrics&) = default;
  } metrics;

  struct Cluster {
    std::vector<std::string> endpoints;  // etcd HOST[:PORT]; empty: no cluster
    std::string prefix = "/rdmad/v1/";   // key prefix, "/" at both ends
    int lease_ttl_s = 10;
    std::string tls_ca;  // "" : plain TCP to etcd
    std::string tls_cert;
    std::string tls_key;
    friend bool operator==(const Cluster&, const Cluster&) = default;
  } cluster;

  std::vector<PeerConfig> peers;
  std::vector<PoolTarget> pool;

  friend bool operator==(const Config&, const Config&) = default;
};

// Where the settings' environment variables are read: the process's
// (ProcessEnv) or fixed ones (EnvMap).
class EnvLookup {
 public:
  virtual ~EnvLookup() = default;
  // One variable; nullopt when unset.
  virtual std::optional<std::string> Get(std::string_view name) const = 0;
};

// Fixed variables.
class EnvMap final : public EnvLookup {
 public:
  explicit EnvMap(std::map<std::string, std::string, std::less<>> vars = {})
      : vars_(std::move(vars)) {}
  std::optional<std::string> Get(std::string_view name) const override;

 private:
  std::map<std::string, std::string, std::less<>> vars_;
};

// The process environment (getenv).
const EnvLookup& ProcessEnv();

// An environment with no variables set.
const EnvLookup& EmptyEnv();

// The configuration with every setting at its default.
Config DefaultConfig();

// Parses TOML text; source_name is used in messages ("file:line:column: ...").
// Unknown keys, wrong types and out-of-range values are INVALID_ARGUMENT
// naming the place, the reason, and the closest known key or allowed range.
StatusOr<Config> ParseConfig(std::string_view text, std::string_view source_name);

// Applies RDMAD_* and RDMA_* overrides from env onto config.
Status ApplyEnvironment(const EnvLookup& env, Config* config);

// Reads the file, parses it and applies env. A missing file is NOT_FOUND.
StatusOr<Config> LoadConfig(const std::string& path, const EnvLookup& env);

// Parses one device filter string ("^mlx5_0:1,=mlx5_1,bnxt") into config's
// devices.include / devices.exclude (replacing both).
Status ParseDeviceFilter(std::string_view text, Config::Devices* out);

// Parses one device filter entry ("mlx5", "=mlx5_0", "mlx5_0:1"). A leading
// "^" is rejected here: it only applies to a whole filter string.
StatusOr<DeviceSpec> ParseDeviceSpec(std::string_view text);

// The entry's text form, as ParseDeviceSpec reads it: "=mlx5_0:1".
std::string FormatDeviceSpec(const DeviceSpec& spec);

// Checks rules that span several settings and so can only be judged once
// every layer (file, environment, command-line flags) is applied, so
// LoadConfig does not call it: daemon.tls_cert, tls_key and tls_ca are set
// all together or not at all, and a non-loopback daemon.peer_address needs
// TLS or daemon.peer_key_file. INVALID_ARGUMENT naming config.source.
Status ValidateConfig(const Config& config);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_CONFIG_CONFIG_H_
