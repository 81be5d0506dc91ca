// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Fuzz target: the peer API's channel calls from another daemon
// (OpenChannel, CloseChannel, a ChannelClosed event on its session) through
// PeerInbound into the real broker, with the listener's answers and the
// local application's lifeline fuzzed too. Input: a script of records
// (fuzz_support.h); the op byte picks from kPeerChannelOps (channel_world.h).

#include "tests/fuzz/channel_world.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rdmad::fuzz::FuzzInit();
  rdmad::fuzz::RunChannelScript(rdmad::fuzz::kPeerChannelOps, data, size);
  return 0;
}
