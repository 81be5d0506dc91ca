// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/rdma/mr_cache.h"

#include <utility>

namespace rdmad::internal {

StatusOr<std::shared_ptr<SharedMr>> MrCache::Get(uintptr_t addr, size_t len, unsigned access,
                                                 const Register& reg, Release release) {
  Key key{addr, len, access};
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    if (auto live = it->second.lock()) return live;
  }
  // Registering under the lock keeps two threads from registering the same
  // range at once; registrations of other ranges wait that long too.
  auto mr = reg();
  if (!mr.ok()) return mr.status();
  // The entry is forgotten before the MR is released: the releaser may hold
  // the last reference to the device that owns this cache.
  auto shared =
      std::shared_ptr<SharedMr>(new SharedMr(*mr, std::move(release)), [this, key](SharedMr* gone) {
        Forget(key);
        delete gone;
      });
  entries_[key] = shared;
  return shared;
}

void MrCache::Forget(const Key& key) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  // A new registration of the range may already have taken the entry.
  if (it != entries_.end() && it->second.expired()) entries_.erase(it);
}

size_t MrCache::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

}  // namespace rdmad::internal
