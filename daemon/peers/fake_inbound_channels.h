// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// FakeInboundChannels: an InboundChannels (peer_inbound.h) for tests. It
// records every call and answers what the test set: open_result,
// close_results by channel id (else close_default), reclaim_result.
//
// Thread safety: the calls lock mu; a test reads the records under mu when
// calls may still arrive on other threads.

#ifndef RDMAD_DAEMON_PEERS_FAKE_INBOUND_CHANNELS_H_
#define RDMAD_DAEMON_PEERS_FAKE_INBOUND_CHANNELS_H_

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "daemon/peers/peer_inbound.h"

namespace rdmad {

class FakeInboundChannels final : public InboundChannels {
 public:
  StatusOr<ChannelEndpoints> OnOpenChannel(const OpenChannelCall& call,
                                           const std::string& peer_ip) override {
    std::lock_guard lock(mu);
    opens.push_back(call);
    return open_result;
  }
  Status OnCloseChannel(const CloseChannelCall& call) override {
    std::lock_guard lock(mu);
    closes.push_back(call);
    auto it = close_results.find(call.channel_id);
    return it != close_results.end() ? it->second : close_default;
  }
  Status OnReclaimChannel(const ReclaimChannelCall& call) override {
    std::lock_guard lock(mu);
    reclaims.push_back(call);
    return reclaim_result;
  }
  void OnSessionStreamLost(const std::string& instance_id, const std::string& host_name) override {
    std::lock_guard lock(mu);
    lost.push_back(instance_id + " " + host_name);
  }

  std::mutex mu;
  StatusOr<ChannelEndpoints> open_result = Status::NotFound("no service");
  Status close_default = Status::Ok();
  std::map<uint64_t, Status> close_results;
  Status reclaim_result = Status::Ok();
  std::vector<OpenChannelCall> opens;
  std::vector<CloseChannelCall> closes;
  std::vector<ReclaimChannelCall> reclaims;
  std::vector<std::string> lost;  // "INSTANCE HOST"
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_PEERS_FAKE_INBOUND_CHANNELS_H_
