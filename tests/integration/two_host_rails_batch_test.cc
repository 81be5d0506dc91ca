// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Lab, two VMs with two rails each (tests/lab/channels/rails.sh, run with
// --rails 2): Submit's batches striped over rxe0 and rxe1. Node a submits
// batches of 24 x 1 MiB Writes with a notification; node b, on each
// notification, checks that the whole batch is in its region (the
// notification must wait for the rails' pieces, which are not ordered
// with it) and answers. The three ways an application waits all drive
// the rails: Wait; Poll (in a loop, as NIXL's check_xfer_state); and Arm
// with the completion fd. In the second batch a's rail-1 link goes down
// while the batch is in flight (after its first piece on rail 1 is done):
// the batch completes without an error,
// the rail's pieces done again on rxe0, and b still sees it whole. The
// link comes back, so does the rail, and a striped batch of Reads brings
// the last batch back whole.

#include <gtest/gtest.h>
#include <poll.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "rdmad/client.h"
#include "tests/integration/two_host_support.h"

namespace rdmad {
namespace {

using lab::Env;
using lab::Pattern;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr char kService[] = "lab.rails.batch";
constexpr size_t kOp = 1u << 20;
constexpr size_t kOps = 24;  // enough on rail 1 for its link to go down mid-batch, under load too
constexpr size_t kBytes = kOp * kOps;

std::vector<TransferOp> Ops(TransferOp::Kind kind, const MemoryRegion& local,
                            const RegionDescriptor& remote) {
  std::vector<TransferOp> ops;
  for (size_t i = 0; i < kOps; ++i) {
    TransferOp op;
    op.kind = kind;
    op.local = &local;
    op.local_offset = i * kOp;
    op.remote = remote;
    op.remote_offset = i * kOp;
    op.len = kOp;
    ops.push_back(op);
  }
  return ops;
}

// Poll until done, as an engine's progress loop does.
Status PollUntilDone(Transfer& t) {
  Status s;
  auto until = std::chrono::steady_clock::now() + seconds(60);
  while (!t.Poll(&s)) {
    if (std::chrono::steady_clock::now() > until) return Status::DeadlineExceeded("Poll");
    std::this_thread::sleep_for(milliseconds(1));
  }
  return s;
}

// Arm and sleep on the completion fd until done, as an event loop does.
Status ArmUntilDone(Channel& c, Transfer& t) {
  auto fd = c.CompletionFd();
  if (!fd.ok()) return fd.status();
  Status s;
  auto until = std::chrono::steady_clock::now() + seconds(60);
  while (!t.Poll(&s)) {
    if (std::chrono::steady_clock::now() > until) return Status::DeadlineExceeded("Arm");
    if (c.Arm()) {
      pollfd p{*fd, POLLIN, 0};
      if (::poll(&p, 1, 10000) == 0) return Status::DeadlineExceeded("the fd never woke");
    }
  }
  return s;
}

class TwoHostRailsBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!lab::TwoVmsTwoRails()) {
      GTEST_SKIP() << "lab, two VMs with two rails only (tests/lab/channels/rails.sh)";
    }
    auto client = Client::Open();
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
  }
  void TearDown() override {
    if (Env("LAB_NODE") == "a" && !Env("LAB_NETDEV1").empty())
      lab::SetLink(Env("LAB_NETDEV1") + " up");
  }
  void ServeOnB();
  void DriveFromA();

  std::unique_ptr<Client> client_;
};

void TwoHostRailsBatchTest::ServeOnB() {
  auto listener = client_->Listen(kService);
  ASSERT_TRUE(listener.ok()) << listener.status().ToString();
  auto accepted = listener.value()->Accept(seconds(120));
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
  Channel& c = *accepted.value();
  std::vector<uint8_t> bytes(kBytes, 0);
  auto region = c.RegisterMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  std::vector<uint8_t> desc = region.value()->descriptor().Serialize();
  ASSERT_TRUE(c.Send(desc.data(), desc.size()).ok());
  for (;;) {
    auto note = c.RecvNotification(seconds(300));
    if (!note.ok()) break;  // a closed
    uint32_t seed = std::stoul(std::string(note->begin(), note->end()));
    bool whole = bytes == Pattern(kBytes, seed);
    EXPECT_TRUE(whole) << "notification " << seed << " came before its batch was in place";
    std::string answer = (whole ? "whole " : "torn ") + std::to_string(seed);
    ASSERT_TRUE(c.Send(answer.data(), answer.size()).ok());
  }
}

