// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/rdma/batch_table.h"

#include <map>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace rdmad::internal {
namespace {

using Table = BatchTable<std::shared_ptr<int>>;

std::vector<std::pair<uint32_t, int>> Contents(const Table& t) {
  std::vector<std::pair<uint32_t, int>> out;
  t.ForEach([&](uint32_t id, const std::shared_ptr<int>& v) { out.emplace_back(id, *v); });
  return out;
}

TEST(BatchTableTest, IdsComeInOrderFromOne) {
  Table t;
  EXPECT_EQ(t.Add(std::make_shared<int>(10)), 1u);
  EXPECT_EQ(t.Add(std::make_shared<int>(20)), 2u);
  EXPECT_EQ(t.Add(std::make_shared<int>(30)), 3u);
  ASSERT_NE(t.Find(2), nullptr);
  EXPECT_EQ(**t.Find(2), 20);
  EXPECT_EQ(t.Find(0), nullptr);
  EXPECT_EQ(t.Find(4), nullptr) << "not handed out yet";
  EXPECT_EQ(t.Find(Table::kIds + 1), nullptr) << "more than 24 bits";
  EXPECT_EQ(t.size(), 3u);
}

TEST(BatchTableTest, OutOfOrderErasesKeepTheOthersAndFreeTheOldest) {
  Table t;
  for (int i = 1; i <= 5; ++i) t.Add(std::make_shared<int>(i));
  t.Erase(3);  // a hole inside the window
  EXPECT_EQ(t.Find(3), nullptr);
  EXPECT_EQ(Contents(t), (std::vector<std::pair<uint32_t, int>>{{1, 1}, {2, 2}, {4, 4}, {5, 5}}));
  t.Erase(3);  // again: nothing
  t.Erase(1);
  t.Erase(2);  // the window now starts at 4
  EXPECT_EQ(t.Find(1), nullptr) << "left the window";
  EXPECT_EQ(Contents(t), (std::vector<std::pair<uint32_t, int>>{{4, 4}, {5, 5}}));
  EXPECT_EQ(t.Add(std::make_shared<int>(6)), 6u);
  EXPECT_EQ(t.size(), 3u);
}

TEST(BatchTableTest, GrowsPastItsFirstRingWithTheWindowWrapped) {
  Table t;
  // Move the window's start into the ring, then fill past 16 slots.
  for (int i = 1; i <= 10; ++i) t.Add(std::make_shared<int>(i));
  for (uint32_t id = 1; id <= 9; ++id) t.Erase(id);
  for (int i = 11; i <= 100; ++i) t.Add(std::make_shared<int>(i));
  for (uint32_t id = 10; id <= 100; ++id) {
    ASSERT_NE(t.Find(id), nullptr) << id;
    EXPECT_EQ(**t.Find(id), int(id));
  }
  EXPECT_EQ(t.size(), 91u);
}

TEST(BatchTableTest, IdsWrapPastTwentyFourBitsAndSkipZero) {
  Table t;
  // Walk the ids up to the end of their range, a window of one.
  auto zero = std::make_shared<int>(0);
  for (uint32_t id = 1; id < Table::kIds - 1; ++id) {
    uint32_t got = t.Add(zero);
    ASSERT_EQ(got, id);
    t.Erase(got);
  }
  EXPECT_EQ(t.Add(std::make_shared<int>(1)), Table::kIds - 1);
  EXPECT_EQ(t.Add(std::make_shared<int>(2)), Table::kIds);
  EXPECT_EQ(t.Add(std::make_shared<int>(3)), 1u) << "0 is never an id";
  EXPECT_EQ(t.Add(std::make_shared<int>(4)), 2u);
  EXPECT_EQ(Contents(t), (std::vector<std::pair<uint32_t, int>>{
                             {Table::kIds - 1, 1}, {Table::kIds, 2}, {1, 3}, {2, 4}}));
  t.Erase(Table::kIds);
  ASSERT_NE(t.Find(1), nullptr);
  EXPECT_EQ(**t.Find(1), 3);
  EXPECT_EQ(t.Find(Table::kIds), nullptr);
}

TEST(BatchTableTest, ClearForgetsEverythingAndIdsGoOn) {
  Table t;
  for (int i = 1; i <= 20; ++i) t.Add(std::make_shared<int>(i));
  t.Erase(20);
  t.Clear();
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.Find(5), nullptr);
  EXPECT_EQ(t.Add(std::make_shared<int>(21)), 21u) << "an id of a failed batch is not reused";
}

TEST(BatchTableTest, AgreesWithAMapUnderRandomTraffic) {
  Table t;
  std::map<uint32_t, int> model;
  std::mt19937 rng(7);
  for (int step = 0; step < 20000; ++step) {
    if (model.size() < 300 && rng() % 2 == 0) {
      int v = step;
      uint32_t id = t.Add(std::make_shared<int>(v));
      model[id] = v;
    } else if (!model.empty()) {
      // Mostly the oldest (in-order completions), sometimes any.
      auto it = model.begin();
      if (rng() % 4 == 0) std::advance(it, rng() % model.size());
      t.Erase(it->first);
      model.erase(it);
    }
    ASSERT_EQ(t.size(), model.size());
  }
  std::vector<std::pair<uint32_t, int>> want(model.begin(), model.end());
  EXPECT_EQ(Contents(t), want);
}

}  // namespace
}  // namespace rdmad::internal
