// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/rdma/channel_slab.h"

#include <infiniband/verbs.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "client/src/client_log.h"

namespace rdmad::internal {

// One mapping of `pieces` pieces of `piece` bytes, registered once; free_
// holds the pieces not taken.
class ChannelSlab::Run {
 public:
  Run(uint8_t* base, size_t piece, uint32_t pieces, SlabMemory::Registration registration)
      : base_(base), piece_(piece), pieces_(pieces), registration_(registration) {
    for (uint32_t i = pieces; i > 0; --i) free_.push_back(base + size_t(i - 1) * piece);
  }
  uint8_t* base() const { return base_; }
  size_t bytes() const { return piece_ * pieces_; }
  uint32_t pieces() const { return pieces_; }
  const SlabMemory::Registration& registration() const { return registration_; }
  bool whole() const { return free_.size() == pieces_; }
  bool empty() const { return free_.empty(); }
  size_t free() const { return free_.size(); }
  uint8_t* Take() {
    uint8_t* p = free_.back();
    free_.pop_back();
    return p;
  }
  void Give(uint8_t* p) { free_.push_back(p); }

 private:
  uint8_t* const base_;
  const size_t piece_;
  const uint32_t pieces_;
  const SlabMemory::Registration registration_;
  std::vector<uint8_t*> free_;
};

ChannelSlab::Piece& ChannelSlab::Piece::operator=(Piece&& other) noexcept {
  if (this != &other) {
    Release();
    std::swap(slab_, other.slab_);
    std::swap(run_, other.run_);
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
  }
  return *this;
}

void ChannelSlab::Piece::Release() {
  if (slab_ != nullptr) slab_->Give(run_, data_);
  slab_ = nullptr;
  run_ = nullptr;
  data_ = nullptr;
  size_ = 0;
}

const SlabMemory::Registration& ChannelSlab::Piece::run_registration() const {
  static const SlabMemory::Registration kNone;
  return run_ == nullptr ? kNone : run_->registration();
}

ChannelSlab::ChannelSlab(std::unique_ptr<SlabMemory> memory, std::string device)
    : memory_(std::move(memory)), device_(std::move(device)) {}

ChannelSlab::~ChannelSlab() {
  std::lock_guard lock(mu_);
  for (auto& [size, cls] : classes_) {
    while (!cls.runs.empty()) {
      if (!cls.runs.back()->whole()) {
        ClientLog().error("RDMA {}: channel slab destroyed with pieces still out", device_);
      }
      Drop(cls, cls.runs.back().get());
    }
  }
}

StatusOr<ChannelSlab::Piece> ChannelSlab::Take(size_t bytes) {
  if (bytes == 0) return Status::InvalidArgument("ChannelSlab::Take: 0 bytes");
  static const size_t page = size_t(sysconf(_SC_PAGESIZE));
  size_t piece = (bytes + page - 1) / page * page;
  std::lock_guard lock(mu_);
  SizeClass& cls = classes_[piece];
  Run* run = nullptr;
  for (auto& r : cls.runs) {
    if (!r->empty()) {
      run = r.get();
      break;
    }
  }
  if (run == nullptr) {
    uint32_t cap = std::clamp<uint32_t>(uint32_t(kMaxRunBytes / piece), 1, kMaxRunPieces);
    uint32_t pieces = std::min(cls.next_pieces, cap);
    auto added = AddRun(cls, piece, pieces);
    if (!added.ok() && pieces > 1) added = AddRun(cls, piece, 1);  // memlock: one is enough
    if (!added.ok()) return added.status();
    run = *added;
    cls.next_pieces = std::min(pieces * 2, cap);
  }
  Piece p;
  p.slab_ = this;
  p.run_ = run;
  p.data_ = run->Take();
  p.size_ = piece;
  return p;
}

StatusOr<ChannelSlab::Run*> ChannelSlab::AddRun(SizeClass& cls, size_t piece, uint32_t pieces) {
  size_t bytes = piece * pieces;
  auto mem = memory_->Map(bytes);
  if (!mem.ok()) return mem.status();
  auto reg = memory_->Register(*mem, bytes);
  if (!reg.ok()) {
    memory_->Unmap(*mem, bytes);
    return reg.status();
  }
  cls.runs.push_back(std::make_unique<Run>(*mem, piece, pieces, *reg));
  ClientLog().debug("RDMA {}: channel slab: a run of {} x {} KiB registered", device_, pieces,
                    piece >> 10);
  return cls.runs.back().get();
}

void ChannelSlab::Give(Run* run, uint8_t* data) {
  std::lock_guard lock(mu_);
  run->Give(data);
  if (!run->whole()) return;
  SizeClass& cls = classes_[run->bytes() / run->pieces()];
  // Keep one whole free run per size for the next connect; a second goes.
  for (auto& r : cls.runs) {
    if (r.get() != run && r->whole()) {
      Drop(cls, run);
      return;
    }
  }
}

void ChannelSlab::Drop(SizeClass& cls, Run* run) {
  memory_->Deregister(run->registration());
  memory_->Unmap(run->base(), run->bytes());
  cls.runs.erase(std::find_if(cls.runs.begin(), cls.runs.end(),
                              [&](const std::unique_ptr<Run>& r) { return r.get() == run; }));
}

size_t ChannelSlab::runs() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [size, cls] : classes_) n += cls.runs.size();
  return n;
}

size_t ChannelSlab::pieces_out() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [size, cls] : classes_) {
    for (const auto& r : cls.runs) n += r->pieces() - r->free();
  }
  return n;
}

size_t ChannelSlab::registered_bytes() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [size, cls] : classes_) {
    for (const auto& r : cls.runs) n += r->bytes();
  }
  return n;
}

namespace {

class VerbsMemory final : public SlabMemory {
 public:
  VerbsMemory(ibv_pd* pd, std::string device) : pd_(pd), device_(std::move(device)) {}
  StatusOr<uint8_t*> Map(size_t len) override {
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return Status::FromErrno(errno, "mmap " + std::to_string(len) + " bytes");
    return static_cast<uint8_t*>(p);
  }
  void Unmap(uint8_t* addr, size_t len) override { munmap(addr, len); }
  StatusOr<Registration> Register(uint8_t* addr, size_t len) override {
    ibv_mr* mr = ibv_reg_mr(pd_, addr, len, IBV_ACCESS_LOCAL_WRITE);
    if (mr == nullptr) {
      int err = errno;
      std::string msg = "ibv_reg_mr of " + std::to_string(len) + " bytes on " + device_ +
                        " failed: " + std::strerror(err);
      if (err == ENOMEM || err == EFAULT) {
        return Status::ResourceExhausted(msg + " (locked memory limit? see ulimit -l)");
      }
      if (err == EINVAL) return Status::InvalidArgument(msg);
      return Status::Unavailable(msg);
    }
    return Registration{mr, mr->lkey, mr->rkey};
  }
  void Deregister(const Registration& registration) override {
    if (int rc = ibv_dereg_mr(static_cast<ibv_mr*>(registration.handle)); rc != 0) {
      ClientLog().warn("RDMA {}: channel slab: ibv_dereg_mr: {}", device_, std::strerror(rc));
    }
  }

 private:
  ibv_pd* const pd_;
  const std::string device_;
};

}  // namespace

std::unique_ptr<SlabMemory> VerbsSlabMemory(ibv_pd* pd, const std::string& device) {
  return std::make_unique<VerbsMemory>(pd, device);
}

}  // namespace rdmad::internal
