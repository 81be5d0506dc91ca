// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ReserveThreadHeap: makes room in the calling thread's malloc arena
// before a burst of small allocations that stay (a batch of channels).
//
// glibc grows the arena of a thread other than the main one by just what
// each allocation lacks, one mprotect(2) of a page or two at a time (the
// main arena's brk grows by M_TOP_PAD ahead; a thread's arena has no such
// pad). A batch of 64 channels (about 6.5 KiB of heap each) cost about 80
// such calls, each splitting and merging the heap's mappings: in the lab's
// 1,000-channel ConnectMany row about 3 % of the one vCPU, and the row ran
// 4 % faster with every thread on the main arena (MALLOC_ARENA_MAX=1).
//
// ReserveThreadHeap allocates `bytes` in a few blocks below the mmap
// threshold and frees them: the arena grows in a few steps, and glibc
// keeps what it made writable (trimming only gives the pages back with
// MADV_DONTNEED), so the batch's allocations after it find writable room
// and make no system call. Memory in use does not change: freed room that
// is not taken again is released as glibc trims any free top. (Under
// strict overcommit, vm.overcommit_memory = 2, glibc's trim makes the room
// inaccessible again: the reserve then costs its few calls and saves none.)
//
// Less than one block (96 KiB: a single channel), on the main thread, and
// elsewhere than glibc it does nothing. Thread safety: any thread; it
// acts on the caller's own arena.

#ifndef RDMAD_CLIENT_SRC_HEAP_RESERVE_H_
#define RDMAD_CLIENT_SRC_HEAP_RESERVE_H_

#include <cstddef>

namespace rdmad::internal {

// Heap the client library keeps per open channel, about (the 1,000-channel
// row's applications: 6.5 KiB), rounded up.
inline constexpr size_t kHeapPerChannel = 8 << 10;

void ReserveThreadHeap(size_t bytes);

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_HEAP_RESERVE_H_
