// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ArenaMessages: a unary callback method's request and reply on one
// protobuf arena (grpc::MessageAllocator). gRPC parses the request into it
// and serializes the reply from it; when the call ends the arena goes at
// once, instead of a free for every sub-message and string. The channel
// handshake's messages carry an endpoint per channel (a batch: up to
// kMaxChannelBatch), each a tree of several allocations, so the broker's
// calls use it (docs/benchmarks.md: the daemons' share of a connect).
//
// Handlers see no difference: sub-messages they add to the reply land on
// the arena too. An arena starts with a block inside the holder, so a
// small call allocates nothing beyond it.
//
// Thread safety: AllocateMessages may be called from any gRPC thread; each
// holder belongs to one call.

#ifndef RDMAD_DAEMON_RPC_ARENA_MESSAGES_H_
#define RDMAD_DAEMON_RPC_ARENA_MESSAGES_H_

#include <google/protobuf/arena.h>
#include <grpcpp/support/message_allocator.h>

#include <cstddef>

namespace rdmad {

template <typename Request, typename Response>
class ArenaMessages final : public grpc::MessageAllocator<Request, Response> {
 public:
  grpc::MessageHolder<Request, Response>* AllocateMessages() override { return new Holder; }

 private:
  static constexpr size_t kInlineBlock = 2048;

  class Holder final : public grpc::MessageHolder<Request, Response> {
   public:
    Holder() : arena_(Options(block_)) {
      this->set_request(google::protobuf::Arena::CreateMessage<Request>(&arena_));
      this->set_response(google::protobuf::Arena::CreateMessage<Response>(&arena_));
    }
    void Release() override { delete this; }

   private:
    static google::protobuf::ArenaOptions Options(char* block) {
      google::protobuf::ArenaOptions options;
      options.initial_block = block;
      options.initial_block_size = kInlineBlock;
      return options;
    }

    alignas(8) char block_[kInlineBlock];  // before arena_: it outlives the arena
    google::protobuf::Arena arena_;
  };
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_ARENA_MESSAGES_H_
