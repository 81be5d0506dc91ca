// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ClusterMembership: this daemon as a member of the cluster in a
// MembershipStore (etcd), and its view of the other members.
//
// Registration: its record under PREFIX members/NAME with a lease of ttl,
// renewed every ttl/3, put again when Update() changes it, a new lease
// when the old one expired (etcd lost it, or was away longer than ttl).
// Stop(withdraw) revokes the lease, which takes the record along.
//
// The view: a full read of the members, then a watch from the revision after
// it; every change calls the observer with the members (this one left out).
// When the store cannot be reached, the view stays as it was (the last known
// membership), health() says so, the log says so once, and both loops retry
// with backoff; once it answers again, a full read and a new watch
// resynchronise the view. Records that do not decode are skipped (logged
// once each).
//
// Thread safety: every public method may be called from any thread; the
// observer is called on the watch thread, without locks held.

#ifndef RDMAD_DAEMON_CLUSTER_CLUSTER_MEMBERSHIP_H_
#define RDMAD_DAEMON_CLUSTER_CLUSTER_MEMBERSHIP_H_

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "daemon/cluster/member_record.h"
#include "daemon/cluster/membership_store.h"
#include "rdmad/status.h"

namespace rdmad {

struct ClusterOptions {
  std::string prefix = "/rdmad/v1/";
  std::chrono::seconds ttl{10};
  std::string endpoints;  // for the log and health(): "HOST:PORT, ..."
  std::chrono::milliseconds max_backoff{5000};
};

struct ClusterHealth {
  bool enabled = false;
  bool reachable = false;
  std::string endpoints;
  std::string last_error;    // why the store was last unreachable
  double unreachable_s = 0;  // since when (0 when reachable)
  size_t members = 0;        // others in the view
  int64_t revision = 0;      // of the view
  bool registered = false;   // this daemon's record is in the store
};

// What the local API shows: this daemon, the others, and etcd's state.
struct ClusterView {
  ClusterHealth health;
  MemberRecord self;
  std::vector<MemberRecord> members;  // sorted by name
};

// Hears the other members, sorted by name, each time they change.
class MembersObserver {
 public:
  virtual ~MembersObserver() = default;
  virtual void OnMembers(const std::vector<MemberRecord>& members) = 0;
};

class ClusterMembership {
 public:
  // observer: not owned, outlives the membership (null: none).
  ClusterMembership(std::shared_ptr<MembershipStore> store, ClusterOptions options,
                    MembersObserver* observer);
  ~ClusterMembership();  // Stop(false)

  // Registers self and starts following the members.
  void Start(MemberRecord self);
  // self changed (devices, services): put again when it differs.
  void Update(MemberRecord self);
  // Stops both loops; withdraw: revoke the lease (a clean stop).
  void Stop(bool withdraw);

  std::vector<MemberRecord> Members() const;  // others, sorted by name
  MemberRecord self() const;
  ClusterHealth health() const;

 private:
  void LeaseLoop();
  void WatchLoop();
  // Waits up to d or until stopping; false when stopping.
  bool Sleep(std::chrono::milliseconds d);
  void Reachable();
  void Unreachable(const Status& why);
  // Replaces or changes the view; calls the observer when it changed.
  void ReplaceView(const StoreSnapshot& snapshot);
  void ApplyEvents(const std::vector<StoreEvent>& events);
  bool Decode(const std::string& key, const std::string& value, MemberRecord* out);
  void Publish();

  const std::shared_ptr<MembershipStore> store_;
  const ClusterOptions options_;
  MembersObserver* const observer_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;                             // guarded by mu_
  bool started_ = false;                              // guarded by mu_
  MemberRecord self_;                                 // guarded by mu_
  bool dirty_ = false;                                // self_ changed since put; guarded by mu_
  std::map<std::string, MemberRecord> view_;          // by key; guarded by mu_
  std::set<std::string> bad_keys_;                    // logged once; guarded by mu_
  int64_t revision_ = 0;                              // guarded by mu_
  bool reachable_ = false;                            // guarded by mu_
  bool registered_ = false;                           // guarded by mu_
  std::string last_error_;                            // guarded by mu_
  std::chrono::steady_clock::time_point down_since_;  // guarded by mu_
  bool said_down_ = false;             // logged since the last recovery; guarded by mu_
  int64_t lease_ = 0;                  // guarded by mu_
  std::shared_ptr<StoreWatch> watch_;  // the open watch, for Stop; guarded by mu_
  std::thread lease_thread_;
  std::thread watch_thread_;
};

}  // namespace rdmad

#endif  // RDMAD_DAEMON_CLUSTER_CLUSTER_MEMBERSHIP_H_
