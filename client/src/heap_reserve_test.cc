// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/heap_reserve.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace rdmad::internal {
namespace {

// The end of the writable mapping ("rw" in /proc/self/maps) that holds
// addr, or 0.
uintptr_t WritableEndOf(const void* addr) {
  const auto at = reinterpret_cast<uintptr_t>(addr);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long start = 0, end = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &start, &end, perms) != 3) continue;
    if (at >= start && at < end) return perms[0] == 'r' && perms[1] == 'w' ? end : 0;
  }
  return 0;
}

TEST(HeapReserveTest, AThreadsArenaIsWritableAheadOfTheAllocationsAfterIt) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "glibc's arenas only";
#endif
  constexpr size_t kReserve = 1 << 20;
  uintptr_t at = 0, before = 0, reserved = 0, filled = 0;
  std::thread thread([&] {
    void* first = std::malloc(64);  // the thread's arena
    at = reinterpret_cast<uintptr_t>(first);
    before = WritableEndOf(first);
    if (before - at >= kReserve) return;  // an arena used before, with room
    ReserveThreadHeap(kReserve);
    reserved = WritableEndOf(first);
    // What a batch of channels does after it: many small allocations
    // that stay, within the reserve.
    std::vector<void*> small;
    for (size_t used = 0; used + (128 << 10) < kReserve; used += 1024) {
      small.push_back(std::malloc(1000));
    }
    filled = WritableEndOf(first);
    for (void* p : small) std::free(p);
    std::free(first);
  });
  thread.join();
  ASSERT_NE(before, 0u) << "the thread's first allocation is not in a writable mapping";
  if (before - at >= kReserve) GTEST_SKIP() << "the thread reused an arena that had room";
  EXPECT_GE(reserved - at, kReserve - (96 << 10))
      << "the arena is writable " << (before - at) << " bytes ahead before the reserve, "
      << (reserved - at) << " after it";
  EXPECT_EQ(filled, reserved) << "the allocations after the reserve grew the arena";
}

}  // namespace
}  // namespace rdmad::internal
