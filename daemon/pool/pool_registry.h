// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// PoolRegistry: the daemon's side of connection pooling (docs/channels.md,
// "Pooling"). A channel's queue pair lives in its application, so the
// daemon cannot hold warm channels itself: it tells each client library
// that follows the pool (the local API's WatchPool stream) which channels
// to keep established, and the library keeps them warm and reports back.
//
// A client's targets are the config's [[pool]] entries plus its own
// Prewarm(peer, service, n) calls; a Prewarm for the same (peer, service)
// replaces the config's count for that client (0 removes it). Every
// change (a Prewarm, a config reload) is pushed to the affected clients as
// their whole target list. Reports (warm, in use, last error) are kept per
// (client, peer, service) for `rdmactl pools`; a client's rows go when its
// stream ends.
//
// A pool client belongs to the uid that follows the pool (docs/security.md):
// Prewarm and Report from another uid are NOT_FOUND, as for an id nobody
// follows, and ListFor shows a caller its own uid's rows (an admin all).
//
// Thread safety: every method may be called from any thread. Sinks are
// called outside the registry's lock and must not block.

#ifndef RDMAD_DAEMON_POOL_POOL_REGISTRY_H_
#define RDMAD_DAEMON_POOL_POOL_REGISTRY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "daemon/clients/caller.h"
#include "daemon/config/config.h"
#include "rdmad/status.h"

namespace rdmad {

// Where a target comes from: a [[pool]] entry, or the client's Prewarm.
enum class PoolSource { kConfig, kApi };
// "config", "api": the local API's and rdmactl's words.
const char* PoolSourceName(PoolSource source);

struct PoolTargetSpec {
  std::string peer;
  std::string service;
  int channels = 0;
  PoolSource source = PoolSource::kConfig;
  friend bool operator==(const PoolTargetSpec&, const PoolTargetSpec&) = default;
};

// What a following client is told: its targets and how long channels
// beyond them may stay idle.
struct PoolTargets {
  uint64_t client_id = 0;
  std::vector<PoolTargetSpec> targets;
  int idle_timeout_s = 0;
};

// Where a client's targets go (its WatchPool stream).
class PoolSink {
 public:
  virtual ~PoolSink() = default;
  virtual void OnTargets(const PoolTargets& targets) = 0;
};

// One row of `rdmactl pools`.
struct PoolRow {
  uint64_t client_id = 0;
  int pid = 0;  // the client's process (0 unknown)
  uid_t uid = kNoUid;
  std::string peer;
  std::string service;
  int target = 0;
  PoolSource source = PoolSource::kConfig;
  int warm = 0;
  int in_use = 0;
  std::string last_error;
};

class PoolRegistry {
 public:
  static constexpr int kMaxChannelsPerTarget = 1024;
  // What all clients of one uid may ask for between them (their Prewarm
  // targets and channels): each target makes the libraries dial, so a
  // uid is bounded before anything is dialled.
  static constexpr size_t kMaxTargetsPerUid = 256;
  static constexpr int kMaxChannelsPerUid = 4096;

  PoolRegistry() = default;

  // Replaces the config's targets and idle timeout; every client is told.
  void SetConfig(const std::vector<PoolTarget>& targets, int idle_timeout_s);

  // A client starts following the pool: it is told its targets at once.
  // Returns its id (for Prewarm, Report and Unsubscribe).
  uint64_t Subscribe(std::shared_ptr<PoolSink> sink, Owner owner);
  void Unsubscribe(uint64_t client_id);

  // NOT_FOUND for a client not following (or another uid's);
  // INVALID_ARGUMENT for a bad peer or service name or channels outside
  // 0..kMaxChannelsPerTarget; RESOURCE_EXHAUSTED past the uid's quotas.
  Status Prewarm(const Caller& caller, uint64_t client_id, const std::string& peer,
                 const std::string& service, int channels);
  // The library's count for one of its targets. NOT_FOUND as Prewarm.
  Status Report(const Caller& caller, uint64_t client_id, const std::string& peer,
                const std::string& service, int warm, int in_use, const std::string& last_error);

  std::vector<PoolRow> List() const;
  std::vector<PoolRow> ListFor(const Caller& caller) const;
  size_t clients() const;

 private:
  using Key = std::pair<std::string, std::string>;  // peer, service
  struct Counts {
    int warm = 0;
    int in_use = 0;
    std::string last_error;
  };
  struct Client {
    std::shared_ptr<PoolSink> sink;
    Owner owner;
    std::map<Key, int> prewarm;  // the client's own targets
    std::map<Key, Counts> reports;
  };

  PoolTargets TargetsLocked(uint64_t id, const Client& client) const;  // mu_ held
  // OK when uid's clients may hold `channels` for key at client (mu_ held).
  Status CheckUidQuotaLocked(uid_t uid, uint64_t client_id, const Key& key, int channels) const;

  mutable std::mutex mu_;
  std::vector<PoolTarget> config_;      // guarded by mu_
  int idle_timeout_s_ = 0;              // guarded by mu_
  std::map<uint64_t, Client> clients_;  // guarded by mu_
  uint64_t next_id_ = 1;                // guarded by mu_
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_POOL_POOL_REGISTRY_H_
