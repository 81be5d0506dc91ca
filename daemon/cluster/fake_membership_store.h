// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// An in-memory MembershipStore for the unit tests of cluster membership:
// keys with revisions, leases that expire when the test says so, watches,
// and a switch that makes it unreachable (every call UNAVAILABLE, open
// watches ended). The real store is tested against a real etcd
// (tests/integration/etcd_store_test.cc).
//
// Thread safety: every method may be called from any thread.

#ifndef RDMAD_DAEMON_CLUSTER_FAKE_MEMBERSHIP_STORE_H_
#define RDMAD_DAEMON_CLUSTER_FAKE_MEMBERSHIP_STORE_H_

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "daemon/cluster/membership_store.h"

namespace rdmad {

class FakeMembershipStore final : public MembershipStore {
 public:
  // Every call fails with UNAVAILABLE while down; going down ends watches.
  void SetDown(bool down) {
    std::lock_guard lock(mu_);
    down_ = down;
    if (down) {
      for (Watcher* w : watchers_) w->ended = Status::Unavailable("fake etcd went away");
      cv_.notify_all();
    }
  }
  // Ends lease as if it expired: its keys go (with delete events).
  void Expire(int64_t lease) {
    std::lock_guard lock(mu_);
    leases_.erase(lease);
    DropLeaseKeys(lease);
  }
  // Writes key directly (a record from elsewhere, or garbage).
  void Set(const std::string& key, const std::string& value) {
    std::lock_guard lock(mu_);
    Write(key, value, 0);
  }
  int revokes() const {  // RevokeLease calls
    std::lock_guard lock(mu_);
    return revokes_;
  }
  std::set<int64_t> leases() const {
    std::lock_guard lock(mu_);
    return leases_;
  }

  StatusOr<int64_t> GrantLease(std::chrono::seconds) override {
    std::lock_guard lock(mu_);
    if (down_) return Status::Unavailable("fake etcd is down");
    leases_.insert(++next_lease_);
    return next_lease_;
  }
  StatusOr<std::chrono::seconds> KeepAlive(int64_t lease) override {
    std::lock_guard lock(mu_);
    if (down_) return Status::Unavailable("fake etcd is down");
    ++keepalives_;
    if (!leases_.count(lease)) return Status::NotFound("no such lease");
    return std::chrono::seconds(10);
  }
  Status RevokeLease(int64_t lease) override {
    std::lock_guard lock(mu_);
    ++revokes_;
    if (down_) return Status::Unavailable("fake etcd is down");
    if (!leases_.erase(lease)) return Status::NotFound("no such lease");
    DropLeaseKeys(lease);
    return Status::Ok();
  }
  StatusOr<int64_t> Put(const std::string& key, const std::string& value, int64_t lease) override {
    std::lock_guard lock(mu_);
    if (down_) return Status::Unavailable("fake etcd is down");
    if (lease != 0 && !leases_.count(lease)) return Status::NotFound("no such lease");
    Write(key, value, lease);
    return revision_;
  }
  Status Delete(const std::string& key) override {
    std::lock_guard lock(mu_);
    if (down_) return Status::Unavailable("fake etcd is down");
    Erase(key);
    return Status::Ok();
  }
  StatusOr<StoreSnapshot> List(const std::string& prefix) override {
    std::lock_guard lock(mu_);
    if (down_) return Status::Unavailable("fake etcd is down");
    StoreSnapshot s;
    s.revision = revision_;
    for (const auto& [key, e] : kv_) {
      if (key.rfind(prefix, 0) == 0) s.entries.push_back(e);
    }
    return s;
  }
  StatusOr<std::unique_ptr<StoreWatch>> Watch(const std::string& prefix, int64_t from) override;

  int keepalives() const {
    std::lock_guard lock(mu_);
    return keepalives_;
  }

 private:
  struct Watcher {
    std::string prefix;
    std::deque<std::vector<StoreEvent>> queue;
    Status ended;
    bool cancelled = false;
  };
  class FakeWatch;

  void Write(const std::string& key, const std::string& value, int64_t lease) {
    kv_[key] = StoreEntry{key, value, ++revision_, lease};
    Notify({StoreEvent::Kind::kPut, key, value, revision_});
  }
  void Erase(const std::string& key) {
    if (kv_.erase(key)) Notify({StoreEvent::Kind::kDelete, key, "", ++revision_});
  }
  void DropLeaseKeys(int64_t lease) {
    std::vector<std::string> keys;
    for (const auto& [key, e] : kv_) {
      if (e.lease == lease) keys.push_back(key);
    }
    for (const std::string& key : keys) Erase(key);
  }
  void Notify(const StoreEvent& event) {
    history_.push_back(event);
    for (Watcher* w : watchers_) {
      if (event.key.rfind(w->prefix, 0) == 0) w->queue.push_back({event});
    }
    cv_.notify_all();
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, StoreEntry> kv_;
  std::set<int64_t> leases_;
  std::set<Watcher*> watchers_;
  std::vector<StoreEvent> history_;
  int64_t revision_ = 1;
  int64_t next_lease_ = 100;
  int keepalives_ = 0;
  bool down_ = false;
  int revokes_ = 0;
};

class FakeMembershipStore::FakeWatch final : public StoreWatch {
 public:
  FakeWatch(FakeMembershipStore* store, std::string prefix, int64_t from) : store_(store) {
    watcher_.prefix = std::move(prefix);
    std::lock_guard lock(store_->mu_);
    for (const StoreEvent& e : store_->history_) {  // what happened since from
      if (e.revision >= from && e.key.rfind(watcher_.prefix, 0) == 0) watcher_.queue.push_back({e});
    }
    store_->watchers_.insert(&watcher_);
  }
  ~FakeWatch() override {
    std::lock_guard lock(store_->mu_);
    store_->watchers_.erase(&watcher_);
  }
  StatusOr<std::vector<StoreEvent>> Next(std::chrono::milliseconds timeout) override {
    std::unique_lock lock(store_->mu_);
    auto ready = [this] {
      return !watcher_.queue.empty() || !watcher_.ended.ok() || watcher_.cancelled;
    };
    if (!store_->cv_.wait_for(lock, timeout, ready)) return Status::DeadlineExceeded("quiet");
    if (watcher_.cancelled) return Status::Cancelled("cancelled");
    if (!watcher_.queue.empty()) {
      auto events = std::move(watcher_.queue.front());
      watcher_.queue.pop_front();
      return events;
    }
    return watcher_.ended;
  }
  void Cancel() override {
    std::lock_guard lock(store_->mu_);
    watcher_.cancelled = true;
    store_->cv_.notify_all();
  }

 private:
  FakeMembershipStore* store_;
  Watcher watcher_;
};

inline StatusOr<std::unique_ptr<StoreWatch>> FakeMembershipStore::Watch(const std::string& prefix,
                                                                        int64_t from) {
  {
    std::lock_guard lock(mu_);
    if (down_) return Status::Unavailable("fake etcd is down");
  }
  return std::unique_ptr<StoreWatch>(std::make_unique<FakeWatch>(this, prefix, from));
}

}  // namespace rdmad

#endif  // RDMAD_DAEMON_CLUSTER_FAKE_MEMBERSHIP_STORE_H_
