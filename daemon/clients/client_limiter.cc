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
  }
  return *this;
}

void ClientLimiter::Lease::Reset() {
  if (ClientLimiter* limiter = std::exchange(limiter_, nullptr)) limiter->Release(client_);
}

StatusOr<ClientLimiter::Lease> ClientLimiter::Acquire(const std::string& client,
                                                      size_t per_client_max, size_t total_max) {
  std::lock_guard lock(mu_);
  auto it = held_.find(client);
  size_t mine = it == held_.end() ? 0 : it->second;
  if (per_client_max > 0 && mine >= per_client_max) {
    return Refuse(fmt::format("client {} has {} {}, its limit ({} = {})", client, mine, names_.what,
                              names_.per_client_key, per_client_max));
  }
  if (total_max > 0 && total_ >= total_max) {
    return Refuse(fmt::format("rdmad has {} {} from all clients, its limit ({} = {})", total_,
                              names_.what, names_.total_key, total_max));
  }
  ++held_[client];
  ++total_;
  return Lease(this, client);
}

Status ClientLimiter::Refuse(std::string message) {
  ++refused_;
  if (std::has_single_bit(refused_)) {
    spdlog::warn("local API: refused: {} ({} refused so far)", message, refused_);
  }
  return Status::ResourceExhausted(std::move(message));
}

void ClientLimiter::Release(const std::string& client) {
  std::lock_guard lock(mu_);
  auto it = held_.find(client);
  if (it == held_.end()) return;  // cannot happen: a Lease is made with a unit
  if (--it->second == 0) held_.erase(it);
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
