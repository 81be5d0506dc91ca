// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ChannelSlab: the first receive slots and staging chunks of this process's
// channels on one device (resources.h), carved from shared registrations.
// A channel's first 24 KiB used to be a mapping and a registration of its
// own: an mmap and an ibv_reg_mr (pinning, the device's page table) per
// channel, and their undoing at close, which is most of what opening
// hundreds of channels with ConnectMany asked of the kernel besides the
// queues themselves. The slab registers runs of equal pieces instead: a
// size's first run holds one piece, each later run twice as many as the
// one before (at most kMaxRunPieces, and one piece once a run would pass
// kMaxRunBytes), so a process with one channel pins what it pinned before
// and one with a thousand registers about seventy times.
//
// A piece given back is the next channel's. A run given back whole is
// unregistered and unmapped, unless it is the only whole free run of its
// size: that one stays for the next connect, so a connect/close loop does
// not register each time (at most kMaxRunPieces pieces stay pinned after
// the last channel closed). A run that cannot be registered (RLIMIT_MEMLOCK)
// is tried again as a single piece before Take fails. Pieces are local
// access only and keep the bytes of the channel before, which was this
// process's too.
//
// Thread safety: all methods may be called from any thread. A Piece must
// be given back (destroyed) before its slab.

#ifndef RDMAD_CLIENT_SRC_RDMA_CHANNEL_SLAB_H_
#define RDMAD_CLIENT_SRC_RDMA_CHANNEL_SLAB_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "rdmad/status.h"

struct ibv_pd;

namespace rdmad::internal {

// How the slab's runs are mapped and registered: the device's protection
// domain (RdmaDevice), a fake in unit tests.
class SlabMemory {
 public:
  struct Registration {
    void* handle = nullptr;  // what Deregister takes
    uint32_t lkey = 0, rkey = 0;
  };
  virtual ~SlabMemory() = default;
  // len bytes of page-aligned zeroed memory, or an error.
  virtual StatusOr<uint8_t*> Map(size_t len) = 0;
  virtual void Unmap(uint8_t* addr, size_t len) = 0;
  // Registers [addr, addr + len) for local access.
  virtual StatusOr<Registration> Register(uint8_t* addr, size_t len) = 0;
  virtual void Deregister(const Registration& registration) = 0;
};

class ChannelSlab {
 public:
  static constexpr uint32_t kMaxRunPieces = 16;
  static constexpr size_t kMaxRunBytes = size_t(1) << 20;

  class Run;
  // One channel's piece: size() bytes at data(), registered as lkey().
  // Given back on destruction.
  class Piece {
   public:
    Piece() = default;
    Piece(Piece&& other) noexcept { *this = std::move(other); }
    Piece& operator=(Piece&& other) noexcept;
    ~Piece() { Release(); }
    uint8_t* data() const { return data_; }
    size_t size() const { return size_; }
    uint32_t lkey() const { return run_registration().lkey; }
    uint32_t rkey() const { return run_registration().rkey; }  // local access only: for logs
    explicit operator bool() const { return data_ != nullptr; }
    void Release();  // gives it back now

   private:
    friend class ChannelSlab;
    const SlabMemory::Registration& run_registration() const;
    ChannelSlab* slab_ = nullptr;
    Run* run_ = nullptr;
    uint8_t* data_ = nullptr;
    size_t size_ = 0;
  };

  // device: names the device in log lines.
  ChannelSlab(std::unique_ptr<SlabMemory> memory, std::string device);
  ~ChannelSlab();  // unregisters every run; every Piece must be back
  ChannelSlab(const ChannelSlab&) = delete;
  ChannelSlab& operator=(const ChannelSlab&) = delete;

  // A piece of `bytes` (rounded up to whole pages), or why none can be had.
  StatusOr<Piece> Take(size_t bytes);

  // For tests and the debug log: runs registered, and pieces out.
  size_t runs() const;
  size_t pieces_out() const;
  size_t registered_bytes() const;

 private:
  struct SizeClass {
    std::vector<std::unique_ptr<Run>> runs;
    uint32_t next_pieces = 1;  // the next run's
  };
  StatusOr<Run*> AddRun(SizeClass& cls, size_t piece, uint32_t pieces);  // mu_ held
  void Give(Run* run, uint8_t* data);
  void Drop(SizeClass& cls, Run* run);  // mu_ held: unregisters and unmaps

  const std::unique_ptr<SlabMemory> memory_;
  const std::string device_;
  mutable std::mutex mu_;
  std::map<size_t, SizeClass> classes_;  // by piece size
};

// SlabMemory on device's protection domain: anonymous mappings, ibv_reg_mr
// with local write access.
std::unique_ptr<SlabMemory> VerbsSlabMemory(ibv_pd* pd, const std::string& device);

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_RDMA_CHANNEL_SLAB_H_
