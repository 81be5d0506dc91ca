// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// rdmactl's --json output. Keys are the member names of the client
// library's structs (rdmad/devices.h, rdmad/client.h), which are also the
// proto field names, in declaration order; scripts and the lab tests rely on
// that, so a renamed key is an incompatible change.
//
// Thread safety: pure functions over values.

#ifndef RDMAD_CLIENT_RDMACTL_JSON_H_
#define RDMAD_CLIENT_RDMACTL_JSON_H_

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "nlohmann/json.hpp"
#include "rdmad/client.h"
#include "rdmad/devices.h"
#include "rdmad/fields.h"

namespace rdmactl {

using Json = nlohmann::ordered_json;

// Any record with a field list (rdmad/fields.h): every field under its
// API name, nested records and lists as JSON objects and arrays.
template <class T>
Json ValueJson(const T& value);
template <class Record>
Json RecordJson(const Record& record) {
  Json out = Json::object();
  rdmad::ForEachField(record, [&](const char* name, const auto& v) { out[name] = ValueJson(v); });
  return out;
}
template <class T>
Json ValueJson(const T& value) {
  if constexpr (rdmad::kHasFields<T>) {
    return RecordJson(value);
  } else if constexpr (std::is_enum_v<T>) {
    return Json(std::string(ApiName(value)));
  } else if constexpr (rdmad::kIsFieldList<T>) {
    Json list = Json::array();
    for (const auto& e : value) list.push_back(ValueJson(e));
    return list;
  } else if constexpr (rdmad::kIsOptionalField<T>) {
    return value ? ValueJson(*value) : Json(nullptr);
  } else {
    return Json(value);
  }
}

// {"devices": [RecordJson(device)...]}
Json DevicesJson(const std::vector<rdmad::Device>& devices);

// {"gids": [{"device","port","index","gid","type","netdev","ip"}...]}
Json GidsJson(const std::vector<rdmad::Device>& devices);

// {"peer", then every rdmad::Path field, "qp": {...}, "reasons": [...]}
Json PathJson(const std::string& peer, const rdmad::Path& path);

// {"peer", "transport": "TCP", "reason"}: no RDMA path to the peer.
Json TcpFallbackJson(const std::string& peer, const std::string& reason);

// {"device", "port", "counters": {name: value}}
Json CountersJson(const std::string& device, uint32_t port, const rdmad::PortCounters& counters);

// The DaemonStatus fields (device_count as "device_count") plus "devices":
// [{"name", "node_type", "transport", "ports", "active_ports"}].
Json StatusJson(const rdmad::DaemonStatus& status, const std::vector<rdmad::Device>& devices);

// json as text (indent < 0: one line). Never throws: bytes that are not
// UTF-8 (sysfs and kernel strings need not be) become U+FFFD.
std::string DumpJson(const Json& json, int indent);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_JSON_H_
