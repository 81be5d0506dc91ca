// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The ops of the peer_session target (peer_session_fuzz.cc), for it and
// the seed generator.

#ifndef RDMAD_TESTS_FUZZ_PEER_SESSION_FUZZ_H_
#define RDMAD_TESTS_FUZZ_PEER_SESSION_FUZZ_H_

#include <cstdint>

namespace rdmad::fuzz {

enum class SessionOp : uint8_t {
  kHello,       // HelloRequest: a peer's Hello to this daemon
  kSession,     // SessionRequest: a peer opens a Session stream
  kWriteDone,   // raw: stream index, ok: the stream's pending write completes
  kCancel,      // raw: stream index: the peer cancels
  kDone,        // raw: stream index: gRPC is done with a finished stream
  kTick,        // raw: milliseconds to advance the clock, then heartbeats
  kSend,        // PeerEvent: the broker sends it to a stream's instance
  kHelloReply,  // HelloResponse: a peer's answer to this daemon's Hello
  kEvent,       // PeerEvent: an event on this daemon's Session to a peer
  kClose,       // (none): the daemon stops
  kCount,
};

}  // namespace rdmad::fuzz

#endif  // RDMAD_TESTS_FUZZ_PEER_SESSION_FUZZ_H_
