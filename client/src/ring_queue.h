// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RingQueue<T>: a FIFO in one power-of-two array that grows by doubling,
// for a channel's queues that are empty most of their lives. It allocates
// nothing until the first push: libstdc++'s std::deque allocates its map
// and a 512-byte block when it is constructed, and an RDMA channel kept
// seven of them (4 KiB of heap per channel before it carried a message).
// push_back and pop_front are amortized O(1) and move no element once the
// array is large enough; erase moves the elements after the one erased.
// Storage is kept after clear and pop_front (a popped slot is reset to
// T{}, so it holds no resource), and given back on destruction.
//
// T must be default-constructible and move-assignable.
//
// Thread safety: none; a value type, guarded by its owner.

#ifndef RDMAD_CLIENT_SRC_RING_QUEUE_H_
#define RDMAD_CLIENT_SRC_RING_QUEUE_H_

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <utility>
#include <vector>

namespace rdmad::internal {

template <typename T>
class RingQueue {
  template <typename Q, typename V>
  class Iter {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = V*;
    using reference = V&;

    Iter() = default;
    Iter(Q* q, size_t i) : q_(q), i_(i) {}
    reference operator*() const { return (*q_)[i_]; }
    pointer operator->() const { return &(*q_)[i_]; }
    Iter& operator++() {
      ++i_;
      return *this;
    }
    Iter operator++(int) {
      Iter before = *this;
      ++i_;
      return before;
    }
    friend bool operator==(const Iter& a, const Iter& b) { return a.i_ == b.i_ && a.q_ == b.q_; }

   private:
    friend class RingQueue;
    Q* q_ = nullptr;
    size_t i_ = 0;
  };

 public:
  using iterator = Iter<RingQueue, T>;
  using const_iterator = Iter<const RingQueue, const T>;

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  // Preconditions: i < size() (operator[]), !empty() (front, back, pop_front).
  T& operator[](size_t i) { return buf_[(head_ + i) & (buf_.size() - 1)]; }
  const T& operator[](size_t i) const { return buf_[(head_ + i) & (buf_.size() - 1)]; }
  T& front() { return buf_[head_]; }
  const T& front() const { return buf_[head_]; }
  T& back() { return (*this)[size_ - 1]; }
  const T& back() const { return (*this)[size_ - 1]; }

  void push_back(T value) { emplace_back(std::move(value)); }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == buf_.size()) Grow();
    T& slot = buf_[(head_ + size_) & (buf_.size() - 1)];
    slot = T(std::forward<Args>(args)...);
    ++size_;
    return slot;
  }
  void pop_front() {
    buf_[head_] = T();
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
  }
  void clear() {
    while (!empty()) pop_front();
    head_ = 0;
  }
  // Removes *at; returns the iterator to the element after it.
  iterator erase(iterator at) {
    for (size_t i = at.i_; i + 1 < size_; ++i) (*this)[i] = std::move((*this)[i + 1]);
    back() = T();
    --size_;
    return at;
  }

  iterator begin() { return {this, 0}; }
  iterator end() { return {this, size_}; }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

 private:
  static constexpr size_t kFirstCapacity = 4;

  void Grow() {
    std::vector<T> bigger(std::max(kFirstCapacity, buf_.size() * 2));
    for (size_t i = 0; i < size_; ++i) bigger[i] = std::move((*this)[i]);
    buf_.swap(bigger);
    head_ = 0;
  }

  std::vector<T> buf_;  // a power of two long, or empty
  size_t head_ = 0;     // index of the front in buf_
  size_t size_ = 0;
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_RING_QUEUE_H_
