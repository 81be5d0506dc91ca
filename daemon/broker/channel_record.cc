// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/channel_record.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>

namespace rdmad {

std::string DescribeChannel(const ChannelRecord& r) {
  return fmt::format("channel {:#018x} ({} {} service {})", r.channel_id,
                     r.initiator ? "to" : "from", r.peer, r.service);
}

Status RefuseUnshared(const std::string& asker, std::string_view asked, uint64_t channel_id,
                      const std::string& instance, const std::string& host) {
  spdlog::warn("rdmad instance {} asked to {} channel {:#018x}, which it does not share; refused",
               asker, asked, channel_id);
  return Status::NotFound(fmt::format("no channel {:#018x} shared with rdmad instance {} on {}",
                                      channel_id, instance, host));
}

bool IsInstanceId(const std::string& id) {
  return id.size() == 32 && std::all_of(id.begin(), id.end(), [](unsigned char c) {
           return std::isdigit(c) || (c >= 'a' && c <= 'f');
         });
}

std::vector<ChannelRailRecord> RailsOf(const ChannelEndpoint& initiator,
                                       const ChannelEndpoint& acceptor, bool initiator_side) {
  std::vector<ChannelRailRecord> rails;
  if (!initiator.rdma || !acceptor.rdma) return rails;
  const internal::RdmaEndpoint& i = *initiator.rdma;
  const internal::RdmaEndpoint& a = *acceptor.rdma;
  auto add = [&](const std::string& initiator_device, const std::string& acceptor_device) {
    ChannelRailRecord rail;
    rail.device = initiator_side ? initiator_device : acceptor_device;
    rail.peer_device = initiator_side ? acceptor_device : initiator_device;
    rails.push_back(std::move(rail));
  };
  add(i.device, a.device);
  for (const internal::RailEndpoint& r : a.rails) {
    if (r.pair < i.rails.size()) add(i.rails[r.pair].device, r.device);
  }
  return rails;
}

}  // namespace rdmad
