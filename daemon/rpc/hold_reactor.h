// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// HoldReactor serves one HoldChannel stream, the lifeline of an
// established channel (docs/channels.md, "Closing"). It holds the channel
// with the broker for as long as the stream is open:
//   * the channel ends here (the peer closed it, the peer daemon was lost,
//     the application released it, rdmad stops): one ChannelEvent
//     {closed, state, reason} is written and the stream finishes with OK;
//     at once if the channel had already ended when the stream opened;
//   * the stream is cancelled (the application closed the channel and
//     cancelled it, or the process died and gRPC saw its socket close): the
//     broker closes the channel, "the application went away", and tells
//     the peer;
//   * an unknown channel id (or another uid's) finishes the stream with
//     NOT_FOUND.
// It writes at most that one event, so a client that never reads costs one
// message, not a queue. The stream holds one of its client's open streams
// (limits.max_streams_per_client) until it is done.
//
// Thread safety: the broker calls the sink from any thread; gRPC calls the
// reactor's callbacks. A shared HoldSink stands between them so that an
// end arriving after the reactor is gone is dropped. Nothing here blocks.

#ifndef RDMAD_DAEMON_RPC_HOLD_REACTOR_H_
#define RDMAD_DAEMON_RPC_HOLD_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "daemon/broker/broker.h"
#include "daemon/clients/client_limiter.h"
#include "rdmad/v1/rdmad.pb.h"

namespace rdmad {

class HoldReactor;

class HoldSink final : public ChannelHolder {
 public:
  explicit HoldSink(HoldReactor* reactor) : reactor_(reactor) {}
  void OnChannelEnded(ChannelState state, const std::string& reason) override;
  void OnDaemonStopping(const std::string& why) override;
  void Detach();

 private:
  std::mutex mu_;
  HoldReactor* reactor_;  // guarded by mu_; null once the reactor is done
};

class HoldReactor final : public grpc::ServerWriteReactor<v1::ChannelEvent> {
 public:
  // Once held, the channel's current lease goes to the client library in
  // the initial metadata (kLeaseMetadata): after a restart it names this
  // daemon instance, for the next one.
  static constexpr char kLeaseMetadata[] = "rdmad-lease-bin";
  HoldReactor(grpc::CallbackServerContext* context, Broker* broker, const Caller& caller,
              uint64_t channel_id, ClientLimiter::Lease lease);

  // The channel ended: writes the event and finishes.
  void Ended(ChannelState state, const std::string& reason);
  // The daemon is stopping: finishes with UNAVAILABLE (the client library
  // keeps the channel and re-attaches to the next rdmad).
  void Stopping(const std::string& why);

  void OnCancel() override;
  void OnDone() override;

 private:
  void EndLocked(ChannelState state, const std::string& reason);  // mu_ held
  void Release(const std::string& reason);                        // mu_ not held

  Broker* const broker_;
  const uint64_t channel_id_;
  ClientLimiter::Lease lease_;  // one of the client's open streams
  std::shared_ptr<HoldSink> sink_;
  std::mutex mu_;
  uint64_t token_ = 0;      // the broker's hold; 0 when not holding; guarded by mu_
  bool finished_ = false;   // Finish (or StartWriteAndFinish) called; guarded by mu_
  v1::ChannelEvent event_;  // the one write
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_HOLD_REACTOR_H_
