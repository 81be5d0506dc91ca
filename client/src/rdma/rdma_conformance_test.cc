// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The Channel conformance suite (client/src/channel_suite.h) over RDMA: two
// channel ends in this process on one device (rxe loops back), connected
// as through the daemons. Named DeviceLabRdma/... so the lab runs it with
// the other RDMA device tests; skipped on a host without an RDMA device.
// Device and GID index: LAB_DEV (default: the first device), LAB_GID_INDEX
// (default 1). "Grouped" runs it with both ends on one shared CQ (a batch's
// CompletionGroup): every completion of either end passes through the
// other's polls too.

#include <cstdlib>
#include <string>

#include "client/src/channel_suite.h"
#include "client/src/rdma/completion_group.h"
#include "client/src/rdma/lab_channel_fixture.h"
#include "client/src/rdma/rdma_channel.h"

namespace rdmad::internal {
namespace {

StatusOr<ChannelPair> MakeRdmaPair(bool grouped) {
  std::string device = lab::FirstDevice();
  if (device.empty()) return Status::FailedPrecondition("no RDMA device on this host");
  RdmaPlan plan;
  plan.device = lab::Env("LAB_DEV", device);
  plan.gid_index = static_cast<uint32_t>(std::atoi(lab::Env("LAB_GID_INDEX", "1").c_str()));
  plan.qp = QpAttributes{"RC", 14, 7, 7, 12, 0, 0, 64, 64, 64, 64, 1};
  plan.slot_size = 64 * 1024;
  std::shared_ptr<CompletionGroup> group;
  if (grouped) {
    auto made = CompletionGroup::ForBatch(plan, 2);
    if (!made.ok()) return made.status();
    group = std::move(made).value();
  }
  auto initiator = PendingRdmaChannel::Create(plan, group);
  if (!initiator.ok()) return initiator.status();
  auto acceptor = PendingRdmaChannel::Create(plan, group);
  if (!acceptor.ok()) return acceptor.status();
  RDMAD_RETURN_IF_ERROR((*acceptor)->ReadyToReceive((*initiator)->local()));
  RDMAD_RETURN_IF_ERROR((*initiator)->ReadyToReceive((*acceptor)->local()));
  ChannelInfo info;
  info.service = "conformance";
  auto a = (*initiator)->ReadyToSend(info);
  if (!a.ok()) return a.status();
  auto b = (*acceptor)->ReadyToSend(info);
  if (!b.ok()) return b.status();
  return ChannelPair(std::move(a).value(), std::move(b).value());
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(
    DeviceLabRdma, ChannelConformanceTest,
    ::testing::Values(ChannelPairFactory{"Loopback", [] { return MakeRdmaPair(false); }},
                      ChannelPairFactory{"Grouped", [] { return MakeRdmaPair(true); }}),
    ChannelPairFactoryName);

}  // namespace rdmad::internal
