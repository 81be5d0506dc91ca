// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Memory for the two ends of an echo REGION (common/echo_protocol.h): the
// daemon's echo service registers it for the client's Writes and Reads,
// rdmactl bench for its side of them. Anonymous, page-aligned (as
// perftest's buffers: an op of a page lies in one page) and zero-filled;
// unmapped when destroyed.
//
// Thread safety: the mapping is owned by one object; its bytes are the
// caller's to share.

#ifndef RDMAD_COMMON_ECHO_REGION_H_
#define RDMAD_COMMON_ECHO_REGION_H_

#include <cstddef>
#include <memory>

#include "rdmad/status.h"

namespace rdmad::echo {

class RegionMemory {
 public:
  // size bytes, or RESOURCE_EXHAUSTED ("mapping N bytes: <why>").
  static StatusOr<std::unique_ptr<RegionMemory>> Map(size_t size);
  ~RegionMemory();
  RegionMemory(const RegionMemory&) = delete;
  RegionMemory& operator=(const RegionMemory&) = delete;

  void* data() const { return addr_; }
  size_t size() const { return size_; }

 private:
  RegionMemory(void* addr, size_t size) : addr_(addr), size_(size) {}
  void* addr_;
  size_t size_;
};

}  // namespace rdmad::echo

#endif  // RDMAD_COMMON_ECHO_REGION_H_
