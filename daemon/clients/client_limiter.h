// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ClientLimiter counts what each local client (one process, named e.g.
// "pid 1234") and each uid ("uid 1000") hold of one resource of the local
// API - Connect handshakes in flight, open streams - and refuses one more
// beyond a per-client, a per-uid or a total bound with RESOURCE_EXHAUSTED
// naming the limit key and the numbers.
// It never queues: the caller answers the refusal at once. A grant is a
// Lease; destroying it gives the unit back. The bounds come with each
// Acquire (0: none), so a config reload applies to the next call and units
// already held stay. Refusals are logged as a warning, with the count so
// far, on the 1st, 2nd, 4th, 8th ... of them, so a flood cannot flood the
// log.
//
// Thread safety: every method may be called from any thread. A Lease may
// be destroyed on any thread; it must not outlive its limiter.

#ifndef RDMAD_DAEMON_CLIENTS_CLIENT_LIMITER_H_
#define RDMAD_DAEMON_CLIENTS_CLIENT_LIMITER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "daemon/clients/quota_refusals.h"
#include "rdmad/status.h"

namespace rdmad {

// The local API's per-client bounds (limits.*); 0: no bound.
struct ClientLimits {
  size_t max_connects_per_client = 0;  // Connect handshakes in flight, one client
  size_t max_connects = 0;             // ... all clients together
  size_t max_streams_per_client = 0;   // open server streams, one client
  size_t max_streams_per_uid = 0;      // ... all clients of one uid
};

class ClientLimiter {
 public:
  // How refusals name the resource and its limits.
  struct Names {
    std::string what;            // "Connect handshakes in flight"
    std::string per_client_key;  // "limits.max_connects_per_client"
    std::string total_key;       // "limits.max_connects"
    std::string per_uid_key;     // "limits.max_streams_per_uid"
  };

  // One unit held by a client; given back on destruction. Movable.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept { *this = std::move(other); }
    Lease& operator=(Lease&& other) noexcept;
    ~Lease() { Reset(); }
    void Reset();  // gives the unit back now
    bool held() const { return limiter_ != nullptr; }

   private:
    friend class ClientLimiter;
    Lease(ClientLimiter* limiter, std::string client, std::string uid)
        : limiter_(limiter), client_(std::move(client)), uid_(std::move(uid)) {}
    ClientLimiter* limiter_ = nullptr;
    std::string client_;
    std::string uid_;  // "" when not counted by uid
  };

  // refusals (may be null; outlives this) counts each refusal by its key.
  explicit ClientLimiter(Names names, QuotaRefusals* refusals = nullptr)
      : names_(std::move(names)), refusals_(refusals) {}
  ClientLimiter(const ClientLimiter&) = delete;
  ClientLimiter& operator=(const ClientLimiter&) = delete;

  // One more unit for client, or RESOURCE_EXHAUSTED when client already
  // holds per_client_max or all clients together total_max (0: no bound).
  StatusOr<Lease> Acquire(const std::string& client, size_t per_client_max, size_t total_max);
  // The same, counted also for uid ("uid 1000"; "": not counted), which
  // may hold at most per_uid_max (0: no bound).
  StatusOr<Lease> Acquire(const std::string& client, const std::string& uid, size_t per_client_max,
                          size_t per_uid_max, size_t total_max);

  size_t held(const std::string& client) const;
  size_t total() const;
  uint64_t refused() const;

 private:
  void Release(const std::string& client, const std::string& uid);
  Status Refuse(const std::string& key, std::string message);  // mu_ held

  const Names names_;
  QuotaRefusals* const refusals_;
  mutable std::mutex mu_;
  std::map<std::string, size_t> held_;    // by client; guarded by mu_; no zero entries
  std::map<std::string, size_t> by_uid_;  // by uid; guarded by mu_; no zero entries
  size_t total_ = 0;                      // guarded by mu_
  uint64_t refused_ = 0;                  // guarded by mu_
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_CLIENTS_CLIENT_LIMITER_H_
