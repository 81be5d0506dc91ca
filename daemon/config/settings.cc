// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The settings table itself. Keep help texts to one short line: they become
// the comments of etc/rdmad/rdmad.toml and the docs table.

#include "daemon/config/settings.h"

#include "daemon/config/config_checks.h"

namespace rdmad {
namespace {

using K = SettingKind;

void Assign(bool* field, const SettingValue& v) { *field = AsBool(v); }
// A string here is the "auto" of a kIntOrAuto setting, stored as -1.
void Assign(int* field, const SettingValue& v) {
  *field = std::holds_alternative<std::string>(v) ? -1 : static_cast<int>(AsInt(v));
}
void Assign(uint32_t* field, const SettingValue& v) { *field = static_cast<uint32_t>(AsInt(v)); }
void Assign(std::string* field, const SettingValue& v) { *field = AsString(v); }
void Assign(std::vector<std::string>* field, const SettingValue& v) { *field = AsStringList(v); }
void Assign(std::vector<int64_t>* field, const SettingValue& v) { *field = AsIntList(v); }
void Assign(std::vector<DeviceSpec>* field, const SettingValue& v) { *field = AsDeviceSpecs(v); }

// Stores into config.*kSection.*kField.
template <auto kSection, auto kField>
void Store(const SettingValue& value, Config* config) {
  Assign(&((config->*kSection).*kField), value);
}

// Stores into the last entry of the array config.*kArray.
template <auto kArray, auto kField>
void StoreLast(const SettingValue& value, Config* config) {
  auto& entries = config->*kArray;
  if (!entries.empty()) Assign(&(entries.back().*kField), value);
}

using C = Config;

std::vector<Setting> DaemonSettings() {
  return {
      {.key = "daemon.socket",
       .kind = K::kString,
       .default_toml = "\"/run/rdmad/rdmad.sock\"",
       .help = "Path of the local API socket.",
       .env = "RDMAD_DAEMON_SOCKET",
       .check = CheckSocketPath,
       .check_doc = "absolute path, at most 107 bytes",
       .store = Store<&C::daemon, &C::Daemon::socket>},
      {.key = "daemon.socket_group",
       .kind = K::kString,
       .default_toml = "\"rdma\"",
       .help = "Group owning the socket; \"\" keeps the daemon's own group.",
       .env = "RDMAD_DAEMON_SOCKET_GROUP",
       .check = CheckGroupName,
       .check_doc = "group name or \"\"",
       .store = Store<&C::daemon, &C::Daemon::socket_group>},
      {.key = "daemon.socket_mode",
       .kind = K::kOctalMode,
       .default_toml = "0o660",
       .help = "Permission bits of the socket: owner rw required, nothing "
               "for others.",
       .env = "RDMAD_DAEMON_SOCKET_MODE",
       .min = 0,
       .max = 0777,
       .check = CheckSocketMode,
       .check_doc = "u+rw set, no o bits",
       .store = Store<&C::daemon, &C::Daemon::socket_mode>},
      {.key = "daemon.allowed_uids",
       .kind = K::kIntList,
       .default_toml = "[]",
       .help = "Uids allowed to use the API; [] admits every uid the socket "
               "permissions admit.",
       .env = "RDMAD_DAEMON_ALLOWED_UIDS",
       .min = 0,
       .max = 4294967294,
       .store = Store<&C::daemon, &C::Daemon::allowed_uids>},
      {.key = "daemon.node_name",
       .kind = K::kString,
       .default_toml = "\"\"",
       .help = "This daemon's name to its peers (in its TLS certificate's SAN); \"\": "
               "the host name.",
       .env = "RDMAD_DAEMON_NODE_NAME",
       .check = CheckNodeName,
       .check_doc = "host name or \"\"",
       .store = Store<&C::daemon, &C::Daemon::node_name>},
      {.key = "daemon.admin_group",
       .kind = K::kString,
       .default_toml = "\"\"",
       .help = "Group whose members, like root, see and close every client's "
               "channels; \"\": root only.",
       .env = "RDMAD_DAEMON_ADMIN_GROUP",
       .check = CheckGroupName,
       .check_doc = "group name or \"\"",
       .store = Store<&C::daemon, &C::Daemon::admin_group>},
      {.key = "daemon.state_dir",
       .kind = K::kString,
       .default_toml = "\"\"",
       .help = "Directory of state kept across restarts (the lease key); \"\": systemd's, "
               "else the socket's.",
       .env = "RDMAD_DAEMON_STATE_DIR",
       .check = CheckAbsolutePathOrEmpty,
       .check_doc = "absolute path or \"\"",
       .store = Store<&C::daemon, &C::Daemon::state_dir>},
      {.key = "daemon.log_level",
       .kind = K::kEnum,
       .default_toml = "\"info\"",
       .help = "Least severe log level written.",
       .env = "RDMAD_DAEMON_LOG_LEVEL",
       .choices = {"trace", "debug", "info", "warn", "error"},
       .store = Store<&C::daemon, &C::Daemon::log_level>},
      {.key = "daemon.peer_address",
       .kind = K::kString,
       .default_toml = "\"127.0.0.1\"",
       .help = "Address the daemon-to-daemon (peer) listener binds to.",
       .env = "RDMAD_DAEMON_PEER_ADDRESS",
       .check = CheckListenHost,
       .check_doc = "IP address or host name",
       .store = Store<&C::daemon, &C::Daemon::peer_address>},
      {.key = "daemon.peer_port",
       .kind = K::kInt,
       .default_toml = "7581",
       .help = "TCP port of the peer listener.",
       .env = "RDMAD_DAEMON_PEER_PORT",
       .min = 1,
       .max = 65535,
       .store = Store<&C::daemon, &C::Daemon::peer_port>},
      {.key = "daemon.peer_key_file",
       .kind = K::kString,
       .default_toml = "\"\"",
       .help = "Shared key of the deployment's daemons, proving peer calls without TLS; "
               "\"\": none.",
       .env = "RDMAD_DAEMON_PEER_KEY_FILE",
       .check = CheckAbsolutePathOrEmpty,
       .check_doc = "absolute path or \"\"",
       .store = Store<&C::daemon, &C::Daemon::peer_key_file>},
      {.key = "daemon.tls_cert",
       .kind = K::kString,
       .default_toml = "\"\"",
       .help = "PEM certificate of this daemon for mutual TLS between "
               "daemons.",
       .env = "RDMAD_DAEMON_TLS_CERT",
       .check = CheckFilePath,
       .check_doc = "absolute path or \"\"",
       .store = Store<&C::daemon, &C::Daemon::tls_cert>},
      {.key = "daemon.tls_key",
       .kind = K::kString,
       .default_toml = "\"\"",
       .help = "PEM private key of tls_cert.",
       .env = "RDMAD_DAEMON_TLS_KEY",
       .check = CheckFilePath,
       .check_doc = "absolute path or \"\"",
       .store = Store<&C::daemon, &C::Daemon::tls_key>},
      {.key = "daemon.tls_ca",
       .kind = K::kString,
       .default_toml = "\"\"",
       .help = "PEM CA bundle that peer daemons' certificates must chain "
               "to.",
       .env = "RDMAD_DAEMON_TLS_CA",
       .check = CheckFilePath,
       .check_doc = "absolute path or \"\"",
       .store = Store<&C::daemon, &C::Daemon::tls_ca>},
      {.key = "daemon.peer_breaker_failures",
       .kind = K::kInt,
       .default_toml = "5",
       .help = "Failed attempts in a row that open a peer's circuit "
               "(0 = never).",
       .env = "RDMAD_DAEMON_PEER_BREAKER_FAILURES",
       .min = 0,
       .max = 1000,
       .store = Store<&C::daemon, &C::Daemon::peer_breaker_failures>},
      {.key = "daemon.peer_breaker_open_s",
       .kind = K::kInt,
       .default_toml = "30",
       .help = "Seconds an open circuit keeps a peer from being dialled "
               "before one probe.",
       .env = "RDMAD_DAEMON_PEER_BREAKER_OPEN_S",
       .min = 1,
       .max = 86400,
       .store = Store<&C::daemon, &C::Daemon::peer_breaker_open_s>},
      {.key = "daemon.peer_channel_grace_s",
       .kind = K::kInt,
       .default_toml = "10",
       .help = "Seconds a channel outlives its lost peer daemon, waiting for it to come back.",
       .env = "RDMAD_DAEMON_PEER_CHANNEL_GRACE_S",
       .min = 1,
       .max = 3600,
       .store = Store<&C::daemon, &C::Daemon::peer_channel_grace_s>},
      {.key = "daemon.peer_idle_close_s",
       .kind = K::kInt,
       .default_toml = "300",
       .help = "Seconds a peer session opened on first use stays up unused; 0: never closed.",
       .env = "RDMAD_DAEMON_PEER_IDLE_CLOSE_S",
       .min = 0,
       .max = 86400,
       .store = Store<&C::daemon, &C::Daemon::peer_idle_close_s>},
  };
}

std::vector<Setting> DeviceAndGidSettings() {
  return {
      {.key = "devices.include",
       .kind = K::kStringList,
       .default_toml = "[]",
       .help = "RDMA devices to use, NCCL_IB_HCA style; [] uses every "
               "device.",
       .env = "RDMAD_DEVICES_INCLUDE",
       .check = CheckDeviceSpec,
       .check_doc = "[=]NAME[:PORT]",
       .store = Store<&C::devices, &C::Devices::include>},
      {.key = "devices.exclude",
       .kind = K::kStringList,
       .default_toml = "[]",
       .help = "RDMA devices never to use, even when include matches them.",
       .env = "RDMAD_DEVICES_EXCLUDE",
       .check = CheckDeviceSpec,
       .check_doc = "[=]NAME[:PORT]",
       .store = Store<&C::devices, &C::Devices::exclude>},
      {.key = "gid.index",
       .kind = K::kIntOrAuto,
       .default_toml = "\"auto\"",
       .help = "GID table index; \"auto\" picks one by family, subnet and "
               "roce_version.",
       .env = "RDMAD_GID_INDEX",
       .min = 0,
       .max = 255,
       .store = Store<&C::gid, &C::Gid::index>},
      {.key = "gid.family",
       .kind = K::kEnum,
       .default_toml = "\"auto\"",
       .help = "Address family of the GID that auto picks.",
       .env = "RDMAD_GID_FAMILY",
       .choices = {"auto", "ipv4", "ipv6"},
       .store = Store<&C::gid, &C::Gid::family>},
      {.key = "gid.subnet",
       .kind = K::kString,
       .default_toml = "\"\"",
       .help = "Only pick GIDs inside this subnet (CIDR); \"\" allows any.",
       .env = "RDMAD_GID_SUBNET",
       .check = CheckCidr,
       .check_doc = "CIDR (192.0.2.0/24, 2001:db8::/32) or \"\"",
       .store = Store<&C::gid, &C::Gid::subnet>},
      {.key = "gid.roce_version",
       .kind = K::kEnum,
       .default_toml = "\"v2\"",
       .help = "RoCE version of the GID; prefer-v2 falls back to v1.",
       .env = "RDMAD_GID_ROCE_VERSION",
       .choices = {"v2", "v1", "prefer-v2"},
       .store = Store<&C::gid, &C::Gid::roce_version>},
      {.key = "gid.overlay_netdevs",
       .kind = K::kStringList,
       .default_toml = "[\"docker*\", \"cni*\", \"flannel*\", \"calico*\", "
                       "\"vxlan*\", \"tunl0\"]",
       .help = "Network devices (globs) whose GIDs rank last: "
               "container overlays.",
       .env = "RDMAD_GID_OVERLAY_NETDEVS",
       .check = CheckNetdevGlob,
       .check_doc = "netdev names or globs",
       .store = Store<&C::gid, &C::Gid::overlay_netdevs>},
      {.key = "mtu.cap",
       .kind = K::kInt,
       .default_toml = "4096",
       .help = "Largest path MTU used; the ports' active MTU may lower it.",
       .env = "RDMAD_MTU_CAP",
       .choices = {"256", "512", "1024", "2048", "4096"},
       .store = Store<&C::mtu, &C::Mtu::cap>},
  };
}

Setting IntSetting(std::string_view key, std::string_view def, int64_t min, int64_t max,
                   std::string_view env, std::string_view help, SettingStore store) {
  return {.key = key,
          .kind = K::kInt,
          .default_toml = def,
          .help = help,
          .env = env,
          .min = min,
          .max = max,
          .store = store};
}

std::vector<Setting> QpAndLimitSettings() {
  using Q = Config::Qp;
  using L = Config::Limits;
  return {
      {.key = "qp.type",
       .kind = K::kEnum,
       .default_toml = "\"RC\"",
       .help = "Queue pair transport; only RC (reliable connected) for now.",
       .env = "RDMAD_QP_TYPE",
       .choices = {"RC"},
       .store = Store<&C::qp, &Q::type>},
      IntSetting("qp.timeout", "14", 0, 31, "RDMAD_QP_TIMEOUT",
                 "Local ACK timeout: 4.096 us * 2^timeout (0 = infinite).",
                 Store<&C::qp, &Q::timeout>),
      IntSetting("qp.retry_cnt", "6", 0, 7, "RDMAD_QP_RETRY_CNT",
                 "Retransmissions before a send fails (Soft-RoCE retries for ever at 7).",
                 Store<&C::qp, &Q::retry_cnt>),
      IntSetting("qp.rnr_retry", "7", 0, 7, "RDMAD_QP_RNR_RETRY",
                 "Receiver-not-ready retries (7 = infinite).", Store<&C::qp, &Q::rnr_retry>),
      IntSetting("qp.min_rnr_timer", "12", 0, 31, "RDMAD_QP_MIN_RNR_TIMER",
                 "Minimum RNR NAK timer code sent to the peer (12 = 0.64 ms).",
                 Store<&C::qp, &Q::min_rnr_timer>),
      IntSetting("qp.traffic_class", "0", 0, 255, "RDMAD_QP_TRAFFIC_CLASS",
                 "IP traffic class (DSCP << 2 | ECN) of RoCE packets.",
                 Store<&C::qp, &Q::traffic_class>),
      IntSetting("qp.service_level", "0", 0, 15, "RDMAD_QP_SERVICE_LEVEL",
                 "Service level (priority) of the queue pairs.", Store<&C::qp, &Q::service_level>),
      IntSetting("qp.hop_limit", "64", 1, 255, "RDMAD_QP_HOP_LIMIT",
                 "IP hop limit (TTL) of RoCE v2 packets.", Store<&C::qp, &Q::hop_limit>),
      IntSetting(
          "qp.max_inline", "48", 0, 1024, "RDMAD_QP_MAX_INLINE",
          "Largest send, in bytes, copied inline; 48 keeps a Soft-RoCE send WQE at 256 bytes.",
          Store<&C::qp, &Q::max_inline>),
      IntSetting("qp.send_depth", "127", 1, 32768, "RDMAD_QP_SEND_DEPTH",
                 "Send queue depth (work requests) of each queue pair; 2^k - 1 wastes no memory.",
                 Store<&C::qp, &Q::send_depth>),
      IntSetting("qp.recv_depth", "31", 3, 32768, "RDMAD_QP_RECV_DEPTH",
                 "Receive queue depth of each queue pair; at least 3 (credit reserve); 2^k - 1.",
                 Store<&C::qp, &Q::recv_depth>),
      IntSetting("qp.per_channel", "1", 1, 1, "RDMAD_QP_PER_CHANNEL",
                 "Queue pairs per channel; only 1 for now.", Store<&C::qp, &Q::per_channel>),
      IntSetting("qp.spin_us", "50", 0, 1000000, "RDMAD_QP_SPIN_US",
                 "Microseconds a waiting call polls before it sleeps on the "
                 "completion channel.",
                 Store<&C::qp, &Q::spin_us>),
      IntSetting("qp.slot_size", "4096", 256, 67108864, "RDMAD_QP_SLOT_SIZE",
                 "Bytes per receive slot (recv_depth of them per channel); "
                 "larger messages go by rendezvous.",
                 Store<&C::qp, &Q::slot_size>),
      IntSetting("qp.relaxed_ordering", "2", 0, 2, "RDMAD_QP_RELAXED_ORDERING",
                 "Relaxed ordering of registered memory: 0 off, 1 on if "
                 "supported, 2 auto (PCI devices).",
                 Store<&C::qp, &Q::relaxed_ordering>),
      IntSetting("limits.max_channels_per_peer", "256", 1, 65536,
                 "RDMAD_LIMITS_MAX_CHANNELS_PER_PEER",
                 "Most live channels with one peer; more is RESOURCE_EXHAUSTED.",
                 Store<&C::limits, &L::max_channels_per_peer>),
      IntSetting("limits.max_channels", "4096", 1, 1048576, "RDMAD_LIMITS_MAX_CHANNELS",
                 "Most live channels in total; more is RESOURCE_EXHAUSTED.",
                 Store<&C::limits, &L::max_channels>),
      IntSetting("limits.idle_timeout_s", "300", 0, 86400, "RDMAD_LIMITS_IDLE_TIMEOUT_S",
                 "Idle seconds before a pooled channel beyond its target closes (0 = at once).",
                 Store<&C::limits, &L::idle_timeout_s>),
      IntSetting("limits.max_connects_per_client", "64", 1, 65536,
                 "RDMAD_LIMITS_MAX_CONNECTS_PER_CLIENT",
                 "Most Connect handshakes one local process has in flight; more is "
                 "RESOURCE_EXHAUSTED.",
                 Store<&C::limits, &L::max_connects_per_client>),
      IntSetting("limits.max_connects", "256", 1, 65536, "RDMAD_LIMITS_MAX_CONNECTS",
                 "Most Connect handshakes in flight from all local processes (worker threads).",
                 Store<&C::limits, &L::max_connects>),
      IntSetting("limits.max_streams_per_client", "8192", 1, 1048576,
                 "RDMAD_LIMITS_MAX_STREAMS_PER_CLIENT",
                 "Most open streams (Listen, HoldChannel, WatchEvents, WatchPool) of one "
                 "local process.",
                 Store<&C::limits, &L::max_streams_per_client>),
      IntSetting("limits.max_streams_per_uid", "16384", 1, 1048576,
                 "RDMAD_LIMITS_MAX_STREAMS_PER_UID",
                 "Most open streams of all local processes of one uid.",
                 Store<&C::limits, &L::max_streams_per_uid>),
      IntSetting("limits.max_channels_per_client", "2048", 1, 1048576,
                 "RDMAD_LIMITS_MAX_CHANNELS_PER_CLIENT",
                 "Most live channels (planned, opening, established) of one local process.",
                 Store<&C::limits, &L::max_channels_per_client>),
      IntSetting("limits.max_channels_per_uid", "3072", 1, 1048576,
                 "RDMAD_LIMITS_MAX_CHANNELS_PER_UID",
                 "Most live channels of all local processes of one uid.",
                 Store<&C::limits, &L::max_channels_per_uid>),
      IntSetting("limits.max_plans_per_client", "256", 1, 1048576,
                 "RDMAD_LIMITS_MAX_PLANS_PER_CLIENT",
                 "Most channels one local process has planned and not yet connected.",
                 Store<&C::limits, &L::max_plans_per_client>),
      IntSetting("limits.max_plans_per_uid", "1024", 1, 1048576, "RDMAD_LIMITS_MAX_PLANS_PER_UID",
                 "Most channels planned and not yet connected by one uid's processes.",
                 Store<&C::limits, &L::max_plans_per_uid>),
      IntSetting("limits.max_listeners_per_client", "64", 1, 65536,
                 "RDMAD_LIMITS_MAX_LISTENERS_PER_CLIENT",
                 "Most services one local process listens on.",
                 Store<&C::limits, &L::max_listeners_per_client>),
      IntSetting("limits.max_listeners_per_uid", "256", 1, 65536,
                 "RDMAD_LIMITS_MAX_LISTENERS_PER_UID",
                 "Most services all local processes of one uid listen on.",
                 Store<&C::limits, &L::max_listeners_per_uid>),
      IntSetting(
          "limits.max_connections_per_uid", "1024", 1, 1048576,
          "RDMAD_LIMITS_MAX_CONNECTIONS_PER_UID",
          "Most open local API connections of one uid (not root's, nor rdmad's); read at start.",
          Store<&C::limits, &L::max_connections_per_uid>),
      IntSetting(
          "limits.max_peer_sessions_per_uid", "64", 1, 65536,
          "RDMAD_LIMITS_MAX_PEER_SESSIONS_PER_UID",
          "Most peer sessions one uid's processes opened on demand (planning to an address).",
          Store<&C::limits, &L::max_peer_sessions_per_uid>),
  };
}

std::vector<Setting> EchoSettings() {
  return {
      {.key = "echo.enabled",
       .kind = K::kBool,
       .default_toml = "true",
       .help = "Serve the built-in echo service (rdmactl connect, ping, "
               "bench).",
       .env = "RDMAD_ECHO_ENABLED",
       .store = Store<&C::echo, &C::Echo::enabled>},
  };
}

std::vector<Setting> MetricsSettings() {
  return {
      {.key = "metrics.enabled",
       .kind = K::kBool,
       .default_toml = "false",
       .help = "Serve Prometheus metrics over HTTP at /metrics; read at start.",
       .env = "RDMAD_METRICS_ENABLED",
       .store = Store<&C::metrics, &C::Metrics::enabled>},
      {.key = "metrics.address",
       .kind = K::kString,
       .default_toml = "\"127.0.0.1\"",
       .help = "Address the metrics listener binds to (loopback unless told otherwise).",
       .env = "RDMAD_METRICS_ADDRESS",
       .check = CheckListenHost,
       .check_doc = "IP address or host name",
       .store = Store<&C::metrics, &C::Metrics::address>},
      {.key = "metrics.port",
       .kind = K::kInt,
       .default_toml = "9581",
       .help = "TCP port of the metrics listener.",
       .env = "RDMAD_METRICS_PORT",
       .min = 1,
       .max = 65535,
       .store = Store<&C::metrics, &C::Metrics::port>},
  };
}

std::vector<Setting> RailSettings() {
  return {
      {.key = "rails.topology_xml",
       .kind = K::kString,
       .default_toml = "\"\"",
       .help = "hwloc XML topology read instead of sysfs (lstopo --of xml); \"\": this host's.",
       .env = "RDMAD_RAILS_TOPOLOGY_XML",
       .check = CheckFilePath,
       .check_doc = "absolute path or \"\"",
       .store = Store<&C::rails, &C::Rails::topology_xml>},
      IntSetting("rails.per_channel", "0", 0, 8, "RDMAD_RAILS_PER_CHANNEL",
                 "Devices one channel stripes over: 0 every usable one that pairs with the "
                 "peer's, 1 one.",
                 Store<&C::rails, &C::Rails::per_channel>),
  };
}

std::vector<Setting> ClusterSettings() {
  return {
      {.key = "cluster.endpoints",
       .kind = K::kStringList,
       .default_toml = "[]",
       .help = "etcd endpoints where daemons find each other, HOST[:PORT] (2379); [] : none.",
       .env = "RDMAD_CLUSTER_ENDPOINTS",
       .check = CheckPeerAddress,
       .check_doc = "HOST[:PORT]",
       .store = Store<&C::cluster, &C::Cluster::endpoints>},
      {.key = "cluster.prefix",
       .kind = K::kString,
       .default_toml = "\"/rdmad/v1/\"",
       .help = "etcd key prefix of this cluster's members (daemon.node_name names this one).",
       .env = "RDMAD_CLUSTER_PREFIX",
       .check = CheckKeyPrefix,
       .check_doc = "/.../",
       .store = Store<&C::cluster, &C::Cluster::prefix>},
      {.key = "cluster.lease_ttl_s",
       .kind = K::kInt,
       .default_toml = "10",
       .help = "Seconds a member stays listed after its daemon stops renewing its lease.",
       .env = "RDMAD_CLUSTER_LEASE_TTL_S",
       .min = 2,
       .max = 3600,
       .store = Store<&C::cluster, &C::Cluster::lease_ttl_s>},
      {.key = "cluster.tls_ca",
       .kind = K::kString,
       .default_toml = "\"\"",
       .help = "PEM CA bundle for TLS to etcd (\"\": plain TCP).",
       .env = "RDMAD_CLUSTER_TLS_CA",
       .check = CheckFilePath,
       .check_doc = "absolute path or \"\"",
       .store = Store<&C::cluster, &C::Cluster::tls_ca>},
      {.key = "cluster.tls_cert",
       .kind = K::kString,
       .default_toml = "\"\"",
       .help = "PEM client certificate for etcd (with tls_ca and tls_key).",
       .env = "RDMAD_CLUSTER_TLS_CERT",
       .check = CheckFilePath,
       .check_doc = "absolute path or \"\"",
       .store = Store<&C::cluster, &C::Cluster::tls_cert>},
      {.key = "cluster.tls_key",
       .kind = K::kString,
       .default_toml = "\"\"",
       .help = "PEM private key of cluster.tls_cert.",
       .env = "RDMAD_CLUSTER_TLS_KEY",
       .check = CheckFilePath,
       .check_doc = "absolute path or \"\"",
       .store = Store<&C::cluster, &C::Cluster::tls_key>},
  };
}

std::vector<Setting> ArraySettings() {
  return {
      {.key = "peers.name",
       .kind = K::kString,
       .help = "Unique name of the peer daemon; [[pool]] entries refer to it.",
       .check = CheckPeerName,
       .check_doc = "[A-Za-z0-9._-]+, unique",
       .required = true,
       .example = "\"node2\"",
       .store = StoreLast<&C::peers, &PeerConfig::name>},
      {.key = "peers.address",
       .kind = K::kString,
       .help = "Where the peer daemon listens; the port defaults to 7581.",
       .check = CheckPeerAddress,
       .check_doc = "HOST, HOST:PORT or [IPV6]:PORT",
       .required = true,
       .example = "\"node2.example.net:7581\"",
       .store = StoreLast<&C::peers, &PeerConfig::address>},
      {.key = "pool.peer",
       .kind = K::kString,
       .help = "Peer to keep channels open to; names a [[peers]] entry.",
       .check = CheckPeerName,
       .check_doc = "a [[peers]] name",
       .required = true,
       .example = "\"node2\"",
       .store = StoreLast<&C::pool, &PoolTarget::peer>},
      {.key = "pool.service",
       .kind = K::kString,
       .help = "Service on that peer the pooled channels connect to.",
       .check = CheckServiceName,
       .check_doc = "[A-Za-z0-9._/-]+",
       .required = true,
       .example = "\"ollama\"",
       .store = StoreLast<&C::pool, &PoolTarget::service>},
      {.key = "pool.channels",
       .kind = K::kInt,
       .default_toml = "1",
       .help = "Warm channels each following application keeps to the service.",
       .min = 1,
       .max = 1024,
       .example = "4",
       .store = StoreLast<&C::pool, &PoolTarget::channels>},
  };
}

std::vector<Setting> BuildSettings() {
  std::vector<Setting> all;
  for (auto part : {DaemonSettings(), DeviceAndGidSettings(), QpAndLimitSettings(), EchoSettings(),
                    MetricsSettings(), RailSettings(), ClusterSettings(), ArraySettings()}) {
    for (Setting& s : part) all.push_back(std::move(s));
  }
  return all;
}

}  // namespace

const std::vector<Setting>& Settings() {
  static const std::vector<Setting>* const settings = new std::vector<Setting>(BuildSettings());
  return *settings;
}

const std::vector<SettingSection>& SettingSections() {
  static const std::vector<SettingSection>* const sections = new std::vector<SettingSection>{
      {"daemon", "The daemon: local API socket, logging, peer listener."},
      {"devices", "Which RDMA devices and ports rdmad may use."},
      {"gid",
       "How the GID (the RoCE source address) of a port is "
       "chosen."},
      {"mtu", "Path MTU."},
      {"qp", "Queue pair attributes."},
      {"limits", "Resource limits."},
      {"echo", "The daemon's own echo service, rdmad.echo."},
      {"metrics", "Prometheus metrics over HTTP (docs/operations.md, \"Metrics\")."},
      {"rails", "The host's topology and the rails (NICs) planned for each process."},
      {"cluster", "Cluster membership on etcd: members become peers without [[peers]] entries."},
      {"peers", "Peer daemons, one [[peers]] table each.", true,
       [](Config* c) { c->peers.emplace_back(); }},
      {"pool",
       "Warm channels that applications following the pool keep open, one "
       "[[pool]] table each.",
       true, [](Config* c) { c->pool.emplace_back(); }},
  };
  return *sections;
}

const std::vector<EnvAlias>& EnvAliases() {
  using AK = EnvAlias::Kind;
  static const std::vector<EnvAlias>* const aliases = new std::vector<EnvAlias>{
      {"RDMA_DEVICE", AK::kDeviceFilter, "devices",
       "Device filter, e.g. \"mlx5_0:1\" or \"^mlx5_1\"; replaces devices.*."},
      {"RDMA_QP_TYPE", AK::kSetting, "qp.type", "Same as RDMAD_QP_TYPE."},
      {"RDMA_MTU", AK::kMtu, "mtu.cap",
       "MTU cap 256..4096, rounded down to 256, 512, 1024, 2048 or 4096."},
      {"RDMA_TIMEOUT", AK::kSetting, "qp.timeout", "Same as RDMAD_QP_TIMEOUT."},
      {"RDMAD_DEVICES", AK::kDeviceFilter, "devices",
       "Device filter like RDMA_DEVICE; wins over it."},
  };
  return *aliases;
}

const Setting* FindSetting(std::string_view key) {
  for (const Setting& s : Settings()) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

const SettingSection* FindSection(std::string_view name) {
  for (const SettingSection& s : SettingSections()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace rdmad
