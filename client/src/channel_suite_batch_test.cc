// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The Channel conformance tests of Submit: batches of one-sided operations
// (see channel_suite.h), on every transport.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "client/src/channel_suite.h"

namespace rdmad::internal {
namespace {

using std::chrono::milliseconds;

// KV-cache style: scattered blocks written in one batch land where they
// should; a read batch brings them back in order.
TEST_P(ChannelConformanceTest, ABatchOfScatteredWritesAndReadsLandsInPlace) {
  constexpr size_t kBlock = 4096, kBlocks = 300;  // more than a send queue's depth
  SharedRegions r;
  ASSERT_TRUE(ShareRegions(*a_, *b_, 2 * kBlock * kBlocks, 2 * kBlock * kBlocks, &r));
  std::vector<TransferOp> writes;
  for (size_t i = 0; i < kBlocks; ++i) {  // block i -> slot (7 i mod 2n) of the remote
    writes.push_back(
        Op(TransferOp::Kind::kWrite, r, i * kBlock, (7 * i % (2 * kBlocks)) * kBlock, kBlock));
  }
  auto transfer = a_->Submit(writes);
  ASSERT_TRUE(transfer.ok()) << transfer.status().ToString();
  Status done = (*transfer)->Wait(kPatience);
  ASSERT_TRUE(done.ok()) << done.ToString();
  Status polled = Status::Unavailable("not set");
  EXPECT_TRUE((*transfer)->Poll(&polled));
  EXPECT_TRUE(polled.ok()) << polled.ToString();
  EXPECT_EQ((*transfer)->failed_op(), -1);
  for (size_t i = 0; i < kBlocks; ++i) {
    auto at = r.remote_bytes.begin() + long((7 * i % (2 * kBlocks)) * kBlock);
    ASSERT_TRUE(std::equal(at, at + kBlock, r.local_bytes.begin() + long(i * kBlock)))
        << "block " << i;
  }
  std::vector<TransferOp> reads;
  size_t back = kBlock * kBlocks;  // into the local region's second half
  for (size_t i = 0; i < kBlocks; ++i) {
    reads.push_back(Op(TransferOp::Kind::kRead, r, back + i * kBlock,
                       (7 * i % (2 * kBlocks)) * kBlock, kBlock));
  }
  transfer = a_->Submit(reads);
  ASSERT_TRUE(transfer.ok()) << transfer.status().ToString();
  ASSERT_TRUE((*transfer)->Wait(kPatience).ok());
  EXPECT_TRUE(std::equal(r.local_bytes.begin(), r.local_bytes.begin() + long(back),
                         r.local_bytes.begin() + long(back)));
}

// Threads waiting at once on one batch all wake when it is done (one of
// them sleeps on the completions, the others on the channel's condition),
// and a thread polling it sees it done too; afterwards Wait and Poll
// answer at once.
TEST_P(ChannelConformanceTest, ThreadsWaitingOnOneBatchAllWake) {
  constexpr size_t kBlock = 4096, kBlocks = 512;  // several send queues' worth
  SharedRegions r;
  ASSERT_TRUE(ShareRegions(*a_, *b_, kBlock * kBlocks, kBlock * kBlocks, &r));
  for (int round = 0; round < 3; ++round) {
    std::vector<TransferOp> writes;
    for (size_t i = 0; i < kBlocks; ++i) {
      writes.push_back(Op(TransferOp::Kind::kWrite, r, i * kBlock, i * kBlock, kBlock));
    }
    auto transfer = a_->Submit(writes);
    ASSERT_TRUE(transfer.ok()) << transfer.status().ToString();
    constexpr int kWaiters = 4;
    std::atomic<int> woke_ok{0};
    std::atomic<bool> polled_done{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kWaiters; ++t) {
      threads.emplace_back([&] {
        if ((*transfer)->Wait(kPatience).ok()) ++woke_ok;
      });
    }
    threads.emplace_back([&] {
      auto until = std::chrono::steady_clock::now() + kPatience;
      Status polled = Status::Unavailable("not set");
      while (std::chrono::steady_clock::now() < until) {
        if ((*transfer)->Poll(&polled)) {
          polled_done = polled.ok();
          return;
        }
        std::this_thread::yield();
      }
    });
    for (auto& t : threads) t.join();
    EXPECT_EQ(woke_ok.load(), kWaiters) << "round " << round;
    EXPECT_TRUE(polled_done.load()) << "round " << round;
    EXPECT_TRUE((*transfer)->Wait(milliseconds(0)).ok());
    Status polled = Status::Unavailable("not set");
    EXPECT_TRUE((*transfer)->Poll(&polled));
    EXPECT_TRUE(polled.ok()) << polled.ToString();
    EXPECT_TRUE(std::equal(r.remote_bytes.begin(), r.remote_bytes.end(), r.local_bytes.begin()));
  }
}

// Many batches in flight at once, then waited for in any order; messages
// still flow on the same channel.
TEST_P(ChannelConformanceTest, ManyBatchesInFlightAllComplete) {
  constexpr size_t kBatches = 64, kOps = 8, kLen = 512;
  SharedRegions r;
  ASSERT_TRUE(ShareRegions(*a_, *b_, kBatches * kOps * kLen, kBatches * kOps * kLen, &r));
  std::vector<std::unique_ptr<Transfer>> transfers;
  for (size_t b = 0; b < kBatches; ++b) {
    std::vector<TransferOp> ops;
    for (size_t o = 0; o < kOps; ++o) {
      size_t at = (b * kOps + o) * kLen;
      ops.push_back(Op(TransferOp::Kind::kWrite, r, at, at, kLen));
    }
    auto transfer = a_->Submit(ops);
    ASSERT_TRUE(transfer.ok()) << "batch " << b << ": " << transfer.status().ToString();
    transfers.push_back(std::move(transfer).value());
  }
  for (size_t b = kBatches; b-- > 0;) {
    Status done = transfers[b]->Wait(kPatience);
    ASSERT_TRUE(done.ok()) << "batch " << b << ": " << done.ToString();
  }
  EXPECT_EQ(r.remote_bytes, r.local_bytes);
  ASSERT_TRUE(a_->Send("after", 5).ok());
  auto got = b_->Recv(kPatience);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::string(got->begin(), got->end()), "after");
}

// A batch that cannot start is refused whole, naming the op; the channel
// goes on. An empty batch is done at once.
TEST_P(ChannelConformanceTest, ABadBatchIsRefusedBeforeAnythingStarts) {
  SharedRegions r;
  ASSERT_TRUE(ShareRegions(*a_, *b_, 4096, 4096, &r));
  std::vector<TransferOp> ops{Op(TransferOp::Kind::kWrite, r, 0, 0, 100),
                              Op(TransferOp::Kind::kWrite, r, 0, 100, 100)};
  ops[1].local = nullptr;
  auto refused = a_->Submit(ops);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(), "op 1: no local region");
  ops[1] = Op(TransferOp::Kind::kRead, r, 0, 4000, 100);
  refused = a_->Submit(ops);
  EXPECT_EQ(refused.status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(refused.status().message().rfind("op 1: remote range", 0), 0u)
      << refused.status().ToString();
  EXPECT_TRUE(std::all_of(r.remote_bytes.begin(), r.remote_bytes.end(), [](uint8_t v) {
    return v == 0;
  })) << "op 0 did not run either";
  auto empty = a_->Submit({});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE((*empty)->Poll());
  EXPECT_TRUE((*empty)->Wait(milliseconds(0)).ok());
  auto fine = a_->Submit({Op(TransferOp::Kind::kWrite, r, 0, 0, 4096)});
  ASSERT_TRUE(fine.ok());
  ASSERT_TRUE((*fine)->Wait(kPatience).ok());
  EXPECT_EQ(r.remote_bytes, r.local_bytes);
}

// A batch of one op names it too (the RDMA channel keeps no op list for it).
TEST_P(ChannelConformanceTest, AFailingSingleOpNamesItself) {
  SharedRegions r;
  ASSERT_TRUE(ShareRegions(*a_, *b_, 4096, 4096, &r));
  TransferOp op = Op(TransferOp::Kind::kWrite, r, 0, 0, 4096);
  op.remote.rkey ^= 0x5a5a5a5a;
  auto transfer = a_->Submit({op});
  ASSERT_TRUE(transfer.ok()) << transfer.status().ToString();
  Status done = (*transfer)->Wait(kPatience);
  EXPECT_FALSE(done.ok());
  EXPECT_NE(done.code(), StatusCode::kDeadlineExceeded) << done.ToString();
  EXPECT_EQ((*transfer)->failed_op(), 0) << done.ToString();
}

// An op the peer refuses (a wrong key) fails the batch and names itself;
// the ops before it may have landed. Nothing crashes or hangs.
TEST_P(ChannelConformanceTest, AFailingOpNamesItself) {
  SharedRegions r;
  ASSERT_TRUE(ShareRegions(*a_, *b_, 4096, 4096, &r));
  std::vector<TransferOp> ops;
  for (size_t i = 0; i < 5; ++i) ops.push_back(Op(TransferOp::Kind::kWrite, r, i * 64, i * 64, 64));
  ops[3].remote.rkey ^= 0x5a5a5a5a;
  auto transfer = a_->Submit(ops);
  ASSERT_TRUE(transfer.ok()) << transfer.status().ToString();
  Status done = (*transfer)->Wait(kPatience);
  EXPECT_FALSE(done.ok());
  EXPECT_NE(done.code(), StatusCode::kDeadlineExceeded) << done.ToString();
  EXPECT_EQ((*transfer)->failed_op(), 3) << done.ToString();
  EXPECT_TRUE(
      std::equal(r.remote_bytes.begin(), r.remote_bytes.begin() + 3 * 64, r.local_bytes.begin()));
  EXPECT_TRUE(std::all_of(r.remote_bytes.begin() + 3 * 64, r.remote_bytes.begin() + 4 * 64,
                          [](uint8_t v) { return v == 0; }));
}

// The peer hears a batch's notification only once its data is in place,
// apart from messages, in order; a notification may come alone.
TEST_P(ChannelConformanceTest, ANotificationFollowsItsBatchApartFromMessages) {
  constexpr size_t kBlock = 16384, kBlocks = 64;
  SharedRegions r;
  ASSERT_TRUE(ShareRegions(*a_, *b_, kBlock * kBlocks, kBlock * kBlocks, &r));
  ASSERT_TRUE(a_->Send("before", 6).ok());
  for (int round = 0; round < 3; ++round) {
    std::vector<uint8_t> fresh = Pattern(r.local_bytes.size(), 100 + round);
    std::copy(fresh.begin(), fresh.end(), r.local_bytes.begin());  // the region's own memory
    std::vector<TransferOp> ops;
    for (size_t i = 0; i < kBlocks; ++i) {
      ops.push_back(
          Op(TransferOp::Kind::kWrite, r, i * kBlock, (kBlocks - 1 - i) * kBlock, kBlock));
    }
    std::string note = "blocks ready " + std::to_string(round);
    auto transfer = a_->Submit(ops, note);
    ASSERT_TRUE(transfer.ok()) << transfer.status().ToString();
    auto got = b_->RecvNotification(kPatience);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(std::string(got->begin(), got->end()), note);
    for (size_t i = 0; i < kBlocks; ++i) {  // in place when the notification came
      auto at = r.remote_bytes.begin() + long((kBlocks - 1 - i) * kBlock);
      ASSERT_TRUE(std::equal(at, at + kBlock, r.local_bytes.begin() + long(i * kBlock)))
          << "round " << round << " block " << i;
    }
    ASSERT_TRUE((*transfer)->Wait(kPatience).ok());
  }
  // Reads, then a notification: fenced behind them.
  auto reads = a_->Submit({Op(TransferOp::Kind::kRead, r, 0, 0, kBlock)}, "read done");
  ASSERT_TRUE(reads.ok()) << reads.status().ToString();
  ASSERT_TRUE((*reads)->Wait(kPatience).ok());
  auto got = b_->RecvNotification(kPatience);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::string(got->begin(), got->end()), "read done");
  // Alone, and messages unaffected.
  ASSERT_TRUE(a_->Submit({}, "alone").ok());
  ASSERT_TRUE(a_->Send("after", 5).ok());
  got = b_->RecvNotification(kPatience);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::string(got->begin(), got->end()), "alone");
  for (const char* expected : {"before", "after"}) {
    auto message = b_->Recv(kPatience);
    ASSERT_TRUE(message.ok()) << message.status().ToString();
    EXPECT_EQ(std::string(message->begin(), message->end()), expected);
  }
  EXPECT_EQ(b_->RecvNotification(milliseconds(50)).status().code(), StatusCode::kDeadlineExceeded);
}

TEST_P(ChannelConformanceTest, NotificationsAreBoundedAndEndWithThePeer) {
  auto too_long = a_->Submit({}, std::string(kMaxNotificationBytes + 1, 'x'));
  EXPECT_EQ(too_long.status().code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(a_->Submit({}, std::string(kMaxNotificationBytes, 'y')).ok());
  ASSERT_TRUE(a_->Submit({}, "last").ok());
  a_->Close();
  // What was sent before the close still arrives, then the end.
  auto first = b_->RecvNotification(kPatience);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->size(), kMaxNotificationBytes);
  auto last = b_->RecvNotification(kPatience);
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_EQ(std::string(last->begin(), last->end()), "last");
  EXPECT_EQ(b_->RecvNotification(kPatience).status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace rdmad::internal