void TwoHostRailsBatchTest::DriveFromA() {
  auto channel = lab::ConnectOnceListening(*client_, Env("LAB_PEER_IP"), kService);
  ASSERT_TRUE(channel.ok()) << channel.status().ToString();
  Channel& c = *channel.value();
  ASSERT_EQ(c.rails().size(), 2u);
  auto desc_bytes = c.Recv(seconds(60));
  ASSERT_TRUE(desc_bytes.ok()) << desc_bytes.status().ToString();
  auto remote = RegionDescriptor::Parse(desc_bytes->data(), desc_bytes->size());
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  auto answer = [&](uint32_t seed) {
    auto m = c.Recv(seconds(120));
    EXPECT_TRUE(m.ok()) << m.status().ToString();
    if (m.ok()) {
      EXPECT_EQ(std::string(m->begin(), m->end()), "whole " + std::to_string(seed));
    }
  };
  std::vector<std::vector<uint8_t>> out;
  std::vector<std::unique_ptr<MemoryRegion>> regions;
  for (uint32_t seed = 1; seed <= 3; ++seed) {
    out.push_back(Pattern(kBytes, seed));
    auto r = c.RegisterMemory(out.back().data(), kBytes);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    regions.push_back(std::move(r).value());
  }
  using Kind = TransferOp::Kind;

  // 1. Striped, waited for with Wait.
  std::vector<ChannelRail> before = c.rails();
  auto t = c.Submit(Ops(Kind::kWrite, *regions[0], *remote), "1");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_TRUE((*t)->Wait(seconds(60)).ok());
  std::vector<ChannelRail> after = c.rails();
  uint64_t on0 = after[0].bytes_written - before[0].bytes_written;
  uint64_t on1 = after[1].bytes_written - before[1].bytes_written;
  std::cout << "[ rails    ] batch of " << kOps << " x 1 MiB: " << on0 << " B on "
            << after[0].local_device << ", " << on1 << " B on " << after[1].local_device << "\n";
  EXPECT_EQ(on0 + on1, kBytes);
  EXPECT_GE(on1, kBytes / 4) << "the batch was not striped";
  answer(1);

  // 2. Rail 1's link goes down while the batch is in flight (once the
  // first of its pieces there is done); Poll drives it.
  before = c.rails();
  t = c.Submit(Ops(Kind::kWrite, *regions[1], *remote), "2");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  Status polled;
  bool done = false;
  while (!(done = (*t)->Poll(&polled)) && c.rails()[1].bytes_written == before[1].bytes_written) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ASSERT_FALSE(done) << "the batch was done before a piece on rail 1 was seen done";
  auto t0 = std::chrono::steady_clock::now();
  lab::SetLink(Env("LAB_NETDEV1") + " down");
  polled = PollUntilDone(**t);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(polled.ok()) << polled.ToString();
  after = c.rails();
  on0 = after[0].bytes_written - before[0].bytes_written;
  on1 = after[1].bytes_written - before[1].bytes_written;
  std::cout << "[ rails    ] link down mid-batch: done in " << ms << " ms; " << on0 << " B on "
            << after[0].local_device << ", " << on1 << " B on " << after[1].local_device
            << "; rail 1 up=" << after[1].up << " (" << after[1].reason << ")\n";
  EXPECT_FALSE(after[1].up);
  EXPECT_LT(on1, kBytes / 2) << "every piece of rail 1 completed: the link went down too late";
  EXPECT_GE(on0 + on1, kBytes);  // pieces done again count on rxe0
  EXPECT_TRUE(c.status().ok()) << c.status().ToString();
  answer(2);

  // 3. The link comes back, so does the rail (small striped batches look);
  // the next batch, driven by Arm and the completion fd, uses it again.
  lab::SetLink(Env("LAB_NETDEV1") + " up");
  bool back = false;
  for (int i = 0; i < 100 && !back; ++i) {
    std::vector<TransferOp> look = Ops(Kind::kWrite, *regions[1], *remote);
    look.resize(1);
    auto small = c.Submit(look);
    ASSERT_TRUE(small.ok() && (*small)->Wait(seconds(30)).ok());
    back = c.rails()[1].up;
    if (!back) std::this_thread::sleep_for(milliseconds(200));
  }
  ASSERT_TRUE(back) << "rail 1 did not come back: " << c.rails()[1].reason;
  before = c.rails();
  t = c.Submit(Ops(Kind::kWrite, *regions[2], *remote), "3");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  Status armed = ArmUntilDone(c, **t);
  ASSERT_TRUE(armed.ok()) << armed.ToString();
  EXPECT_GE(c.rails()[1].bytes_written - before[1].bytes_written, kBytes / 4);
  answer(3);

  // 4. A striped batch of Reads brings batch 3 back whole.
  std::vector<uint8_t> in(kBytes, 0);
  auto in_region = c.RegisterMemory(in.data(), in.size());
  ASSERT_TRUE(in_region.ok());
  before = c.rails();
  t = c.Submit(Ops(Kind::kRead, *in_region.value(), *remote));
  ASSERT_TRUE(t.ok() && (*t)->Wait(seconds(60)).ok());
  EXPECT_GE(c.rails()[1].bytes_read - before[1].bytes_read, kBytes / 4);
  EXPECT_TRUE(in == out[2]) << "the striped Read batch did not bring the region back whole";
  c.Close();
}

TEST_F(TwoHostRailsBatchTest, StripesBatchesAndSurvivesALinkDownMidBatch) {
  if (Env("LAB_NODE") == "b") {
    ServeOnB();
  } else {
    DriveFromA();
  }
}

}  // namespace
}  // namespace rdmad
