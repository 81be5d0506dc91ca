// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/echo_region.h"

#include <sys/mman.h>

#include <cerrno>
#include <string>

namespace rdmad::echo {

StatusOr<std::unique_ptr<RegionMemory>> RegionMemory::Map(size_t size) {
  void* addr = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (addr == MAP_FAILED) {
    Status st = Status::FromErrno(errno, "mapping " + std::to_string(size) + " bytes");
    return Status::ResourceExhausted(st.message());
  }
  return std::unique_ptr<RegionMemory>(new RegionMemory(addr, size));
}

RegionMemory::~RegionMemory() { munmap(addr_, size_); }

}  // namespace rdmad::echo
