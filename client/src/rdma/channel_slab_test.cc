// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ChannelSlab's bookkeeping over a counting SlabMemory (real memory, fake
// registrations; no device): runs that double up to their cap, pieces that
// never overlap and carry their run's key, pieces reused when given back,
// whole free runs let go but one, a run too big for the memlock limit
// retried as one piece, and balance under concurrent use. The slab on a
// real device is exercised by every channel of the lab's tests.

#include "client/src/rdma/channel_slab.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace rdmad::internal {
namespace {

constexpr size_t kPiece = 24 << 10;  // a channel's first 4 + 2 slots of 4 KiB

// Counts what the slab asks of the kernel; refuses registrations above
// limit bytes (RLIMIT_MEMLOCK) and every one once broken.
struct Counts {
  std::mutex mu;
  std::map<uint8_t*, size_t> mapped;
  std::map<void*, size_t> registered;
  std::map<void*, uint32_t> keys;  // lkey by registration
  int registrations = 0, deregistrations = 0;
  size_t limit = SIZE_MAX;
  bool broken = false;
};

class CountingMemory final : public SlabMemory {
 public:
  explicit CountingMemory(Counts* c) : c_(c) {}
  StatusOr<uint8_t*> Map(size_t len) override {
    void* p = std::aligned_alloc(size_t(sysconf(_SC_PAGESIZE)), len);
    if (p == nullptr) return Status::ResourceExhausted("aligned_alloc");
    std::memset(p, 0, len);
    std::lock_guard lock(c_->mu);
    c_->mapped[static_cast<uint8_t*>(p)] = len;
    return static_cast<uint8_t*>(p);
  }
  void Unmap(uint8_t* addr, size_t len) override {
    std::lock_guard lock(c_->mu);
    EXPECT_EQ(c_->mapped[addr], len);
    c_->mapped.erase(addr);
    std::free(addr);
  }
  StatusOr<Registration> Register(uint8_t* addr, size_t len) override {
    std::lock_guard lock(c_->mu);
    if (c_->broken || len > c_->limit) {
      return Status::ResourceExhausted("ibv_reg_mr of " + std::to_string(len) + " bytes failed");
    }
    ++c_->registrations;
    c_->registered[addr] = len;
    uint32_t key = 0x100 + uint32_t(c_->registrations);
    c_->keys[addr] = key;
    return Registration{addr, key, key + 0x10000};
  }
  void Deregister(const Registration& r) override {
    std::lock_guard lock(c_->mu);
    ++c_->deregistrations;
    EXPECT_EQ(c_->registered.erase(r.handle), 1u);
  }

 private:
  Counts* c_;
};

class ChannelSlabTest : public ::testing::Test {
 protected:
  std::vector<ChannelSlab::Piece> TakeMany(size_t n, size_t bytes = kPiece) {
    std::vector<ChannelSlab::Piece> pieces;
    for (size_t i = 0; i < n; ++i) {
      auto p = slab_->Take(bytes);
      EXPECT_TRUE(p.ok()) << p.status().ToString();
      if (p.ok()) pieces.push_back(std::move(p).value());
    }
    return pieces;
  }

  Counts counts_;
  std::unique_ptr<ChannelSlab> slab_ =
      std::make_unique<ChannelSlab>(std::make_unique<CountingMemory>(&counts_), "fake0");
};

TEST_F(ChannelSlabTest, AThousandChannelsRegisterSixtySixRunsThatDoubleUpToTheirCap) {
  std::vector<ChannelSlab::Piece> pieces = TakeMany(1000);
  ASSERT_EQ(pieces.size(), 1000u);
  // 1 + 2 + 4 + 8 pieces, then runs of 16: 15 + 62 x 16 = 1007 >= 1000.
  EXPECT_EQ(counts_.registrations, 66);
  EXPECT_EQ(slab_->runs(), 66u);
  EXPECT_EQ(slab_->pieces_out(), 1000u);
  EXPECT_EQ(slab_->registered_bytes(), 1007 * kPiece);
  std::vector<size_t> sizes;
  for (const auto& [addr, len] : counts_.registered) sizes.push_back(len / kPiece);
  std::multiset<size_t> runs(sizes.begin(), sizes.end());
  EXPECT_EQ(runs.count(1), 1u);
  EXPECT_EQ(runs.count(2), 1u);
  EXPECT_EQ(runs.count(4), 1u);
  EXPECT_EQ(runs.count(8), 1u);
  EXPECT_EQ(runs.count(ChannelSlab::kMaxRunPieces), 62u);
}

TEST_F(ChannelSlabTest, PiecesNeverOverlapAndCarryTheirRunsKeys) {
  std::vector<ChannelSlab::Piece> pieces = TakeMany(100);
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::memset(pieces[i].data(), int(i), pieces[i].size());
  }
  std::set<uint8_t*> starts;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const ChannelSlab::Piece& p = pieces[i];
    EXPECT_EQ(p.size(), kPiece);
    EXPECT_EQ(p.data()[0], uint8_t(i));
    EXPECT_EQ(p.data()[p.size() - 1], uint8_t(i)) << "piece " << i << " was overwritten";
    EXPECT_TRUE(starts.insert(p.data()).second);
    // Inside the registration whose key it carries.
    auto run = counts_.registered.upper_bound(static_cast<void*>(p.data()));
    ASSERT_NE(run, counts_.registered.begin());
    --run;
    auto* base = static_cast<uint8_t*>(run->first);
    EXPECT_LE(p.data() + p.size(), base + run->second);
    EXPECT_EQ(p.lkey(), counts_.keys[run->first]);
    EXPECT_EQ(p.rkey(), p.lkey() + 0x10000);
  }
}

