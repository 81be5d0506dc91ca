// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// MembershipStore: what cluster membership needs of a key-value store with
// leases and watches (etcd's v3 API: daemon/rpc/etcd_store.cc implements
// it over gRPC). Keys and values are bytes; revisions are the store's,
// rising with every change.
//
// Errors: UNAVAILABLE (or DEADLINE_EXCEEDED) when the store cannot be
// reached, NOT_FOUND for a lease the store no longer has, OUT_OF_RANGE for
// a watch that starts below the store's compaction (read everything again).
//
// Thread safety: every method may be called from any thread at once; a
// StoreWatch is used by one thread, except Cancel (any thread).

#ifndef RDMAD_DAEMON_CLUSTER_MEMBERSHIP_STORE_H_
#define RDMAD_DAEMON_CLUSTER_MEMBERSHIP_STORE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "rdmad/status.h"

namespace rdmad {

struct StoreEntry {
  std::string key;
  std::string value;
  int64_t mod_revision = 0;
  int64_t lease = 0;
};

// Every key under a prefix, as of revision.
struct StoreSnapshot {
  std::vector<StoreEntry> entries;
  int64_t revision = 0;
};

struct StoreEvent {
  enum class Kind { kPut, kDelete };
  Kind kind = Kind::kPut;
  std::string key;
  std::string value;  // kPut only
  int64_t revision = 0;
};

// A watch on a prefix from a revision on.
class StoreWatch {
 public:
  virtual ~StoreWatch() = default;
  // The next events, in revision order (one revision's events together);
  // waits up to timeout (DEADLINE_EXCEEDED then, the watch going on).
  // CANCELLED after Cancel; other errors end the watch.
  virtual StatusOr<std::vector<StoreEvent>> Next(std::chrono::milliseconds timeout) = 0;
  // Ends the watch; a waiting Next returns CANCELLED.
  virtual void Cancel() = 0;
};

// Where the store is and how to talk to it (cluster.* settings).
struct StoreOptions {
  std::vector<std::string> endpoints;  // HOST[:PORT]
  std::string tls_ca;                  // PEM paths; "" : plain TCP
  std::string tls_cert;
  std::string tls_key;
  std::chrono::milliseconds call_timeout{3000};
};

class MembershipStore;
// Makes the store: rpc/ implements it with etcd's client (EtcdStoreFactory),
// the lifecycle calls it when cluster.endpoints is set.
class MembershipStoreFactory {
 public:
  virtual ~MembershipStoreFactory() = default;
  virtual StatusOr<std::shared_ptr<MembershipStore>> Make(const StoreOptions& options) const = 0;
};

class MembershipStore {
 public:
  virtual ~MembershipStore() = default;

  // A lease of ttl; returns its ID. Keys put with it go when it expires.
  virtual StatusOr<int64_t> GrantLease(std::chrono::seconds ttl) = 0;
  // Renews lease; returns the TTL it has now. NOT_FOUND once expired.
  virtual StatusOr<std::chrono::seconds> KeepAlive(int64_t lease) = 0;
  // Ends lease now, and the keys put with it.
  virtual Status RevokeLease(int64_t lease) = 0;

  // key = value, with lease (0: none); returns the revision.
  virtual StatusOr<int64_t> Put(const std::string& key, const std::string& value,
                                int64_t lease) = 0;
  virtual Status Delete(const std::string& key) = 0;
  // Every key that starts with prefix.
  virtual StatusOr<StoreSnapshot> List(const std::string& prefix) = 0;
  // Changes under prefix from revision (inclusive) on; the watch is set
  // up when this returns.
  virtual StatusOr<std::unique_ptr<StoreWatch>> Watch(const std::string& prefix,
                                                      int64_t from_revision) = 0;
};

// The end of the range of keys that start with prefix (etcd's range_end):
// prefix with its last byte below 0xff raised by one, trailing 0xff bytes
// dropped; "\0" (every key) when prefix is all 0xff or empty.
std::string PrefixRangeEnd(const std::string& prefix);

}  // namespace rdmad

#endif  // RDMAD_DAEMON_CLUSTER_MEMBERSHIP_STORE_H_
