// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// HoldReactor serves one HoldChannel stream, the lifeline of an
// established channel (docs/channels.md, "Closing"), or of the channels of
// a batch (Client::ConnectMany: more_channel_ids, one stream for all). It
// holds each channel with the broker for as long as the stream is open:
//   * a channel ends here (the peer closed it, the peer daemon was lost,
//     the application released it, rdmad stops): one ChannelEvent
//     {closed, state, reason, channel_id} is written for it; once every
//     channel of the stream has ended, the stream finishes with OK; at
//     once if they had all ended when the stream opened;
//   * the stream is cancelled (the application cancelled it, or the
//     process died and gRPC saw its socket close): the broker closes every
//     channel still held, "the application went away", and tells the peer;
//   * one channel: an unknown channel id (or another uid's) finishes the
//     stream with NOT_FOUND. A batch: such a channel gets its closed event
//     (state "failed", the reason) and the others are held.
// Once held, the channels' current leases go to the client library in the
// initial metadata: one channel's, or, re-attaching a batch, one
// kLeaseMetadata entry per channel in the request's order (empty for one
// not held). A batch's first hold sends none: the library has them from
// Connect or Accept, and 64 of them would pass gRPC's metadata limit. It
// writes at most one event per channel,
// so a client that never reads costs one message per channel, not a
// queue. The stream holds one of its client's open streams
// (limits.max_streams_per_client) until it is done.
//
// Thread safety: the broker calls the sinks from any thread; gRPC calls the
// reactor's callbacks. A shared HoldSink per channel stands between them so
// that an end arriving after the reactor is gone is dropped. Nothing here
// blocks.

#ifndef RDMAD_DAEMON_RPC_HOLD_REACTOR_H_
#define RDMAD_DAEMON_RPC_HOLD_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "daemon/broker/broker.h"
#include "daemon/clients/client_limiter.h"
#include "daemon/events/bounded_stream.h"
#include "rdmad/v1/rdmad.pb.h"

namespace rdmad {

class HoldReactor;

class HoldSink final : public ChannelHolder {
 public:
  HoldSink(HoldReactor* reactor, size_t index) : reactor_(reactor), index_(index) {}
  void OnChannelEnded(ChannelState state, const std::string& reason) override;
  void OnDaemonStopping(const std::string& why) override;
  void Detach();

 private:
  std::mutex mu_;
  HoldReactor* reactor_;  // guarded by mu_; null once the reactor is done
  const size_t index_;    // the channel's place in the stream's request
};

class HoldReactor final : public grpc::ServerWriteReactor<v1::ChannelEvent>,
                          public BoundedStream<v1::ChannelEvent>::Writer {
 public:
  // Once held, the channel's current lease goes to the client library in
  // the initial metadata (kLeaseMetadata): after a restart it names this
  // daemon instance, for the next one.
  static constexpr char kLeaseMetadata[] = "rdmad-lease-bin";
  // One channel to hold: its id, and whether the daemon could take it back
  // (re-attaching after a restart; OK otherwise).
  struct Held {
    uint64_t channel_id = 0;
    bool reattach = false;  // the request gave its lease
    Status adopted;
  };
  HoldReactor(grpc::CallbackServerContext* context, Broker* broker, const Caller& caller,
              const std::vector<Held>& channels, ClientLimiter::Lease lease);

  // Channel index ended: writes its event (and finishes after the last).
  void Ended(size_t index, ChannelState state, const std::string& reason);
  // The daemon is stopping: finishes with UNAVAILABLE (the client library
  // keeps the channels and re-attaches to the next rdmad).
  void Stopping(const std::string& why);

  // grpc::ServerWriteReactor:
  void OnSendInitialMetadataDone(bool ok) override { stream_.OnWriteDone(ok); }
  void OnWriteDone(bool ok) override { stream_.OnWriteDone(ok); }
  void OnCancel() override;
  void OnDone() override;

  // BoundedStream writer:
  void Write(const v1::ChannelEvent& event) override { StartWrite(&event); }
  void Finish(const Status& status) override;

 private:
  // mu_ held: channel index is over for this stream; returns whether it
  // was the last one.
  bool EndLocked(size_t index, ChannelState state, const std::string& reason);
  void UnholdAll(const std::string& reason);  // mu_ not held

  Broker* const broker_;
  std::vector<uint64_t> ids_;
  ClientLimiter::Lease lease_;  // one of the client's open streams
  BoundedStream<v1::ChannelEvent> stream_;
  std::vector<std::shared_ptr<HoldSink>> sinks_;
  std::mutex mu_;
  std::vector<uint64_t> tokens_;  // the broker's holds; 0 when not holding; guarded by mu_
  std::vector<bool> ended_;       // the channel's event was queued; guarded by mu_
  size_t live_ = 0;               // channels not ended; guarded by mu_
  // The initial metadata is on its way; before, events wait in early_.
  bool started_ = false;                 // guarded by mu_
  bool aborted_ = false;                 // the stream ends without them; guarded by mu_
  std::vector<v1::ChannelEvent> early_;  // guarded by mu_
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_HOLD_REACTOR_H_
