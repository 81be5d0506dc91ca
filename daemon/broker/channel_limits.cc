// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/channel_limits.h"

#include <fmt/format.h>

namespace rdmad {

Status ChannelLimits::JudgeDaemon(size_t live, size_t with_peer, const std::string& peer,
                                  size_t adding) const {
  if (max_channels_ > 0 && live + adding > max_channels_) {
    CountRefusal(refusals_, "limits.max_channels");
    return Status::ResourceExhausted(fmt::format(
        "rdmad on {} has {} channels open, its limit (limits.max_channels)", host_name_, live));
  }
  if (max_channels_per_peer_ > 0 && with_peer + adding > max_channels_per_peer_) {
    CountRefusal(refusals_, "limits.max_channels_per_peer");
    return Status::ResourceExhausted(
        fmt::format("rdmad on {} has {} channels open with {}, its limit "
                    "(limits.max_channels_per_peer)",
                    host_name_, with_peer, peer));
  }
  return Status::Ok();
}

Status ChannelLimits::JudgeOwner(const Caller& caller, bool planning, size_t client, size_t uid,
                                 size_t adding) const {
  const char* what = planning ? "channels planned and not connected" : "channels open";
  const char* kind = planning ? "plans" : "channels";
  size_t per_client = planning ? owner_.plans_per_client : owner_.channels_per_client;
  size_t per_uid = planning ? owner_.plans_per_uid : owner_.channels_per_uid;
  if (per_client > 0 && client + adding > per_client) {
    CountRefusal(refusals_,
                 planning ? "limits.max_plans_per_client" : "limits.max_channels_per_client");
    return Status::ResourceExhausted(
        fmt::format("client {} has {} {}, its limit (limits.max_{}_per_client = {})", caller.name,
                    client, what, kind, per_client));
  }
  if (per_uid > 0 && uid + adding > per_uid) {
    CountRefusal(refusals_, planning ? "limits.max_plans_per_uid" : "limits.max_channels_per_uid");
    return Status::ResourceExhausted(
        fmt::format("uid {} has {} {}, its limit (limits.max_{}_per_uid = {})", caller.uid, uid,
                    what, kind, per_uid));
  }
  return Status::Ok();
}

}  // namespace rdmad
