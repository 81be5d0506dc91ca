// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/broker/channel_teller.h"

#include <spdlog/spdlog.h>

#include "daemon/broker/channel_table.h"

namespace rdmad {

void PendingOpen::Complete(StatusOr<ChannelEndpoints> result) {
  std::lock_guard lock(mu);
  if (answer) return;
  answer = std::move(result);
  cv.notify_all();
}

StatusOr<ChannelEndpoints> PendingOpen::Wait() {
  std::unique_lock lock(mu);
  cv.wait(lock, [this] { return answer.has_value(); });
  return *answer;
}

void ChannelTeller::Deliver(std::vector<ChannelEnding> endings) const {
  std::vector<uint64_t> told;
  for (ChannelEnding& e : endings) {
    const ChannelRecord& r = e.record;
    if (!e.late) {
      spdlog::info("{} {}: {}", DescribeChannel(r), ChannelStateName(r.state), r.reason);
      for (auto& holder : e.holders) holder->OnChannelEnded(r.state, r.reason);
      if (e.open) e.open->Complete(Status::Unavailable(r.reason));
      if (!r.initiator && e.was_established) {
        services_->NotifyClosed(r.service, r.channel_id, r.reason);
      }
    }
    if (e.tell_peer) {
      TellPeer(r, e.peer_key, e.peer_reason);
      told.push_back(r.channel_id);
    }
  }
  if (!told.empty()) table_->ToldPeer(told);  // their sessions are named now
}

// Through a link to the peer's instance (either role), else the initiator's
// session to the peer, else an event on the peer's session to this daemon.
void ChannelTeller::TellPeer(const ChannelRecord& r, const std::string& peer_key,
                             const std::string& reason) const {
  CloseChannelCall call{.channel_id = r.channel_id,
                        .reason = reason.substr(0, internal::kMaxReasonLength),
                        .initiator_instance = instance_id_};
  std::shared_ptr<PeerLink> link;
  if (!r.peer_instance.empty()) {
    auto found = network_->LinkToInstance(r.peer_instance);
    if (found.ok()) link = found.value();
  }
  if (!link && r.initiator) {
    StatusOr<BrokerPeer> peer = network_->FindPeer(peer_key, std::nullopt);
    if (peer.ok() && peer->link.ok() && peer->instance_id == r.peer_instance) {
      link = peer->link.value();
    }
  }
  auto fallback = [network = network_, call, instance = r.peer_instance,
                   what = DescribeChannel(r)](const std::string& why) {
    if (!instance.empty()) {
      PeerEvent event;
      event.kind = PeerEvent::Kind::kChannelClosed;
      event.channel_id = call.channel_id;
      event.reason = call.reason;
      Status sent = network->SendEvent(instance, event);
      if (sent.ok()) {
        spdlog::debug("{}: peer told on its session stream ({})", what, why);
        return;
      }
      spdlog::info("{}: the peer daemon was not told that it ended: {}; {}", what, why,
                   sent.message());
      return;
    }
    spdlog::info("{}: the peer daemon was not told that it ended: {}", what, why);
  };
  if (!link) {
    fallback("no session to the peer daemon");
    return;
  }
  link->CloseChannel(call, [fallback, what = DescribeChannel(r)](const Status& status) {
    if (status.ok()) {
      spdlog::debug("{}: peer daemon told", what);
    } else if (status.code() == StatusCode::kNotFound) {
      spdlog::info("{}: the peer daemon no longer knows it: {}", what, status.message());
    } else if (status.code() != StatusCode::kCancelled) {
      fallback("CloseChannel: " + status.ToString());
    }
  });
}

}  // namespace rdmad
