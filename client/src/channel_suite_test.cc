// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The Channel conformance tests (see channel_suite.h).

#include "client/src/channel_suite.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <future>
#include <vector>

namespace rdmad::internal {

std::vector<uint8_t> Pattern(size_t n, uint64_t seed) {
  std::vector<uint8_t> out(n);
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (auto& byte : out) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    byte = static_cast<uint8_t>(x >> 32);
  }
  return out;
}

// Sends the descriptor of `region` from `from`; returns it as `to` parses it.
StatusOr<RegionDescriptor> ExchangeDescriptor(Channel& from, Channel& to,
                                              const MemoryRegion& region) {
  std::vector<uint8_t> bytes = region.descriptor().Serialize();
  RDMAD_RETURN_IF_ERROR(from.Send(bytes.data(), bytes.size()));
  StatusOr<std::vector<uint8_t>> got = to.Recv(kPatience);
  if (!got.ok()) return got.status();
  return RegionDescriptor::Parse(got->data(), got->size());
}

::testing::AssertionResult ShareRegions(Channel& a, Channel& b, size_t remote_size,
                                        size_t local_size, SharedRegions* r) {
  r->remote_bytes.assign(remote_size, 0);
  r->local_bytes = Pattern(local_size, 21);
  auto remote = b.RegisterMemory(r->remote_bytes.data(), r->remote_bytes.size());
  if (!remote.ok()) return ::testing::AssertionFailure() << remote.status().ToString();
  r->remote = std::move(remote).value();
  auto desc = ExchangeDescriptor(b, a, *r->remote);
  if (!desc.ok()) return ::testing::AssertionFailure() << desc.status().ToString();
  r->desc = *desc;
  auto local = a.RegisterMemory(r->local_bytes.data(), r->local_bytes.size());
  if (!local.ok()) return ::testing::AssertionFailure() << local.status().ToString();
  r->local = std::move(local).value();
  return ::testing::AssertionSuccess();
}

namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

uint64_t Checksum(const std::vector<uint8_t>& bytes) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

double CpuSeconds(int who) {
  rusage usage{};
  getrusage(who, &usage);
  auto sec = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return sec(usage.ru_utime) + sec(usage.ru_stime);
}

TEST_P(ChannelConformanceTest, MessagesOfEverySizeBothWays) {
  const std::vector<size_t> sizes = {0, 1, 100, 64 * 1024 + 1, 1 << 20, 16 << 20};
  for (auto [from, to] : {std::pair(a_.get(), b_.get()), std::pair(b_.get(), a_.get())}) {
    std::vector<Status> sent(sizes.size());
    InBackground([&, from = from] {
      for (size_t i = 0; i < sizes.size(); ++i) {
        std::vector<uint8_t> message = Pattern(sizes[i], i);
        sent[i] = from->Send(message.data(), message.size());
      }
    });
    for (size_t i = 0; i < sizes.size(); ++i) {
      StatusOr<std::vector<uint8_t>> got = to->Recv(kPatience);
      ASSERT_TRUE(got.ok()) << "message " << i << ": " << got.status().ToString();
      ASSERT_EQ(got->size(), sizes[i]);
      EXPECT_EQ(Checksum(*got), Checksum(Pattern(sizes[i], i))) << sizes[i] << " bytes";
    }
    JoinBackground();
    for (const Status& s : sent) EXPECT_TRUE(s.ok()) << s.ToString();
  }
}

TEST_P(ChannelConformanceTest, SendFromRegisteredRegion) {
  std::vector<uint8_t> buf = Pattern(1 << 20, 7);
  StatusOr<std::unique_ptr<MemoryRegion>> region = a_->RegisterMemory(buf.data(), buf.size());
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  Status sent;
  InBackground([&] { sent = a_->Send(**region, 4096, 100000); });
  StatusOr<std::vector<uint8_t>> got = b_->Recv(kPatience);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  JoinBackground();
  EXPECT_TRUE(sent.ok()) << sent.ToString();
  EXPECT_TRUE(std::equal(got->begin(), got->end(), buf.begin() + 4096, buf.begin() + 104096));
  EXPECT_EQ(got->size(), 100000u);
  EXPECT_EQ(a_->Send(**region, buf.size() - 10, 11).code(), StatusCode::kOutOfRange);
}

