// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// AbortableChannel: a transport's Channel (RDMA or TCP) that the client
// library can fail from outside its data path, when the daemon says the
// channel is over: the peer closed it, the peer daemon was lost, or the
// channel's lifeline to this host's rdmad broke (held_channel.h).
//
// Thread safety: Abort may be called from any thread, concurrently with the
// Channel's own calls; it does not block for long.

#ifndef RDMAD_CLIENT_SRC_ABORTABLE_CHANNEL_H_
#define RDMAD_CLIENT_SRC_ABORTABLE_CHANNEL_H_

#include "client/src/traffic_meter.h"
#include "rdmad/channel.h"
#include "rdmad/status.h"

namespace rdmad::internal {

// What a PreparedTransfer's Wait and Poll give before its first Post, and
// what a Post gives while the last one is in flight.
Status NotPosted();
Status StillInFlight();

class AbortableChannel : public Channel {
 public:
  // Puts the channel in its error state with status (UNAVAILABLE and the
  // daemon's reason): blocked Send/Recv/Write/Read wake and return it, and
  // so do later calls. Nothing happens when the channel has already ended:
  // closed here, failed, or closed by the peer on the data path (whose
  // messages Recv still delivers first). RDMA moves the QP to the error
  // state (its work requests flush); TCP shuts the socket down.
  virtual void Abort(const Status& status) = 0;
  // Where the transport counts Submit's batches (traffic_meter.h); set once,
  // before the application has the channel, and outliving it. None: not
  // counted.
  void SetMeter(TrafficMeter* meter) { meter_ = meter; }

 protected:
  TrafficMeter* meter_ = nullptr;

  // Expose's rules for both transports: INVALID_ARGUMENT for kLocal, or for
  // read-write on a region registered read-only.
  static Status CheckExposure(const MemoryRegion& region, MemoryAccess access);
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_ABORTABLE_CHANNEL_H_
