// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The etcd client of cluster membership: a MembershipStore over etcd's v3
// gRPC API (proto/etcd/kv.proto). Calls go to one endpoint at a time and
// move on to the next when it is unreachable. Each call has its own
// deadline; a lease renewal is one short LeaseKeepAlive stream, and a watch
// is a Watch stream read by a thread of its own.
//
// Thread safety: every method may be called from any thread at once.

#ifndef RDMAD_DAEMON_RPC_ETCD_STORE_H_
#define RDMAD_DAEMON_RPC_ETCD_STORE_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "daemon/cluster/membership_store.h"
#include "rdmad/status.h"

namespace rdmad {

// Endpoints are HOST[:PORT], port 2379 when left out.
using EtcdOptions = StoreOptions;

// INVALID_ARGUMENT for no or a malformed endpoint; FAILED_PRECONDITION for
// TLS files that cannot be read. Does not contact etcd.
StatusOr<std::unique_ptr<MembershipStore>> NewEtcdStore(const EtcdOptions& options);
StatusOr<std::shared_ptr<MembershipStore>> MakeEtcdStore(const StoreOptions& options);

// The daemon's MembershipStoreFactory: MakeEtcdStore.
class EtcdStoreFactory final : public MembershipStoreFactory {
 public:
  StatusOr<std::shared_ptr<MembershipStore>> Make(const StoreOptions& options) const override {
    return MakeEtcdStore(options);
  }
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_RPC_ETCD_STORE_H_
