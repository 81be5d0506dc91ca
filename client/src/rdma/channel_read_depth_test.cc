// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The READs a QP keeps in flight (its initiator depth, max_rd_atomic) are
// capped by the peer QP's responder resources, which each endpoint states:
// more would be refused by the peer's HCA. In the lab over Soft-RoCE.

#include <infiniband/verbs.h>

#include <vector>

#include "client/src/rdma/channel_impl.h"
#include "client/src/rdma/lab_channel_fixture.h"
#include "gtest/gtest.h"

namespace rdmad::internal::lab {
namespace {

TEST_F(DeviceLabRdmaChannelTest, ReadsInFlightStayWithinThePeersResponderResources) {
  // The acceptor's endpoint as the initiator gets it says 2.
  ASSERT_NO_FATAL_FAILURE(Connect(plan_, [](RdmaEndpoint& acceptor) {
    ASSERT_GE(acceptor.responder_resources, 2u) << "the endpoint states its own";
    acceptor.responder_resources = 2;
  }));
  auto* initiator = dynamic_cast<RdmaChannel*>(a_.get());
  auto* acceptor = dynamic_cast<RdmaChannel*>(b_.get());
  ASSERT_NE(initiator, nullptr);
  ASSERT_NE(acceptor, nullptr);
  EXPECT_EQ(initiator->ReadDepthForTesting(), 2u);
  // The other way the device's own limit holds (the initiator stated it).
  EXPECT_EQ(acceptor->ReadDepthForTesting(), acceptor->device()->max_rd_atomic());
  EXPECT_GT(acceptor->device()->max_rd_atomic(), 2u);

  // 64 READs in one batch: the HCA keeps 2 in flight, and all complete.
  constexpr size_t kBlock = 4096, kBlocks = 64;
  std::vector<uint8_t> exposed = Pattern(kBlock * kBlocks, 7);
  auto target = b_->RegisterMemory(exposed.data(), exposed.size());
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  std::vector<uint8_t> back(exposed.size(), 0);
  auto sink = a_->RegisterMemory(back.data(), back.size());
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  std::vector<TransferOp> reads;
  for (size_t i = 0; i < kBlocks; ++i) {
    TransferOp op;
    op.kind = TransferOp::Kind::kRead;
    op.local = sink->get();
    op.local_offset = i * kBlock;
    op.remote = (*target)->descriptor();
    op.remote_offset = (kBlocks - 1 - i) * kBlock;  // reversed
    op.len = kBlock;
    reads.push_back(op);
  }
  auto transfer = a_->Submit(reads);
  ASSERT_TRUE(transfer.ok()) << transfer.status().ToString();
  Status done = (*transfer)->Wait(30s);
  ASSERT_TRUE(done.ok()) << done.ToString();
  for (size_t i = 0; i < kBlocks; ++i) {
    ASSERT_EQ(Checksum(back.data() + i * kBlock, kBlock),
              Checksum(exposed.data() + (kBlocks - 1 - i) * kBlock, kBlock))
        << "block " << i;
  }
  EXPECT_TRUE(a_->status().ok()) << a_->status().ToString();
}

}  // namespace
}  // namespace rdmad::internal::lab
