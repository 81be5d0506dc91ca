// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// MemberRecord: what a daemon says about itself in the cluster's store,
// under PREFIX members/NAME, as JSON: its name, where its peer listener is,
// its version and peer protocol, its RDMA ports and the services its local
// applications listen on. Another daemon's record is input from the
// network: DecodeMemberRecord checks every field and bounds every size.
//
// Thread safety: values and pure functions.

#ifndef RDMAD_DAEMON_CLUSTER_MEMBER_RECORD_H_
#define RDMAD_DAEMON_CLUSTER_MEMBER_RECORD_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rdmad/status.h"

namespace rdmad {

struct MemberPort {
  std::string device;
  uint32_t port = 0;
  std::string transport;  // "RoCE v2", "InfiniBand", ...
  std::string state;      // "ACTIVE", "DOWN", ...
  uint32_t active_mtu = 0;
  friend bool operator==(const MemberPort&, const MemberPort&) = default;
};

struct MemberRecord {
  std::string name;
  std::string peer_address;  // HOST:PORT of its peer listener
  std::string version;
  uint32_t protocol = 0;  // its peer protocol version
  std::vector<MemberPort> ports;
  std::vector<std::string> services;  // sorted
  friend bool operator==(const MemberRecord&, const MemberRecord&) = default;
};

inline constexpr size_t kMaxMemberRecordBytes = 64 * 1024;

std::string EncodeMemberRecord(const MemberRecord& record);
// INVALID_ARGUMENT naming what is wrong: not JSON, a field missing or of
// the wrong type, a bad name or address, too large.
StatusOr<MemberRecord> DecodeMemberRecord(std::string_view json);

// The store key of member name under prefix: PREFIX "members/" NAME.
std::string MemberKey(const std::string& prefix, const std::string& name);
// The prefix of every member key.
std::string MembersPrefix(const std::string& prefix);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_CLUSTER_MEMBER_RECORD_H_
