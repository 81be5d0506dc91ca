// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/clients/client_limiter.h"

#include <bit>

#include "spdlog/spdlog.h"

namespace rdmad {

ClientLimiter::Lease& ClientLimiter::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Reset();
    limiter_ = std::exchange(other.limiter_, nullptr);
    client_ = std::move(other.client_);
    uid_ = std::move(other.uid_);
  }
  return *this;
}

void ClientLimiter::Lease::Reset() {
  if (ClientLimiter* limiter = std::exchange(limiter_, nullptr)) limiter->Release(client_, uid_);
}

StatusOr<ClientLimiter::Lease> ClientLimiter::Acquire(const std::string& client,
                                                      size_t per_client_max, size_t total_max) {
  return Acquire(client, "", per_client_max, 0, total_max);
}

StatusOr<ClientLimiter::Lease> ClientLimiter::Acquire(const std::string& client,
                                                      const std::string& uid, size_t per_client_max,
                                                      size_t per_uid_max, size_t total_max) {
  std::lock_guard lock(mu_);
  auto it = held_.find(client);
  size_t mine = it == held_.end() ? 0 : it->second;
  if (per_client_max > 0 && mine >= per_client_max) {
    return Refuse(names_.per_client_key,
                  fmt::format("client {} has {} {}, its limit ({} = {})", client, mine, names_.what,
                              names_.per_client_key, per_client_max));
  }
  auto by_uid = uid.empty() ? by_uid_.end() : by_uid_.find(uid);
  size_t ours = by_uid == by_uid_.end() ? 0 : by_uid->second;
  if (!uid.empty() && per_uid_max > 0 && ours >= per_uid_max) {
    return Refuse(names_.per_uid_key, fmt::format("{} has {} {}, its limit ({} = {})", uid, ours,
                                                  names_.what, names_.per_uid_key, per_uid_max));
  }
  if (total_max > 0 && total_ >= total_max) {
    return Refuse(names_.total_key,
                  fmt::format("rdmad has {} {} from all clients, its limit ({} = {})", total_,
                              names_.what, names_.total_key, total_max));
  }
  ++held_[client];
  if (!uid.empty()) ++by_uid_[uid];
  ++total_;
  return Lease(this, client, uid);
}

Status ClientLimiter::Refuse(const std::string& key, std::string message) {
  ++refused_;
  CountRefusal(refusals_, key);
  if (std::has_single_bit(refused_)) {
    spdlog::warn("local API: refused: {} ({} refused so far)", message, refused_);
  }
  return Status::ResourceExhausted(std::move(message));
}

void ClientLimiter::Release(const std::string& client, const std::string& uid) {
  std::lock_guard lock(mu_);
  auto it = held_.find(client);
  if (it == held_.end()) return;  // cannot happen: a Lease is made with a unit
  if (--it->second == 0) held_.erase(it);
  if (auto u = by_uid_.find(uid); u != by_uid_.end() && --u->second == 0) by_uid_.erase(u);
  --total_;
}

size_t ClientLimiter::held(const std::string& client) const {
  std::lock_guard lock(mu_);
  auto it = held_.find(client);
  return it == held_.end() ? 0 : it->second;
}

size_t ClientLimiter::total() const {
  std::lock_guard lock(mu_);
  return total_;
}

uint64_t ClientLimiter::refused() const {
  std::lock_guard lock(mu_);
  return refused_;
}

}  // namespace rdmad
