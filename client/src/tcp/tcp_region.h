// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Memory regions of the TCP channel. RDMA lets the peer's NIC reach a
// registered region; over TCP the peer asks this process's channel I/O
// thread, which looks the region up here. A region is known by a
// process-unique id (RegionDescriptor::address) and guarded by a random
// 32-bit key (RegionDescriptor::rkey) that every access must present.
//
// RegionRegistry is the process-wide table. Copies run under a shared
// lock and Remove takes it exclusively, so once Remove (the MemoryRegion's
// destructor) returns, no channel touches the memory again. A region of
// MemoryAccess::kLocal is not reachable by its own id and key; Expose adds
// an entry of its own (id and key) for its memory that only one channel
// serves, gone with Revoke, the channel (RemoveChannel) or the region.
// Accesses name the channel that serves them (a process-unique tag).
//
// Thread safety: RegionRegistry is thread-safe; TcpMemoryRegion is
// immutable after creation.

#ifndef RDMAD_CLIENT_SRC_TCP_TCP_REGION_H_
#define RDMAD_CLIENT_SRC_TCP_TCP_REGION_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <unordered_map>

#include "rdmad/channel.h"
#include "rdmad/status.h"

namespace rdmad::internal {

class RegionRegistry {
 public:
  // The process-wide registry (never destroyed).
  static RegionRegistry& Global();

  // Registers [data, data+len): a fresh id and a random key. A region of
  // MemoryAccess::kRemoteRead refuses CopyIn (PERMISSION_DENIED).
  RegionDescriptor Add(uint8_t* data, size_t len, MemoryAccess access);
  // Unregisters id and its exposures, waiting for copies in progress.
  void Remove(uint64_t id);
  // Region id (its own descriptor's) shown to channel alone.
  StatusOr<RegionDescriptor> Expose(uint64_t id, uint64_t channel, bool writable);
  // Ends channel's exposure `exposed`; NOT_FOUND if it has none such.
  Status Revoke(const RegionDescriptor& exposed, uint64_t channel);
  // Ends every exposure of channel (it ended).
  void RemoveChannel(uint64_t channel);

  // OK when id is reachable by channel, key is its key and
  // [offset, offset+len) lies within it; else NOT_FOUND, PERMISSION_DENIED
  // or OUT_OF_RANGE.
  Status Check(uint64_t channel, uint64_t id, uint32_t key, uint64_t offset, uint64_t len) const;
  // Check, then copy len bytes into / out of the region at offset.
  Status CopyIn(uint64_t channel, uint64_t id, uint32_t key, uint64_t offset, const void* src,
                size_t len);
  Status CopyOut(uint64_t channel, uint64_t id, uint32_t key, uint64_t offset, void* dst,
                 size_t len) const;

 private:
  struct Entry {
    uint8_t* data = nullptr;
    size_t len = 0;
    uint32_t key = 0;
    bool writable = true;
    bool remote = true;    // false: kLocal, reachable only through exposures
    uint64_t channel = 0;  // an exposure: the one channel that serves it
    uint64_t base = 0;     // an exposure: the region's id
  };

  // Requires mu_ held (shared or exclusive).
  StatusOr<uint8_t*> Locate(uint64_t channel, uint64_t id, uint32_t key, uint64_t offset,
                            uint64_t len) const;

  mutable std::shared_mutex mu_;
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, Entry> regions_;
};

// A host-memory region registered in the global registry for its lifetime.
class TcpMemoryRegion final : public MemoryRegion {
 public:
  TcpMemoryRegion(uint8_t* data, size_t len, MemoryAccess access);
  ~TcpMemoryRegion() override;
  TcpMemoryRegion(const TcpMemoryRegion&) = delete;
  TcpMemoryRegion& operator=(const TcpMemoryRegion&) = delete;

  uint8_t* data() const override { return data_; }
  size_t size() const override { return len_; }
  RegionDescriptor descriptor() const override { return descriptor_; }
  MemoryAccess access() const override { return access_; }

 private:
  uint8_t* data_;
  size_t len_;
  MemoryAccess access_;
  RegionDescriptor descriptor_;
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_TCP_TCP_REGION_H_
