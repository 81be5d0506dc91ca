// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/channel_record.h"

#include <fmt/format.h>

namespace rdmad {

std::string DescribeChannel(const ChannelRecord& r) {
  return fmt::format("channel {:#018x} ({} {} service {})", r.channel_id,
                     r.initiator ? "to" : "from", r.peer, r.service);
}

}  // namespace rdmad
