// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The Channel conformance suite: the behaviour every transport (RDMA, TCP)
// must show through the public Channel API. Its tests are in
// channel_suite_test.cc; a transport runs them by instantiating the suite
// with factories of connected channel pairs, in namespace rdmad::internal:
//
//   RDMAD_INSTANTIATE_CHANNEL_CONFORMANCE(
//       Tcp, ChannelPairFactory{"Ipv4", [] { return MakeTcpPair("127.0.0.1"); }});
//
// Each test gets a fresh pair (a_, b_). A factory that cannot work on this
// machine (no RDMA device, no IPv6) returns FAILED_PRECONDITION or
// UNIMPLEMENTED and the tests are skipped; any other error fails them.
//
// Beyond channel.h, the suite pins down: a Send from a registered region
// out of its range is OUT_OF_RANGE; a channel whose peer closed it (or
// died) fails with UNAVAILABLE; a blocked Recv woken by Close() returns
// CANCELLED; Write's data is visible in the target region when it returns.
//
// Thread safety: a gtest fixture; the tests use one background thread.

#ifndef RDMAD_CLIENT_SRC_CHANNEL_SUITE_H_
#define RDMAD_CLIENT_SRC_CHANNEL_SUITE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "rdmad/channel.h"
#include "rdmad/status.h"

namespace rdmad::internal {

using ChannelPair = std::pair<std::unique_ptr<Channel>, std::unique_ptr<Channel>>;

struct ChannelPairFactory {
  std::string name;  // the test name suffix: letters, digits and '_'
  std::function<StatusOr<ChannelPair>()> make;
};

// For INSTANTIATE_TEST_SUITE_P: the factory's name.
std::string ChannelPairFactoryName(const ::testing::TestParamInfo<ChannelPairFactory>& info);
void PrintTo(const ChannelPairFactory& factory, std::ostream* os);

// For things that should take milliseconds.
inline constexpr std::chrono::milliseconds kPatience{30000};
// n pseudo-random bytes from seed.
std::vector<uint8_t> Pattern(size_t n, uint64_t seed);
// Sends the descriptor of `region` from `from`; returns it as `to` parses it.
StatusOr<RegionDescriptor> ExchangeDescriptor(Channel& from, Channel& to,
                                              const MemoryRegion& region);

// A region of b's that a can reach (desc), and a region of a's (local,
// filled with a pattern): the batch tests' memory.
struct SharedRegions {
  std::vector<uint8_t> remote_bytes, local_bytes;
  std::unique_ptr<MemoryRegion> remote, local;
  RegionDescriptor desc;
};
::testing::AssertionResult ShareRegions(Channel& a, Channel& b, size_t remote_size,
                                        size_t local_size, SharedRegions* r);
inline TransferOp Op(TransferOp::Kind kind, const SharedRegions& r, size_t local_offset,
                     uint64_t remote_offset, size_t len) {
  return TransferOp{kind, r.local.get(), local_offset, r.desc, remote_offset, len};
}

class ChannelConformanceTest : public ::testing::TestWithParam<ChannelPairFactory> {
 protected:
  void SetUp() override;
  // Closes both channels if the test failed (so a blocked helper wakes),
  // then joins the helper thread.
  void TearDown() override;

  // Runs fn on the helper thread (one at a time).
  void InBackground(std::function<void()> fn);
  void JoinBackground();

  std::unique_ptr<Channel> a_;
  std::unique_ptr<Channel> b_;

 private:
  std::thread background_;
};

}  // namespace rdmad::internal

// Use inside namespace rdmad::internal (gtest pastes the fixture's name
// into identifiers, so it cannot be qualified).
#define RDMAD_INSTANTIATE_CHANNEL_CONFORMANCE(prefix, ...)                                 \
  INSTANTIATE_TEST_SUITE_P(prefix, ChannelConformanceTest, ::testing::Values(__VA_ARGS__), \
                           ::rdmad::internal::ChannelPairFactoryName)

#endif  // RDMAD_CLIENT_SRC_CHANNEL_SUITE_H_
