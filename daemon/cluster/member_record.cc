// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/cluster/member_record.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace rdmad {
namespace {

using Json = nlohmann::json;

constexpr size_t kMaxPorts = 256;
constexpr size_t kMaxServices = 4096;
constexpr size_t kMaxText = 255;

bool IsName(const std::string& s) {
  return !s.empty() && s.size() <= kMaxText && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
  });
}

// Whether the resolver would read s as an address: inet_aton's forms too
// ("127.1", "0x7f000001"), as getaddrinfo does.
bool IsIpLiteral(const std::string& s) {
  in_addr v4{};
  unsigned char v6[sizeof(in6_addr)];
  return inet_aton(s.c_str(), &v4) != 0 || inet_pton(AF_INET6, s.c_str(), v6) == 1;
}

bool IsText(const std::string& s) {
  return s.size() <= kMaxText && std::all_of(s.begin(), s.end(), [](char c) {
           return static_cast<unsigned char>(c) >= ' ' && c != 0x7f;
         });
}

// j[key] as a T, or an error naming it.
template <typename T>
Status Field(const Json& j, const char* key, T* out) {
  auto it = j.find(key);
  if (it == j.end())
    return Status::InvalidArgument(std::string("member record: no \"") + key + "\"");
  try {
    *out = it->get<T>();
  } catch (const Json::exception&) {
    return Status::InvalidArgument(std::string("member record: \"") + key +
                                   "\" has the wrong type");
  }
  return Status::Ok();
}

}  // namespace

std::string MembersPrefix(const std::string& prefix) { return prefix + "members/"; }

std::string MemberKey(const std::string& prefix, const std::string& name) {
  return MembersPrefix(prefix) + name;
}

std::string EncodeMemberRecord(const MemberRecord& r) {
  Json ports = Json::array();
  for (const MemberPort& p : r.ports) {
    ports.push_back({{"device", p.device},
                     {"port", p.port},
                     {"transport", p.transport},
                     {"state", p.state},
                     {"active_mtu", p.active_mtu}});
  }
  Json j = {{"name", r.name},       {"peer_address", r.peer_address},
            {"version", r.version}, {"protocol", r.protocol},
            {"ports", ports},       {"services", r.services}};
  return j.dump();
}

StatusOr<MemberRecord> DecodeMemberRecord(std::string_view text) {
  if (text.size() > kMaxMemberRecordBytes) {
    return Status::InvalidArgument("member record: " + std::to_string(text.size()) +
                                   " bytes, more than " + std::to_string(kMaxMemberRecordBytes));
  }
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument("member record: not a JSON object");
  }
  MemberRecord r;
  RDMAD_RETURN_IF_ERROR(Field(j, "name", &r.name));
  RDMAD_RETURN_IF_ERROR(Field(j, "peer_address", &r.peer_address));
  RDMAD_RETURN_IF_ERROR(Field(j, "version", &r.version));
  RDMAD_RETURN_IF_ERROR(Field(j, "protocol", &r.protocol));
  if (!IsName(r.name)) return Status::InvalidArgument("member record: a bad name");
  if (IsIpLiteral(r.name)) {
    // A member named 192.0.2.7 would shadow that address: connecting to
    // the IP would reach whatever peer_address the record gives.
    return Status::InvalidArgument("member record: the name " + r.name +
                                   " is an IP address, which a member name may not be");
  }
  if (r.peer_address.empty() || !IsText(r.peer_address) ||
      r.peer_address.find(' ') != std::string::npos) {
    return Status::InvalidArgument("member record " + r.name + ": a bad peer_address");
  }
  if (!IsText(r.version))
    return Status::InvalidArgument("member record " + r.name + ": a bad version");
  Json ports;
  RDMAD_RETURN_IF_ERROR(Field(j, "ports", &ports));
  if (!ports.is_array() || ports.size() > kMaxPorts) {
    return Status::InvalidArgument("member record " + r.name + ": \"ports\" is not a short array");
  }
  for (const Json& p : ports) {
    if (!p.is_object()) return Status::InvalidArgument("member record " + r.name + ": a bad port");
    MemberPort port;
    RDMAD_RETURN_IF_ERROR(Field(p, "device", &port.device));
    RDMAD_RETURN_IF_ERROR(Field(p, "port", &port.port));
    RDMAD_RETURN_IF_ERROR(Field(p, "transport", &port.transport));
    RDMAD_RETURN_IF_ERROR(Field(p, "state", &port.state));
    RDMAD_RETURN_IF_ERROR(Field(p, "active_mtu", &port.active_mtu));
    if (!IsName(port.device) || !IsText(port.transport) || !IsText(port.state)) {
      return Status::InvalidArgument("member record " + r.name + ": a bad port");
    }
    r.ports.push_back(std::move(port));
  }
  Json services;
  RDMAD_RETURN_IF_ERROR(Field(j, "services", &services));
  if (!services.is_array() || services.size() > kMaxServices) {
    return Status::InvalidArgument("member record " + r.name +
                                   ": \"services\" is not a short array");
  }
  for (const Json& s : services) {
    if (!s.is_string() || !IsText(s.get<std::string>()) || s.get<std::string>().empty()) {
      return Status::InvalidArgument("member record " + r.name + ": a bad service name");
    }
    r.services.push_back(s.get<std::string>());
  }
  std::sort(r.services.begin(), r.services.end());
  return r;
}

}  // namespace rdmad
