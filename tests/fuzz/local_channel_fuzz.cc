// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Fuzz target: the local API's channel calls from an application (Listen,
// Accept, Reject, PlanChannel, Connect, HoldChannel, ReleaseChannel,
// ListChannels) against the real broker, with the peer daemon's replies
// and the races around a handshake fuzzed too. Input: a script of records
// (fuzz_support.h); the op byte picks from kLocalChannelOps (channel_world.h).

#include "tests/fuzz/channel_world.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rdmad::fuzz::FuzzInit();
  rdmad::fuzz::RunChannelScript(rdmad::fuzz::kLocalChannelOps, data, size);
  return 0;
}
