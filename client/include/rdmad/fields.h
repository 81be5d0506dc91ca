// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The field lists of the public records (devices.h, daemon_status.h,
// cluster.h, peers.h, client.h's Event, PoolSummary and ChannelSummary): each record's fields
// once, named as the local API's messages (proto/rdmad/v1/rdmad.proto) name
// them. Code that shows or converts a whole record walks its list instead of
// naming the fields again: the library's conversion from the API's
// messages, rdmactl's JSON, the Python package's records. A test
// (client/rdmactl/json_fields_test.cc) fails when a message has a field its record's
// list lacks, or the other way round.
//
//   rdmad::ForEachField(port, [](const char* name, const auto& value) { ... });
//
// Thread safety: constant tables; ForEachField is as safe as the record.

#ifndef RDMAD_FIELDS_H_
#define RDMAD_FIELDS_H_

#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "rdmad/client.h"
#include "rdmad/cluster.h"
#include "rdmad/daemon_status.h"
#include "rdmad/devices.h"
#include "rdmad/events.h"
#include "rdmad/peers.h"
#include "rdmad/topology.h"

namespace rdmad {

// One field: its name in the API and the member that holds it.
template <class Record, class T>
struct Field {
  const char* name;
  T Record::*member;
};

template <class Record, class T>
constexpr Field<Record, T> MakeField(const char* name, T Record::*member) {
  return {name, member};
}

// Specialised for each record: kName (the API message's name) and kFields.
template <class Record>
struct RecordFields;

// Whether T is a record with a field list.
template <class T, class = void>
struct HasFields : std::false_type {};
template <class T>
struct HasFields<T, std::void_t<decltype(RecordFields<T>::kFields)>> : std::true_type {};
template <class T>
inline constexpr bool kHasFields = HasFields<T>::value;

// An enum field: its values are the message's enum numbers, 0 the
// unspecified one (a number past kMax reads as 0), and ApiName (found by
// argument-dependent lookup) names a value for people: JSON, Python.
template <class E>
struct ApiEnum;
template <>
struct ApiEnum<PeerState> {
  static constexpr int kMax = 6;
};
template <>
struct ApiEnum<EventKind> {
  static constexpr int kMax = static_cast<int>(kLastEventKind);
};
inline std::string_view ApiName(PeerState state) { return PeerStateName(state); }
inline std::string_view ApiName(EventKind kind) { return EventKindName(kind); }

// A repeated field: a std::vector of values or records.
template <class T>
struct FieldList : std::false_type {};
template <class T>
struct FieldList<std::vector<T>> : std::true_type {
  using Element = T;
};
template <class T>
inline constexpr bool kIsFieldList = FieldList<T>::value;

// A field the message may leave unset (proto3 `optional`): std::optional,
// null in JSON, None in Python.
template <class T>
struct OptionalField : std::false_type {};
template <class T>
struct OptionalField<std::optional<T>> : std::true_type {
  using Value = T;
};
template <class T>
inline constexpr bool kIsOptionalField = OptionalField<T>::value;

// Calls fn(name, member) for each field of record, in the list's order.
template <class Record, class Fn>
void ForEachField(Record& record, Fn&& fn) {
  using R = std::remove_const_t<Record>;
  std::apply([&](const auto&... field) { (fn(field.name, record.*(field.member)), ...); },
             RecordFields<R>::kFields);
}

template <>
struct RecordFields<Gid> {
  static constexpr const char* kName = "Gid";
  static constexpr auto kFields = std::make_tuple(
      MakeField("index", &Gid::index), MakeField("gid", &Gid::gid), MakeField("type", &Gid::type),
      MakeField("netdev", &Gid::netdev), MakeField("ip", &Gid::ip));
};

template <>
struct RecordFields<Port> {
  static constexpr const char* kName = "Port";
  static constexpr auto kFields = std::make_tuple(
      MakeField("port", &Port::port), MakeField("state", &Port::state),
      MakeField("state_code", &Port::state_code), MakeField("phys_state", &Port::phys_state),
      MakeField("link_layer", &Port::link_layer), MakeField("transport", &Port::transport),
      MakeField("rate_gbps", &Port::rate_gbps), MakeField("rate", &Port::rate),
      MakeField("max_mtu", &Port::max_mtu), MakeField("active_mtu", &Port::active_mtu),
      MakeField("lid", &Port::lid), MakeField("sm_lid", &Port::sm_lid),
      MakeField("netdev", &Port::netdev), MakeField("netdev_mtu", &Port::netdev_mtu),
      MakeField("gids", &Port::gids));
};

template <>
struct RecordFields<Device> {
  static constexpr const char* kName = "Device";
  static constexpr auto kFields = std::make_tuple(
      MakeField("name", &Device::name), MakeField("node_guid", &Device::node_guid),
      MakeField("vendor_id", &Device::vendor_id),
      MakeField("vendor_part_id", &Device::vendor_part_id), MakeField("vendor", &Device::vendor),
      MakeField("driver", &Device::driver), MakeField("fw_ver", &Device::fw_ver),
      MakeField("hw_rev", &Device::hw_rev), MakeField("node_type", &Device::node_type),
      MakeField("numa_node", &Device::numa_node), MakeField("pci_address", &Device::pci_address),
      MakeField("parent_netdev", &Device::parent_netdev), MakeField("max_qp", &Device::max_qp),
      MakeField("max_mr", &Device::max_mr), MakeField("max_cq", &Device::max_cq),
      MakeField("relaxed_ordering", &Device::relaxed_ordering),
      MakeField("dmabuf", &Device::dmabuf), MakeField("ports", &Device::ports));
};

template <>
struct RecordFields<QpAttributes> {
  static constexpr const char* kName = "QpAttributes";
  static constexpr auto kFields = std::make_tuple(
      MakeField("type", &QpAttributes::type), MakeField("timeout", &QpAttributes::timeout),
      MakeField("retry_cnt", &QpAttributes::retry_cnt),
      MakeField("rnr_retry", &QpAttributes::rnr_retry),
      MakeField("min_rnr_timer", &QpAttributes::min_rnr_timer),
      MakeField("traffic_class", &QpAttributes::traffic_class),
      MakeField("service_level", &QpAttributes::service_level),
      MakeField("hop_limit", &QpAttributes::hop_limit),
      MakeField("max_inline", &QpAttributes::max_inline),
      MakeField("send_depth", &QpAttributes::send_depth),
      MakeField("recv_depth", &QpAttributes::recv_depth),
      MakeField("qps_per_channel", &QpAttributes::qps_per_channel),
      MakeField("spin_us", &QpAttributes::spin_us),
      MakeField("relaxed_ordering", &QpAttributes::relaxed_ordering),
      MakeField("slot_size", &QpAttributes::slot_size));
};

template <>
struct RecordFields<Path> {
  static constexpr const char* kName = "Path";
  static constexpr auto kFields = std::make_tuple(
      MakeField("device", &Path::device), MakeField("port", &Path::port),
      MakeField("transport", &Path::transport), MakeField("gid_index", &Path::gid_index),
      MakeField("gid", &Path::gid), MakeField("gid_type", &Path::gid_type),
      MakeField("source_ip", &Path::source_ip), MakeField("netdev", &Path::netdev),
      MakeField("lid", &Path::lid), MakeField("mtu", &Path::mtu),
      MakeField("local_active_mtu", &Path::local_active_mtu),
      MakeField("peer_active_mtu", &Path::peer_active_mtu), MakeField("mtu_cap", &Path::mtu_cap),
      MakeField("qp", &Path::qp), MakeField("reasons", &Path::reasons));
};

template <>
struct RecordFields<TopologyPlace> {
  static constexpr const char* kName = "TopologyPlace";
  static constexpr auto kFields = std::make_tuple(
      MakeField("pci_address", &TopologyPlace::pci_address),
      MakeField("pcie_path", &TopologyPlace::pcie_path),
      MakeField("numa_node", &TopologyPlace::numa_node), MakeField("cpus", &TopologyPlace::cpus));
};

template <>
struct RecordFields<TopologyNic> {
  static constexpr const char* kName = "TopologyNic";
  static constexpr auto kFields = std::make_tuple(
      MakeField("name", &TopologyNic::name), MakeField("netdev", &TopologyNic::netdev),
      MakeField("place", &TopologyNic::place), MakeField("to_gpus", &TopologyNic::to_gpus),
      MakeField("to_nics", &TopologyNic::to_nics), MakeField("usable", &TopologyNic::usable),
      MakeField("plans", &TopologyNic::plans));
};

template <>
struct RecordFields<PlannedRail> {
  static constexpr const char* kName = "PlannedRail";
  static constexpr auto kFields = std::make_tuple(
      MakeField("device", &PlannedRail::device), MakeField("path", &PlannedRail::path),
      MakeField("sharing", &PlannedRail::sharing), MakeField("port", &PlannedRail::port),
      MakeField("gid_index", &PlannedRail::gid_index),
      MakeField("gid_type", &PlannedRail::gid_type), MakeField("netdev", &PlannedRail::netdev));
};

template <>
struct RecordFields<RailPlan> {
  static constexpr const char* kName = "RailPlan";
  static constexpr auto kFields = std::make_tuple(
      MakeField("near", &RailPlan::near), MakeField("rails", &RailPlan::rails),
      MakeField("reason", &RailPlan::reason), MakeField("traffic_class", &RailPlan::traffic_class));
};

template <>
struct RecordFields<RailAssignment> {
  static constexpr const char* kName = "RailAssignment";
  static constexpr auto kFields = std::make_tuple(
      MakeField("pid", &RailAssignment::pid), MakeField("uid", &RailAssignment::uid),
      MakeField("place", &RailAssignment::place), MakeField("plan", &RailAssignment::plan));
};

template <>
struct RecordFields<TopologyGpu> {
  static constexpr const char* kName = "TopologyGpu";
  static constexpr auto kFields = std::make_tuple(
      MakeField("index", &TopologyGpu::index), MakeField("vendor", &TopologyGpu::vendor),
      MakeField("model", &TopologyGpu::model), MakeField("vendor_id", &TopologyGpu::vendor_id),
      MakeField("device_id", &TopologyGpu::device_id),
      MakeField("class_id", &TopologyGpu::class_id), MakeField("place", &TopologyGpu::place));
};

template <>
struct RecordFields<HostTopology> {
  static constexpr const char* kName = "GetTopologyResponse";
  static constexpr auto kFields = std::make_tuple(
      MakeField("source", &HostTopology::source), MakeField("machine", &HostTopology::machine),
      MakeField("numa_nodes", &HostTopology::numa_nodes), MakeField("nics", &HostTopology::nics),
      MakeField("gpus", &HostTopology::gpus), MakeField("error", &HostTopology::error),
      MakeField("plans", &HostTopology::plans));
};

template <>
struct RecordFields<PoolSummary> {
  static constexpr const char* kName = "PoolRow";
  static constexpr auto kFields = std::make_tuple(
      MakeField("client_id", &PoolSummary::client_id), MakeField("pid", &PoolSummary::pid),
      MakeField("peer", &PoolSummary::peer), MakeField("service", &PoolSummary::service),
      MakeField("target", &PoolSummary::target), MakeField("source", &PoolSummary::source),
      MakeField("warm", &PoolSummary::warm), MakeField("in_use", &PoolSummary::in_use),
      MakeField("last_error", &PoolSummary::last_error));
};

template <>
struct RecordFields<ClusterMemberPort> {
  static constexpr const char* kName = "MemberPort";
  static constexpr auto kFields = std::make_tuple(
      MakeField("device", &ClusterMemberPort::device), MakeField("port", &ClusterMemberPort::port),
      MakeField("transport", &ClusterMemberPort::transport),
      MakeField("state", &ClusterMemberPort::state),
      MakeField("active_mtu", &ClusterMemberPort::active_mtu));
};

template <>
struct RecordFields<ClusterMember> {
  static constexpr const char* kName = "Member";
  static constexpr auto kFields = std::make_tuple(
      MakeField("name", &ClusterMember::name),
      MakeField("peer_address", &ClusterMember::peer_address),
      MakeField("version", &ClusterMember::version),
      MakeField("protocol", &ClusterMember::protocol), MakeField("ports", &ClusterMember::ports),
      MakeField("services", &ClusterMember::services), MakeField("self", &ClusterMember::self));
};

// The view's own fields first, its members last (as rdmactl shows them).
template <>
struct RecordFields<ClusterView> {
  static constexpr const char* kName = "ListMembersResponse";
  static constexpr auto kFields =
      std::make_tuple(MakeField("endpoints", &ClusterView::endpoints),
                      MakeField("reachable", &ClusterView::reachable),
                      MakeField("last_error", &ClusterView::last_error),
                      MakeField("unreachable_seconds", &ClusterView::unreachable_seconds),
                      MakeField("revision", &ClusterView::revision),
                      MakeField("registered", &ClusterView::registered),
                      MakeField("members", &ClusterView::members));
};

template <>
struct RecordFields<PeerInfo> {
  static constexpr const char* kName = "Peer";
  static constexpr auto kFields = std::make_tuple(
      MakeField("name", &PeerInfo::name), MakeField("address", &PeerInfo::address),
      MakeField("state", &PeerInfo::state), MakeField("rtt_ms", &PeerInfo::rtt_ms),
      MakeField("last_error", &PeerInfo::last_error),
      MakeField("remote_host", &PeerInfo::remote_host),
      MakeField("remote_version", &PeerInfo::remote_version),
      MakeField("remote_protocol", &PeerInfo::remote_protocol),
      MakeField("remote_transports", &PeerInfo::remote_transports),
      MakeField("configured", &PeerInfo::configured), MakeField("origin", &PeerInfo::origin),
      MakeField("state_seconds", &PeerInfo::state_seconds),
      MakeField("channels", &PeerInfo::channels),
      MakeField("circuit_open_until_unix_ms", &PeerInfo::circuit_open_until_unix_ms),
      MakeField("failures", &PeerInfo::failures),
      MakeField("clock_offset_ms", &PeerInfo::clock_offset_ms));
};

template <>
struct RecordFields<Event> {
  static constexpr const char* kName = "Event";
  static constexpr auto kFields = std::make_tuple(
      MakeField("sequence", &Event::sequence), MakeField("unix_time_ms", &Event::unix_time_ms),
      MakeField("kind", &Event::kind), MakeField("message", &Event::message),
      MakeField("device", &Event::device), MakeField("port", &Event::port));
};

template <>
struct RecordFields<ChannelRail> {
  static constexpr const char* kName = "ChannelRail";
  static constexpr auto kFields =
      std::make_tuple(MakeField("device", &ChannelRail::local_device),
                      MakeField("peer_device", &ChannelRail::peer_device),
                      MakeField("bytes_written", &ChannelRail::bytes_written),
                      MakeField("bytes_read", &ChannelRail::bytes_read),
                      MakeField("up", &ChannelRail::up), MakeField("reason", &ChannelRail::reason));
};

template <>
struct RecordFields<ChannelTraffic> {
  static constexpr const char* kName = "ChannelTraffic";
  static constexpr auto kFields =
      std::make_tuple(MakeField("channel_id", &ChannelTraffic::channel_id),
                      MakeField("messages_sent", &ChannelTraffic::messages_sent),
                      MakeField("bytes_sent", &ChannelTraffic::bytes_sent),
                      MakeField("messages_received", &ChannelTraffic::messages_received),
                      MakeField("bytes_received", &ChannelTraffic::bytes_received),
                      MakeField("writes", &ChannelTraffic::writes),
                      MakeField("bytes_written", &ChannelTraffic::bytes_written),
                      MakeField("reads", &ChannelTraffic::reads),
                      MakeField("bytes_read", &ChannelTraffic::bytes_read),
                      MakeField("latency_buckets", &ChannelTraffic::latency_buckets),
                      MakeField("latency_sum_ns", &ChannelTraffic::latency_sum_ns));
};

// A row of the daemon's channel table (Client::ListChannels).
template <>
struct RecordFields<ChannelSummary> {
  static constexpr const char* kName = "ChannelEntry";
  static constexpr auto kFields = std::make_tuple(
      MakeField("id", &ChannelSummary::id), MakeField("peer", &ChannelSummary::peer),
      MakeField("service", &ChannelSummary::service), MakeField("role", &ChannelSummary::role),
      MakeField("transport", &ChannelSummary::transport),
      MakeField("state", &ChannelSummary::state), MakeField("reason", &ChannelSummary::reason),
      MakeField("age_seconds", &ChannelSummary::age_seconds),
      MakeField("owner_uid", &ChannelSummary::owner_uid),
      MakeField("owner_pid", &ChannelSummary::owner_pid),
      MakeField("rails", &ChannelSummary::rails), MakeField("traffic", &ChannelSummary::traffic));
};

// rdmactl status and Client.status() in Python show these under names of
// their own (docs/operations.md); the library reads them by this list.
template <>
struct RecordFields<DaemonStatus> {
  static constexpr const char* kName = "GetStatusResponse";
  static constexpr auto kFields = std::make_tuple(
      MakeField("version", &DaemonStatus::version), MakeField("pid", &DaemonStatus::pid),
      MakeField("uptime_seconds", &DaemonStatus::uptime_seconds),
      MakeField("config_file", &DaemonStatus::config_file),
      MakeField("config_generation", &DaemonStatus::config_generation),
      MakeField("socket_path", &DaemonStatus::socket_path),
      MakeField("device_count", &DaemonStatus::device_count),
      MakeField("port_count", &DaemonStatus::port_count),
      MakeField("active_port_count", &DaemonStatus::active_port_count),
      MakeField("peer_count", &DaemonStatus::peer_count),
      MakeField("service_count", &DaemonStatus::service_count),
      MakeField("channel_count", &DaemonStatus::channel_count),
      MakeField("connections_accepted", &DaemonStatus::connections_accepted),
      MakeField("event_subscribers", &DaemonStatus::event_subscribers),
      MakeField("cluster", &DaemonStatus::cluster),
      MakeField("cluster_error", &DaemonStatus::cluster_error),
      MakeField("cluster_members", &DaemonStatus::cluster_members),
      MakeField("config_loaded_unix_ms", &DaemonStatus::config_loaded_unix_ms),
      MakeField("config_reload_error", &DaemonStatus::config_reload_error));
};

}  // namespace rdmad

#endif  // RDMAD_FIELDS_H_