TEST_P(ChannelConformanceTest, ManySmallMessagesReachASlowReceiverInOrder) {
  constexpr uint32_t kCount = 10000;
  Status sent;
  InBackground([&] {
    for (uint32_t i = 0; i < kCount && sent.ok(); ++i) {
      std::vector<uint8_t> message = Pattern(4 + i % 61, i);
      std::memcpy(message.data(), &i, sizeof(i));
      sent = a_->Send(message.data(), message.size());
    }
  });
  for (uint32_t i = 0; i < kCount; ++i) {
    if (i % 1000 == 999) std::this_thread::sleep_for(milliseconds(20));
    if (i % 97 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    StatusOr<std::vector<uint8_t>> got = b_->Recv(kPatience);
    ASSERT_TRUE(got.ok()) << "message " << i << ": " << got.status().ToString();
    ASSERT_EQ(got->size(), 4 + i % 61) << "message " << i;
    uint32_t index = 0;
    std::memcpy(&index, got->data(), sizeof(index));
    ASSERT_EQ(index, i);
  }
  JoinBackground();
  EXPECT_TRUE(sent.ok()) << sent.ToString();
}

TEST_P(ChannelConformanceTest, WriteThenReadBackThroughADescriptor) {
  std::vector<uint8_t> target(8 << 20, 0);
  StatusOr<std::unique_ptr<MemoryRegion>> remote = b_->RegisterMemory(target.data(), target.size());
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  StatusOr<RegionDescriptor> desc = ExchangeDescriptor(*b_, *a_, **remote);
  ASSERT_TRUE(desc.ok()) << desc.status().ToString();
  EXPECT_EQ(desc->length, target.size());

  std::vector<uint8_t> src = Pattern((4 << 20) + 3, 11);
  StatusOr<std::unique_ptr<MemoryRegion>> local = a_->RegisterMemory(src.data(), src.size());
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  // b is not calling anything: the one-sided operations need no help from it.
  Status wrote = a_->Write(**local, 0, *desc, 1000, src.size());
  ASSERT_TRUE(wrote.ok()) << wrote.ToString();
  EXPECT_TRUE(std::equal(src.begin(), src.end(), target.begin() + 1000));
  EXPECT_TRUE(std::all_of(target.begin(), target.begin() + 1000, [](uint8_t v) { return v == 0; }));

  std::fill(target.begin() + 1000, target.begin() + 1100, 0xab);  // b changes it
  std::vector<uint8_t> back(src.size() + 10, 0);
  StatusOr<std::unique_ptr<MemoryRegion>> sink = a_->RegisterMemory(back.data(), back.size());
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  Status read = a_->Read(**sink, 10, *desc, 1000, src.size());
  ASSERT_TRUE(read.ok()) << read.ToString();
  EXPECT_TRUE(
      std::all_of(back.begin() + 10, back.begin() + 110, [](uint8_t v) { return v == 0xab; }));
  EXPECT_TRUE(std::equal(src.begin() + 100, src.end(), back.begin() + 110));
}

TEST_P(ChannelConformanceTest, OutOfRangeWriteAndReadFailWithoutHarm) {
  std::vector<uint8_t> target(4096, 0);
  StatusOr<std::unique_ptr<MemoryRegion>> remote = b_->RegisterMemory(target.data(), target.size());
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  StatusOr<RegionDescriptor> desc = ExchangeDescriptor(*b_, *a_, **remote);
  ASSERT_TRUE(desc.ok()) << desc.status().ToString();
  std::vector<uint8_t> buf = Pattern(8192, 3);
  StatusOr<std::unique_ptr<MemoryRegion>> local = a_->RegisterMemory(buf.data(), buf.size());
  ASSERT_TRUE(local.ok()) << local.status().ToString();

  EXPECT_EQ(a_->Write(**local, 0, *desc, 4000, 100).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(a_->Write(**local, 8190, *desc, 0, 10).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(a_->Write(**local, 0, *desc, UINT64_MAX, 2).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(a_->Read(**local, 0, *desc, 4096, 1).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(a_->Read(**local, 8192, *desc, 0, 1).code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(std::all_of(target.begin(), target.end(), [](uint8_t v) { return v == 0; }));

  // Nothing was sent: the channel still works.
  Status wrote = a_->Write(**local, 0, *desc, 0, target.size());
  EXPECT_TRUE(wrote.ok()) << wrote.ToString();
  EXPECT_TRUE(std::equal(target.begin(), target.end(), buf.begin()));
  ASSERT_TRUE(a_->Send("ok", 2).ok());
  StatusOr<std::vector<uint8_t>> got = b_->Recv(kPatience);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->size(), 2u);
}

TEST_P(ChannelConformanceTest, WrongKeyIsAnErrorNotACrash) {
  std::vector<uint8_t> target(4096, 0);
  StatusOr<std::unique_ptr<MemoryRegion>> remote = b_->RegisterMemory(target.data(), target.size());
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  StatusOr<RegionDescriptor> desc = ExchangeDescriptor(*b_, *a_, **remote);
  ASSERT_TRUE(desc.ok()) << desc.status().ToString();
  std::vector<uint8_t> buf = Pattern(4096, 5);
  StatusOr<std::unique_ptr<MemoryRegion>> local = a_->RegisterMemory(buf.data(), buf.size());
  ASSERT_TRUE(local.ok()) << local.status().ToString();

  RegionDescriptor bad = *desc;
  bad.rkey ^= 0x5a5a5a5a;
  EXPECT_FALSE(a_->Write(**local, 0, bad, 0, 64).ok());
  EXPECT_TRUE(std::all_of(target.begin(), target.end(), [](uint8_t v) { return v == 0; }));
  // The channel may be dead now (a remote access error kills an RDMA QP);
  // whatever follows must fail cleanly or work, never crash or hang.
  EXPECT_FALSE(a_->Read(**local, 0, bad, 0, 64).ok());
  (void)b_->Recv(milliseconds(100));
  (void)a_->status();
  (void)b_->status();
}

// A region registered read-only (a KV cache exposed to be pulled) can be
// read by the peer; the peer's Write into it fails and changes nothing.
TEST_P(ChannelConformanceTest, AReadOnlyRegionIsReadButNeverWritten) {
  std::vector<uint8_t> exposed = Pattern(8192, 31);
  const std::vector<uint8_t> original = exposed;
  auto remote = b_->RegisterMemory(exposed.data(), exposed.size(), MemoryAccess::kRemoteRead);
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  EXPECT_EQ((*remote)->access(), MemoryAccess::kRemoteRead);
  StatusOr<RegionDescriptor> desc = ExchangeDescriptor(*b_, *a_, **remote);
  ASSERT_TRUE(desc.ok()) << desc.status().ToString();
  std::vector<uint8_t> buf(8192, 0);
  auto local = a_->RegisterMemory(buf.data(), buf.size());
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  EXPECT_EQ((*local)->access(), MemoryAccess::kReadWrite);

  Status read = a_->Read(**local, 0, *desc, 0, buf.size());
  ASSERT_TRUE(read.ok()) << read.ToString();
  EXPECT_EQ(buf, original);
  std::fill(buf.begin(), buf.end(), 0xee);
  Status wrote = a_->Write(**local, 0, *desc, 0, 4096);
  EXPECT_FALSE(wrote.ok()) << "a write into a read-only region succeeded";
  EXPECT_NE(wrote.code(), StatusCode::kDeadlineExceeded) << wrote.ToString();
  EXPECT_EQ(exposed, original);
}

TEST_P(ChannelConformanceTest, RecvTimesOut) {
  auto start = Clock::now();
  StatusOr<std::vector<uint8_t>> got = a_->Recv(milliseconds(100));
  auto waited = Clock::now() - start;
  EXPECT_EQ(got.status().code(), StatusCode::kDeadlineExceeded) << got.status().ToString();
  EXPECT_GE(waited, milliseconds(90));
  EXPECT_LT(waited, seconds(5));
  ASSERT_TRUE(b_->Send("x", 1).ok());  // still usable
  got = a_->Recv(kPatience);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->size(), 1u);
}

TEST_P(ChannelConformanceTest, CloseWakesABlockedRecv) {
  Status result;
  std::atomic<bool> returned{false};
  InBackground([&] {
    result = a_->Recv(kForever).status();
    returned = true;
  });
  std::this_thread::sleep_for(milliseconds(200));
  EXPECT_FALSE(returned);
  auto start = Clock::now();
  a_->Close();
  JoinBackground();
  EXPECT_LT(Clock::now() - start, seconds(2));
  EXPECT_EQ(result.code(), StatusCode::kCancelled) << result.ToString();
  EXPECT_FALSE(a_->Send("x", 1).ok());
}

TEST_P(ChannelConformanceTest, PeerCloseFailsTheOthersRecv) {
  Status result;
  InBackground([&] { result = b_->Recv(kForever).status(); });
  std::this_thread::sleep_for(milliseconds(100));
  a_->Close();
  JoinBackground();
  EXPECT_EQ(result.code(), StatusCode::kUnavailable) << result.ToString();
  EXPECT_EQ(b_->status().code(), StatusCode::kUnavailable) << b_->status().ToString();
  EXPECT_EQ(b_->Send("x", 1).code(), StatusCode::kUnavailable);
  EXPECT_EQ(b_->Recv(milliseconds(10)).status().code(), StatusCode::kUnavailable);
}

// Messages sent just before Close arrive whole, however large, even when
// the receiver only starts reading after the sender began to close (on
// RDMA the large ones wait in the sender's memory until the receiver READs
// them: Close gives it the time). Then the receiver hears the close.
TEST_P(ChannelConformanceTest, LargeMessagesSentJustBeforeCloseAreDelivered) {
  const std::vector<uint8_t> first = Pattern(size_t(1) << 20, 71);
  const std::vector<uint8_t> second = Pattern((size_t(3) << 20) + 5, 72);
  StatusOr<std::vector<uint8_t>> got_first = Status::Internal("not received");
  StatusOr<std::vector<uint8_t>> got_second = Status::Internal("not received");
  Status end = Status::Internal("not received");
  InBackground([&] {
    std::this_thread::sleep_for(milliseconds(300));  // the sender is closing by now
    got_first = b_->Recv(seconds(10));
    got_second = b_->Recv(seconds(10));
    end = b_->Recv(seconds(10)).status();
  });
  ASSERT_TRUE(a_->Send(first.data(), first.size()).ok());
  ASSERT_TRUE(a_->Send(second.data(), second.size()).ok());
  a_.reset();  // closes and lets go of everything
  JoinBackground();
  ASSERT_TRUE(got_first.ok()) << got_first.status().ToString();
  EXPECT_TRUE(*got_first == first) << "the first message arrived changed";
  ASSERT_TRUE(got_second.ok()) << got_second.status().ToString();
  EXPECT_TRUE(*got_second == second) << "the second message arrived changed";
  EXPECT_EQ(end.code(), StatusCode::kUnavailable) << end.ToString();
}

// Both sides close with large messages of the other's unread: neither
// waits for the other to read (what a closing side will never read it
// reports as done), so both closes are quick.
TEST_P(ChannelConformanceTest, TwoSidesClosingWithUnreadMessagesDoNotWaitForEachOther) {
  // Both send at once: a new RDMA channel's ring holds a few messages
  // until the receiving side's library sees them and grows it.
  const std::vector<uint8_t> big = Pattern(size_t(1) << 20, 73);
  auto a_sent = std::async(std::launch::async, [&] { return a_->Send(big.data(), big.size()); });
  ASSERT_TRUE(b_->Send(big.data(), big.size()).ok());
  ASSERT_TRUE(a_sent.get().ok());
  std::this_thread::sleep_for(milliseconds(100));  // the descriptors are across
  Clock::duration a_took{};
  auto start = Clock::now();
  InBackground([&] {
    auto t0 = Clock::now();
    a_->Close();
    a_took = Clock::now() - t0;
  });
  b_->Close();
  auto b_took = Clock::now() - start;
  JoinBackground();
  EXPECT_LT(a_took, seconds(3)) << "a's close waited for b";
  EXPECT_LT(b_took, seconds(3)) << "b's close waited for a";
}

TEST_P(ChannelConformanceTest, AnIdleRecvUsesNoCpu) {
  double thread_cpu = -1;
  double wall = 0;
  const double process_before = CpuSeconds(RUSAGE_SELF);
  InBackground([&] {
    const double before = CpuSeconds(RUSAGE_THREAD);
    auto start = Clock::now();
    Status s = a_->Recv(milliseconds(1000)).status();
    wall = std::chrono::duration<double>(Clock::now() - start).count();
    thread_cpu = CpuSeconds(RUSAGE_THREAD) - before;
    EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.ToString();
  });
  JoinBackground();
  const double process_cpu = CpuSeconds(RUSAGE_SELF) - process_before;
  EXPECT_GE(wall, 0.9);
  EXPECT_LT(thread_cpu, 0.05 * wall) << "the thread blocked in Recv used " << thread_cpu << " s";
  // Also the transport's own threads (I/O, completion): idle means asleep.
  EXPECT_LT(process_cpu, 0.2 * wall) << "the process used " << process_cpu << " s while idle";
}

}  // namespace

std::string ChannelPairFactoryName(const ::testing::TestParamInfo<ChannelPairFactory>& info) {
  return info.param.name;
}

void PrintTo(const ChannelPairFactory& factory, std::ostream* os) { *os << factory.name; }

void ChannelConformanceTest::SetUp() {
  StatusOr<ChannelPair> pair = GetParam().make();
  if (!pair.ok() && (pair.status().code() == StatusCode::kFailedPrecondition ||
                     pair.status().code() == StatusCode::kUnimplemented)) {
    GTEST_SKIP() << pair.status().ToString();
  }
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  a_ = std::move(pair->first);
  b_ = std::move(pair->second);
  ASSERT_NE(a_, nullptr);
  ASSERT_NE(b_, nullptr);
}

void ChannelConformanceTest::TearDown() {
  if (HasFailure()) {
    if (a_) a_->Close();
    if (b_) b_->Close();
  }
  JoinBackground();
  a_.reset();
  b_.reset();
}

void ChannelConformanceTest::InBackground(std::function<void()> fn) {
  JoinBackground();
  background_ = std::thread(std::move(fn));
}

void ChannelConformanceTest::JoinBackground() {
  if (background_.joinable()) background_.join();
}

}  // namespace rdmad::internal
