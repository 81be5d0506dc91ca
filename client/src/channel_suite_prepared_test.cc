// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The Channel conformance tests of Prepare: prepared batches of one-sided
// operations posted again and again (see channel_suite.h), on every
// transport.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "client/src/channel_suite.h"

namespace rdmad::internal {
namespace {

using std::chrono::milliseconds;

// KV-cache style: a layer's scattered blocks, prepared once and posted
// round after round with fresh data and a notification each: every round
// lands whole before its notification.
TEST_P(ChannelConformanceTest, APreparedBatchPostedAgainMovesFreshDataEachTime) {
  constexpr size_t kBlock = 4096, kBlocks = 300;  // more than a send queue's depth
  SharedRegions r;
  ASSERT_TRUE(ShareRegions(*a_, *b_, 2 * kBlock * kBlocks, kBlock * kBlocks, &r));
  std::vector<TransferOp> ops;
  for (size_t i = 0; i < kBlocks; ++i) {  // block i -> slot (7 i mod 2n) of the remote
    ops.push_back(
        Op(TransferOp::Kind::kWrite, r, i * kBlock, (7 * i % (2 * kBlocks)) * kBlock, kBlock));
  }
  auto prepared = a_->Prepare(ops);
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  PreparedTransfer& layer = **prepared;
  for (int round = 0; round < 4; ++round) {
    std::vector<uint8_t> fresh = Pattern(r.local_bytes.size(), 300 + round);
    std::copy(fresh.begin(), fresh.end(), r.local_bytes.begin());  // the region's own memory
    std::string note = "layer " + std::to_string(round);
    Status posted = layer.Post(note);
    ASSERT_TRUE(posted.ok()) << "round " << round << ": " << posted.ToString();
    auto got = b_->RecvNotification(kPatience);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(std::string(got->begin(), got->end()), note);
    for (size_t i = 0; i < kBlocks; ++i) {  // in place when the notification came
      auto at = r.remote_bytes.begin() + long((7 * i % (2 * kBlocks)) * kBlock);
      ASSERT_TRUE(std::equal(at, at + kBlock, r.local_bytes.begin() + long(i * kBlock)))
          << "round " << round << " block " << i;
    }
    Status done = layer.Wait(kPatience);
    ASSERT_TRUE(done.ok()) << done.ToString();
    Status polled = Status::Unavailable("not set");
    EXPECT_TRUE(layer.Poll(&polled));
    EXPECT_TRUE(polled.ok()) << polled.ToString();
    EXPECT_EQ(layer.failed_op(), -1);
  }
  ASSERT_TRUE(layer.Post().ok());  // and without a notification
  ASSERT_TRUE(layer.Wait(kPatience).ok());
  EXPECT_EQ(b_->RecvNotification(milliseconds(50)).status().code(), StatusCode::kDeadlineExceeded);
}

// As perftest keeps a send queue full: a ring of prepared single-op
// batches, each posted again as soon as it is done, reads and writes.
TEST_P(ChannelConformanceTest, ARingOfPreparedTransfersKeepsManyInFlight) {
  constexpr size_t kRing = 48, kLen = 1024, kRounds = 8;
  SharedRegions r;
  ASSERT_TRUE(ShareRegions(*a_, *b_, kRing * kLen, 2 * kRing * kLen, &r));
  std::vector<std::unique_ptr<PreparedTransfer>> writes, reads;
  for (size_t i = 0; i < kRing; ++i) {
    auto w = a_->Prepare({Op(TransferOp::Kind::kWrite, r, i * kLen, i * kLen, kLen)});
    auto rd = a_->Prepare({Op(TransferOp::Kind::kRead, r, (kRing + i) * kLen, i * kLen, kLen)});
    ASSERT_TRUE(w.ok() && rd.ok()) << w.status().ToString() << rd.status().ToString();
    writes.push_back(std::move(w).value());
    reads.push_back(std::move(rd).value());
  }
  for (size_t round = 0; round < kRounds; ++round) {
    for (size_t i = 0; i < kRing; ++i) {
      if (round > 0) {
        ASSERT_TRUE(writes[i]->Wait(kPatience).ok()) << "round " << round;
      }
      Status posted = writes[i]->Post();
      ASSERT_TRUE(posted.ok()) << "round " << round << " slot " << i << ": " << posted.ToString();
    }
  }
  for (auto& w : writes) ASSERT_TRUE(w->Wait(kPatience).ok());
  EXPECT_TRUE(std::equal(r.remote_bytes.begin(), r.remote_bytes.end(), r.local_bytes.begin()));
  for (auto& rd : reads) ASSERT_TRUE(rd->Post().ok());
  for (auto& rd : reads) ASSERT_TRUE(rd->Wait(kPatience).ok());
  EXPECT_TRUE(std::equal(r.remote_bytes.begin(), r.remote_bytes.end(),
                         r.local_bytes.begin() + long(kRing * kLen)));
}

// Prepare checks the ops once, as Submit does; a Post checks its
// notification; a prepared transfer never posted says so.
TEST_P(ChannelConformanceTest, APreparedBatchIsCheckedWhenPrepared) {
  SharedRegions r;
  ASSERT_TRUE(ShareRegions(*a_, *b_, 4096, 4096, &r));
  std::vector<TransferOp> ops{Op(TransferOp::Kind::kWrite, r, 0, 0, 100),
                              Op(TransferOp::Kind::kWrite, r, 0, 100, 100)};
  ops[1].local = nullptr;
  auto refused = a_->Prepare(ops);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(), "op 1: no local region");
  ops[1] = Op(TransferOp::Kind::kRead, r, 0, 4000, 100);
  refused = a_->Prepare(ops);
  EXPECT_EQ(refused.status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(refused.status().message().rfind("op 1: remote range", 0), 0u)
      << refused.status().ToString();

  auto fine = a_->Prepare({Op(TransferOp::Kind::kWrite, r, 0, 0, 4096)});
  ASSERT_TRUE(fine.ok()) << fine.status().ToString();
  EXPECT_EQ((*fine)->Wait(milliseconds(0)).code(), StatusCode::kFailedPrecondition);
  Status polled;
  EXPECT_TRUE((*fine)->Poll(&polled));
  EXPECT_EQ(polled.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ((*fine)->failed_op(), -1);
  EXPECT_EQ((*fine)->Post(std::string(kMaxNotificationBytes + 1, 'x')).code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(std::all_of(r.remote_bytes.begin(), r.remote_bytes.end(), [](uint8_t v) {
    return v == 0;
  })) << "a refused Post started nothing";
  ASSERT_TRUE((*fine)->Post("written").ok());
  ASSERT_TRUE((*fine)->Wait(kPatience).ok());
  EXPECT_EQ(r.remote_bytes, r.local_bytes);
  auto note = b_->RecvNotification(kPatience);
  ASSERT_TRUE(note.ok()) << note.status().ToString();
  EXPECT_EQ(std::string(note->begin(), note->end()), "written");
  auto empty = a_->Prepare({});
  ASSERT_TRUE(empty.ok());
  ASSERT_TRUE((*empty)->Post().ok());
  EXPECT_TRUE((*empty)->Wait(kPatience).ok());
}

// A Post while the last one is in flight is refused and starts nothing;
// the one in flight completes whole.
TEST_P(ChannelConformanceTest, APostWhileInFlightIsRefused) {
  constexpr size_t kLen = 16 << 20;
  SharedRegions r;
  ASSERT_TRUE(ShareRegions(*a_, *b_, kLen, kLen, &r));
  auto big = a_->Prepare({Op(TransferOp::Kind::kWrite, r, 0, 0, kLen)});
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  int refused = 0;
  for (int attempt = 0; attempt < 5; ++attempt) {
    ASSERT_TRUE((*big)->Post().ok());
    Status again = (*big)->Post();  // refused, unless the first was already done
    if (again.code() == StatusCode::kFailedPrecondition) {
      ++refused;
    } else {
      ASSERT_TRUE(again.ok()) << again.ToString();
    }
    ASSERT_TRUE((*big)->Wait(kPatience).ok());
  }
  EXPECT_EQ(r.remote_bytes, r.local_bytes);
  // A transport whose batches run inside the call (TCP) is never caught
  // in flight; RDMA's 16 MiB takes a while on any NIC.
  if (a_->info().transport == ChannelTransport::kRdma) {
    EXPECT_GT(refused, 0);
  }
}

// An op the peer refuses fails the Post and names itself; the channel
// has failed, and later Posts say so instead of hanging.
TEST_P(ChannelConformanceTest, AFailingPreparedOpNamesItself) {
  SharedRegions r;
  ASSERT_TRUE(ShareRegions(*a_, *b_, 4096, 4096, &r));
  std::vector<TransferOp> ops;
  for (size_t i = 0; i < 5; ++i) ops.push_back(Op(TransferOp::Kind::kWrite, r, i * 64, i * 64, 64));
  ops[3].remote.rkey ^= 0x5a5a5a5a;
  auto prepared = a_->Prepare(ops);
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  ASSERT_TRUE((*prepared)->Post().ok());
  Status done = (*prepared)->Wait(kPatience);
  EXPECT_FALSE(done.ok());
  EXPECT_NE(done.code(), StatusCode::kDeadlineExceeded) << done.ToString();
  EXPECT_EQ((*prepared)->failed_op(), 3) << done.ToString();
  Status later = (*prepared)->Post();
  if (later.ok()) later = (*prepared)->Wait(kPatience);
  EXPECT_FALSE(later.ok());
  EXPECT_NE(later.code(), StatusCode::kDeadlineExceeded) << later.ToString();
}

// A prepared transfer of a closed channel fails (at Post, or at once
// after), and Wait says why.
TEST_P(ChannelConformanceTest, APreparedTransferEndsWithItsChannel) {
  SharedRegions r;
  ASSERT_TRUE(ShareRegions(*a_, *b_, 4096, 4096, &r));
  auto prepared = a_->Prepare({Op(TransferOp::Kind::kWrite, r, 0, 0, 4096)});
  ASSERT_TRUE(prepared.ok()) << prepared.status().ToString();
  ASSERT_TRUE((*prepared)->Post().ok());
  ASSERT_TRUE((*prepared)->Wait(kPatience).ok());
  a_->Close();
  Status after = (*prepared)->Post();  // refused, or started and failed (TCP runs it in Post)
  EXPECT_NE(after.code(), StatusCode::kFailedPrecondition) << after.ToString();
  Status waited = (*prepared)->Wait(kPatience);
  EXPECT_FALSE(waited.ok());
  EXPECT_NE(waited.code(), StatusCode::kDeadlineExceeded) << waited.ToString();
  if (!after.ok()) {
    EXPECT_EQ(waited, after);
  }
}

}  // namespace
}  // namespace rdmad::internal
