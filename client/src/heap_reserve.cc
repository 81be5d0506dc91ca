// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/heap_reserve.h"

#include <unistd.h>

#include <array>
#include <cstdlib>

namespace rdmad::internal {

void ReserveThreadHeap(size_t bytes) {
#if defined(__GLIBC__)
  // Below glibc's smallest mmap threshold (128 KiB), so the blocks come
  // from the arena, not from mappings of their own.
  constexpr size_t kBlock = 96 << 10;
  constexpr size_t kMaxBlocks = 16;
  // Less than a block (a single channel) saves a page or two at most; the
  // main thread's arena brk pads ahead by itself.
  if (bytes < kBlock || gettid() == getpid()) return;
  std::array<void*, kMaxBlocks> blocks{};
  size_t n = 0;
  for (size_t got = 0; got < bytes && n < kMaxBlocks; got += kBlock) {
    blocks[n] = std::malloc(kBlock);
    if (blocks[n] == nullptr) break;
    // Seen as used, so the compiler keeps the allocation.
    asm volatile("" : : "r"(blocks[n]) : "memory");
    ++n;
  }
  // In order: each joins the one before, the last joins them all to the
  // free top, and glibc trims it once.
  for (size_t i = 0; i < n; ++i) std::free(blocks[i]);
#else
  (void)bytes;
#endif
}

}  // namespace rdmad::internal
