// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// MrCache: the host-memory registrations of one device's protection
// domain, so that registering the same range with the same access twice -
// one KV cache exposed on a hundred channels - is one memory region (one
// ibv_mr, one rkey), shared and reference-counted. The entry of a range
// goes with its last user: a later registration of it registers anew.
//
// The registering and deregistering functions are parameters, which keeps
// the cache's bookkeeping testable without a device.
//
// Thread safety: all methods may be called from any thread; a SharedMr
// may be released from any thread.

#ifndef RDMAD_CLIENT_SRC_RDMA_MR_CACHE_H_
#define RDMAD_CLIENT_SRC_RDMA_MR_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "rdmad/status.h"

struct ibv_mr;

namespace rdmad::internal {

// One registration; `release` deregisters it when the last user goes.
class SharedMr {
 public:
  SharedMr(ibv_mr* mr, std::function<void(ibv_mr*)> release)
      : mr_(mr), release_(std::move(release)) {}
  ~SharedMr() { release_(mr_); }
  SharedMr(const SharedMr&) = delete;
  SharedMr& operator=(const SharedMr&) = delete;
  ibv_mr* get() const { return mr_; }

 private:
  ibv_mr* const mr_;
  const std::function<void(ibv_mr*)> release_;
};

class MrCache {
 public:
  using Register = std::function<StatusOr<ibv_mr*>()>;
  using Release = std::function<void(ibv_mr*)>;

  // The live registration of [addr, addr + len) with access flags `access`,
  // or a new one made by `reg` (its error is returned as it is). `release`
  // deregisters a new one when its last user lets go.
  StatusOr<std::shared_ptr<SharedMr>> Get(uintptr_t addr, size_t len, unsigned access,
                                          const Register& reg, Release release);

  // Ranges with a live registration (for tests and logs).
  size_t size() const;

 private:
  using Key = std::tuple<uintptr_t, size_t, unsigned>;
  void Forget(const Key& key);

  mutable std::mutex mu_;
  std::map<Key, std::weak_ptr<SharedMr>> entries_;
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_RDMA_MR_CACHE_H_
