// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The Channel conformance suite (client/src/channel_suite.h) over RDMA: two
// channel ends in this process on one device (rxe loops back), connected
// as through the daemons. Named DeviceLabRdma/... so the lab runs it with
// the other RDMA device tests; skipped on a host without an RDMA device.
// Device and GID index: LAB_DEV (default: the first device), LAB_GID_INDEX
// (default 1).

#include <cstdlib>
#include <string>

#include "client/src/channel_suite.h"
#include "client/src/rdma/lab_channel_fixture.h"
#include "client/src/rdma/rdma_channel.h"

namespace rdmad::internal {
namespace {

StatusOr<ChannelPair> MakeRdmaPair() {
  std::string device = lab::FirstDevice();
  if (device.empty()) return Status::FailedPrecondition("no RDMA device on this host");
  RdmaPlan plan;
  plan.device = lab::Env("LAB_DEV", device);
  plan.gid_index = static_cast<uint32_t>(std::atoi(lab::Env("LAB_GID_INDEX", "1").c_str()));
  plan.qp = QpAttributes{"RC", 14, 7, 7, 12, 0, 0, 64, 64, 64, 64, 1};
  plan.slot_size = 64 * 1024;
  auto initiator = PendingRdmaChannel::Create(plan);
  if (!initiator.ok()) return initiator.status();
  auto acceptor = PendingRdmaChannel::Create(plan);
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

INSTANTIATE_TEST_SUITE_P(DeviceLabRdma, ChannelConformanceTest,
                         ::testing::Values(ChannelPairFactory{"Loopback", MakeRdmaPair}),
                         ChannelPairFactoryName);

}  // namespace rdmad::internal
