// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// PendingRdmaChannel: one side of an RDMA channel while the endpoints are
// exchanged through the daemons (docs/channels.md). The handshake:
//
//   acceptor:  Create -> local() to the daemon ... ReadyToReceive(initiator's
//              endpoint) -> reply with local() -> ReadyToSend
//   initiator: Create -> local() to the daemon ... ReadyToReceive(acceptor's
//              endpoint) -> ReadyToSend
//
// Create opens the device (shared through the device cache), creates the
// CQ and completion channel (or joins a batch's CompletionGroup) and RC QP,
// moves it to INIT, registers and posts the first slots of the receive ring
// and fills local(). ReadyToReceive validates the peer's endpoint and moves
// the QP to RTR with the negotiated path MTU; ReadyToSend moves it to RTS
// and hands everything to the Channel.
//
// Thread safety: one thread at a time (a handshake is sequential). The
// returned Channel follows rdmad/channel.h.

#ifndef RDMAD_CLIENT_SRC_RDMA_RDMA_CHANNEL_H_
#define RDMAD_CLIENT_SRC_RDMA_RDMA_CHANNEL_H_

#include <spdlog/spdlog.h>

#include <memory>
#include <vector>

#include "common/endpoint.h"
#include "rdmad/channel.h"
#include "rdmad/status.h"

namespace rdmad::internal {

struct ChannelResources;
class CompletionGroup;

struct RailQp;
enum class RailRole { kInitiator, kAcceptor };

class PendingRdmaChannel {
 public:
  // NOT_FOUND for an unknown device, UNAVAILABLE for a host without RDMA or
  // a port that is not active, INVALID_ARGUMENT for a bad plan or GID index.
  // group: a batch's shared CQ (completion_group.h), used if it has room.
  static StatusOr<std::unique_ptr<PendingRdmaChannel>> Create(
      const RdmaPlan& plan, std::shared_ptr<CompletionGroup> group = nullptr);
  ~PendingRdmaChannel();

  const RdmaEndpoint& local() const { return local_; }
  // Bytes this channel registers of its own so far: the first slots of its
  // receive ring (ring and staging area grow with the traffic once it is
  // up; rendezvous chunks come from the process's pool).
  size_t registered_bytes() const;

  // INVALID_ARGUMENT naming the bad field of remote; the verbs error if the
  // QP cannot reach RTR. Call once, before ReadyToSend. The further rails
  // (docs/topology.md, "Rails in a channel") pair as role says: the
  // acceptor pairs its rails with the initiator's and local() then shows
  // only those; the initiator takes the acceptor's pairs. A rail that does
  // not pair or connect is left out, never failing the channel.
  Status ReadyToReceive(const RdmaEndpoint& remote, RailRole role = RailRole::kInitiator);
  // A batch's channel after its first: ReadyToReceive logs what it chose at
  // debug, not info (the first's line says what the batch chose).
  void LogAtDebug() { log_level_ = spdlog::level::debug; }

  // Moves to RTS and returns the channel; info carries the daemons' side
  // (id, peer, service, reason, handshake time); the RDMA fields are filled
  // in here. FAILED_PRECONDITION before ReadyToReceive or a second time.
  StatusOr<std::unique_ptr<Channel>> ReadyToSend(ChannelInfo info);

 private:
  explicit PendingRdmaChannel(std::unique_ptr<ChannelResources> resources);
  Status FillLocal();
  void OpenRails();
  void ConnectRails(const RdmaEndpoint& remote, RailRole role);

  enum class State { kInit, kReadyToReceive, kDone, kFailed };
  std::unique_ptr<ChannelResources> res_;
  RdmaEndpoint local_;
  RdmaEndpoint remote_;
  uint32_t mtu_ = 0;
  State state_ = State::kInit;
  spdlog::level::level_enum log_level_ = spdlog::level::info;
  std::vector<std::unique_ptr<RailQp>> rails_;  // the further rails, in local_.rails' order
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_RDMA_RDMA_CHANNEL_H_
