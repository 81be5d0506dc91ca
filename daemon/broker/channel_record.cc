// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/channel_record.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace rdmad {

std::string DescribeChannel(const ChannelRecord& r) {
  return fmt::format("channel {:#018x} ({} {} service {})", r.channel_id,
                     r.initiator ? "to" : "from", r.peer, r.service);
}

bool IsInstanceId(const std::string& id) {
  return id.size() == 32 && std::all_of(id.begin(), id.end(), [](unsigned char c) {
           return std::isdigit(c) || (c >= 'a' && c <= 'f');
         });
}

}  // namespace rdmad
