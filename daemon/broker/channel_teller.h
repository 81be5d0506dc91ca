// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ChannelTeller: what follows, outside the broker's lock, from a channel
// that ended: its holders hear it (the applications' lifelines), an
// initiator's Connect still waiting for the peer wakes, the listener of
// an accepted channel is told, and the peer daemon learns it
// (CloseChannel through a link to its instance or the initiator's session,
// else a ChannelClosed event on its session stream to this daemon).
//
// Thread safety: Deliver may be called from any thread at once and does
// not block (the peer's answer completes on the transport's thread).
// ChannelHolder callbacks must not block.

#ifndef RDMAD_DAEMON_BROKER_CHANNEL_TELLER_H_
#define RDMAD_DAEMON_BROKER_CHANNEL_TELLER_H_

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "daemon/broker/broker_network.h"
#include "daemon/broker/channel_record.h"
#include "daemon/broker/service_registry.h"
#include "daemon/peers/channel_endpoint.h"
#include "rdmad/status.h"

namespace rdmad {

class ChannelTable;

// Where an ended channel is reported: the application's HoldChannel stream.
class ChannelHolder {
 public:
  virtual ~ChannelHolder() = default;
  // The channel ended (kClosed or kFailed) with reason, as its application
  // should see it. At most once per hold; must not block.
  virtual void OnChannelEnded(ChannelState state, const std::string& reason) = 0;
  // The daemon is stopping and leaves the channel to its application: the
  // hold should end now (the application re-attaches to the next rdmad).
  // Must not block.
  virtual void OnDaemonStopping(const std::string& why) {}
};

// An initiator's OpenChannel in flight: the peer's answer, or the
// channel's end (peer lost) if that comes first.
struct PendingOpen {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<StatusOr<ChannelEndpoints>> answer;  // guarded by mu
  void Complete(StatusOr<ChannelEndpoints> result);  // the first one wins
  StatusOr<ChannelEndpoints> Wait();
};

// What to tell of one channel: made under the broker's lock, told after.
struct ChannelEnding {
  ChannelRecord record;
  std::string peer_key;  // what BrokerNetwork::FindPeer was given
  std::vector<std::shared_ptr<ChannelHolder>> holders;
  std::shared_ptr<PendingOpen> open;
  bool tell_peer = false;
  std::string peer_reason;  // what the peer is told
  bool was_established = false;
  bool late = false;  // ended before: only the peer is still to be told
};

class ChannelTeller {
 public:
  // network, services and table: not owned; outlive the teller (the table
  // hears ToldPeer once the peer's session was named). instance_id: this
  // daemon's, named in the CloseChannel calls.
  ChannelTeller(BrokerNetwork* network, ServiceRegistry* services, ChannelTable* table,
                std::string instance_id)
      : network_(network),
        services_(services),
        table_(table),
        instance_id_(std::move(instance_id)) {}

  void Deliver(std::vector<ChannelEnding> endings) const;

 private:
  void TellPeer(const ChannelRecord& r, const std::string& peer_key,
                const std::string& reason) const;

  BrokerNetwork* const network_;
  ServiceRegistry* const services_;
  ChannelTable* const table_;
  const std::string instance_id_;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_BROKER_CHANNEL_TELLER_H_
