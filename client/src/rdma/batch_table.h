// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// BatchTable: the channel's batches in flight by id. Ids are handed out in
// order (1 .. 2^24 - 1, then 1 again: the 24 bits a work request's id
// carries for its batch), and batches mostly finish in that order, so the
// table is a window over the ids from the oldest batch still in it to the
// newest: a ring of slots that grows by doubling and is never shrunk. Add,
// Find and Erase take constant time and allocate nothing once the ring has
// grown to the channel's depth (a std::map allocated and freed a node per
// batch, ~650 instructions of every 4 KiB op at depth 128).
//
// Thread safety: none of its own; the channel's mutex guards every call.

#ifndef RDMAD_CLIENT_SRC_RDMA_BATCH_TABLE_H_
#define RDMAD_CLIENT_SRC_RDMA_BATCH_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace rdmad::internal {

template <typename T>  // T: a nullable handle (std::shared_ptr<Batch>)
class BatchTable {
 public:
  static constexpr uint32_t kIds = (1u << 24) - 1;  // ids 1 .. kIds

  // Stores `value` under the next id and returns the id. The window holds
  // at most kIds ids; a caller with that many batches in flight at once
  // is out of memory long before.
  uint32_t Add(T value) {
    if (count_ == slots_.size()) Grow();
    uint32_t id = IdAt(count_);
    slots_[Slot(count_)] = std::move(value);
    ++count_;
    ++live_;
    return id;
  }

  // The value under `id`, or nullptr when the id is not in the table.
  const T* Find(uint32_t id) const {
    size_t at = IndexOf(id);
    if (at >= count_) return nullptr;
    const T& v = slots_[Slot(at)];
    return v ? &v : nullptr;
  }

  // Forgets `id` (nothing when it is not in the table).
  void Erase(uint32_t id) {
    size_t at = IndexOf(id);
    if (at >= count_ || !slots_[Slot(at)]) return;
    slots_[Slot(at)] = T();
    --live_;
    // The oldest ids that are gone leave the window.
    while (count_ > 0 && !slots_[head_]) {
      head_ = (head_ + 1) & (slots_.size() - 1);
      base_ = base_ == kIds ? 1 : base_ + 1;
      --count_;
    }
  }

  // Calls fn(id, value) for every value, oldest first.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (size_t at = 0; at < count_; ++at) {
      const T& v = slots_[Slot(at)];
      if (v) fn(IdAt(at), v);
    }
  }

  // Forgets every value; the next id goes on from the last one.
  void Clear() {
    uint32_t next = IdAt(count_);
    for (size_t at = 0; at < count_; ++at) slots_[Slot(at)] = T();
    head_ = 0;
    count_ = 0;
    live_ = 0;
    base_ = next;
  }

  size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }

 private:
  size_t Slot(size_t at) const { return (head_ + at) & (slots_.size() - 1); }
  // at < kIds: one wrap at most.
  uint32_t IdAt(size_t at) const {
    uint64_t id = base_ + at;
    return uint32_t(id > kIds ? id - kIds : id);
  }
  // How far `id` lies after the window's first id (>= count_: outside).
  size_t IndexOf(uint32_t id) const {
    if (id == 0 || id > kIds) return SIZE_MAX;
    return id >= base_ ? id - base_ : id + kIds - base_;
  }
  void Grow() {
    std::vector<T> grown(slots_.empty() ? 16 : slots_.size() * 2);
    for (size_t at = 0; at < count_; ++at) grown[at] = std::move(slots_[Slot(at)]);
    slots_ = std::move(grown);
    head_ = 0;
  }

  std::vector<T> slots_;  // a power of two long; [head_, head_ + count_) the window
  size_t head_ = 0;
  size_t count_ = 0;   // ids in the window, erased ones inside it included
  size_t live_ = 0;    // values in the window
  uint32_t base_ = 1;  // the window's first id
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_RDMA_BATCH_TABLE_H_