TEST_F(ChannelSlabTest, APieceGivenBackIsTheNextChannelsWithoutARegistration) {
  std::vector<ChannelSlab::Piece> pieces = TakeMany(3);  // runs of 1 and 2: full
  ASSERT_EQ(counts_.registrations, 2);
  uint8_t* freed = pieces[1].data();
  pieces[1].Release();
  auto again = slab_->Take(kPiece);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->data(), freed);
  EXPECT_EQ(counts_.registrations, 2);
}

TEST_F(ChannelSlabTest, WholeFreeRunsAreLetGoButOneForTheNextConnect) {
  { std::vector<ChannelSlab::Piece> pieces = TakeMany(1000); }
  EXPECT_EQ(slab_->pieces_out(), 0u);
  EXPECT_EQ(slab_->runs(), 1u);
  EXPECT_EQ(counts_.deregistrations, 65);
  EXPECT_LE(slab_->registered_bytes(), ChannelSlab::kMaxRunPieces * kPiece);
  // A connect/close loop reuses the run that stayed.
  for (int i = 0; i < 50; ++i) {
    auto p = slab_->Take(kPiece);
    ASSERT_TRUE(p.ok());
  }
  EXPECT_EQ(counts_.registrations, 66);
  EXPECT_EQ(slab_->runs(), 1u);
  slab_.reset();
  EXPECT_TRUE(counts_.mapped.empty());
  EXPECT_TRUE(counts_.registered.empty());
}

TEST_F(ChannelSlabTest, SizesRoundUpToPagesAndKeepRunsOfTheirOwn) {
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  auto small = slab_->Take(100);
  auto large = slab_->Take(6 * 64 * 1024);
  ASSERT_TRUE(small.ok() && large.ok());
  EXPECT_EQ(small->size(), page);
  EXPECT_EQ(large->size(), 6 * 64 * 1024u);
  EXPECT_EQ(slab_->runs(), 2u);
  EXPECT_EQ(slab_->Take(0).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ChannelSlabTest, LargePiecesComeInRunsOfAtMostAMebibyte) {
  std::vector<ChannelSlab::Piece> pieces = TakeMany(20, 384 << 10);
  ASSERT_EQ(pieces.size(), 20u);
  for (const auto& [addr, len] : counts_.registered) {
    EXPECT_LE(len, std::max(ChannelSlab::kMaxRunBytes, size_t(384 << 10)));
  }
}

TEST_F(ChannelSlabTest, ARunAboveTheMemlockLimitIsTriedAgainAsOnePiece) {
  counts_.limit = kPiece;  // room for one channel's piece per registration
  std::vector<ChannelSlab::Piece> pieces = TakeMany(5);
  ASSERT_EQ(pieces.size(), 5u);
  for (const auto& [addr, len] : counts_.registered) EXPECT_EQ(len, kPiece);
  counts_.broken = true;  // the limit reached: Take says why, nothing is left mapped
  auto refused = slab_->Take(kPiece);
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(counts_.mapped.size(), counts_.registered.size());
}

TEST_F(ChannelSlabTest, ConcurrentTakesAndReleasesBalance) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([this] {
      for (int round = 0; round < 50; ++round) {
        std::vector<ChannelSlab::Piece> pieces;
        for (int i = 0; i < 20; ++i) {
          auto p = slab_->Take(kPiece);
          ASSERT_TRUE(p.ok());
          p->data()[0] = uint8_t(i);
          pieces.push_back(std::move(p).value());
        }
        for (int i = 0; i < 20; ++i) ASSERT_EQ(pieces[i].data()[0], uint8_t(i));
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(slab_->pieces_out(), 0u);
  EXPECT_EQ(slab_->runs(), 1u);
  EXPECT_EQ(counts_.registrations - counts_.deregistrations, 1);
}

}  // namespace
}  // namespace rdmad::internal
