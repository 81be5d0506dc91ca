// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/cluster/cluster_membership.h"

#include <spdlog/spdlog.h>

#include "daemon/peers/backoff.h"

namespace rdmad {
namespace {

using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

constexpr milliseconds kWatchPoll{250};  // how often a quiet watch looks at stopping

}  // namespace

ClusterMembership::ClusterMembership(std::shared_ptr<MembershipStore> store, ClusterOptions options,
                                     MembersObserver* observer)
    : store_(std::move(store)), options_(std::move(options)), observer_(observer) {}

ClusterMembership::~ClusterMembership() { Stop(false); }

void ClusterMembership::Start(MemberRecord self) {
  {
    std::lock_guard lock(mu_);
    if (started_) return;
    started_ = true;
    self_ = std::move(self);
    dirty_ = true;
    down_since_ = Steady::now();
  }
  spdlog::info("cluster: member {} of {} in etcd ({}), lease {} s", self_.name, options_.prefix,
               options_.endpoints, options_.ttl.count());
  lease_thread_ = std::thread([this] { LeaseLoop(); });
  watch_thread_ = std::thread([this] { WatchLoop(); });
}

void ClusterMembership::Update(MemberRecord self) {
  std::lock_guard lock(mu_);
  if (self == self_) return;
  self_ = std::move(self);
  dirty_ = true;
  cv_.notify_all();
}

void ClusterMembership::Stop(bool withdraw) {
  int64_t lease = 0;
  bool reachable = false;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    if (watch_) watch_->Cancel();
    cv_.notify_all();
    lease = lease_;
    reachable = reachable_;
  }
  if (lease_thread_.joinable()) lease_thread_.join();
  if (watch_thread_.joinable()) watch_thread_.join();
  if (withdraw && lease != 0 && !reachable) {
    // Not worth a stop that waits out every endpoint's deadline.
    spdlog::info(
        "cluster: etcd is unreachable; member {} goes when its lease expires (within {} s)",
        self().name, options_.ttl.count());
  } else if (withdraw && lease != 0) {
    Status revoked = store_->RevokeLease(lease);
    if (revoked.ok()) {
      spdlog::info("cluster: withdrew member {} (lease revoked)", self().name);
    } else {
      spdlog::warn("cluster: could not withdraw member {}: {}; it goes when its lease expires",
                   self().name, revoked.message());
    }
  }
}

std::vector<MemberRecord> ClusterMembership::Members() const {
  std::lock_guard lock(mu_);
  std::vector<MemberRecord> out;
  for (const auto& [key, record] : view_) {
    if (record.name != self_.name) out.push_back(record);
  }
  std::sort(out.begin(), out.end(),
            [](const MemberRecord& a, const MemberRecord& b) { return a.name < b.name; });
  return out;
}

MemberRecord ClusterMembership::self() const {
  std::lock_guard lock(mu_);
  return self_;
}

ClusterHealth ClusterMembership::health() const {
  std::lock_guard lock(mu_);
  ClusterHealth h;
  h.enabled = true;
  h.reachable = reachable_;
  h.endpoints = options_.endpoints;
  h.last_error = last_error_;
  if (!reachable_) {
    h.unreachable_s = std::chrono::duration<double>(Steady::now() - down_since_).count();
  }
  for (const auto& [key, record] : view_) h.members += record.name != self_.name;
  h.revision = revision_;
  h.registered = registered_;
  return h;
}

bool ClusterMembership::Sleep(milliseconds d) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, d, [this] { return stopping_; });
}

void ClusterMembership::Reachable() {
  std::lock_guard lock(mu_);
  if (!reachable_ && said_down_) {
    spdlog::info("cluster: etcd ({}) answers again", options_.endpoints);
  }
  reachable_ = true;
  said_down_ = false;
}

void ClusterMembership::Unreachable(const Status& why) {
  std::lock_guard lock(mu_);
  if (stopping_) return;
  if (reachable_ || !said_down_) {
    spdlog::warn(
        "cluster: etcd ({}) is unreachable: {}; keeping the last known {} member(s) "
        "and the configured peers, retrying",
        options_.endpoints, why.message(), view_.size());
    said_down_ = true;
    down_since_ = Steady::now();
  }
  reachable_ = false;
  last_error_ = why.message();
}

void ClusterMembership::LeaseLoop() {
  const milliseconds renew = std::chrono::duration_cast<milliseconds>(options_.ttl) / 3;
  // A retry never waits so long that the lease could expire between two
  // tries while etcd answers: at most a quarter of the TTL.
  const milliseconds ttl_quarter = std::chrono::duration_cast<milliseconds>(options_.ttl) / 4;
  Backoff backoff(
      {.initial = milliseconds(200), .max = std::min(options_.max_backoff, ttl_quarter)});
  int64_t lease = 0;
  auto next_renewal = Steady::now();
  for (;;) {
    std::string key, value;
    bool put = false;
    {
      std::unique_lock lock(mu_);
      cv_.wait_until(lock, lease == 0 ? Steady::now() : next_renewal,
                     [this, lease] { return stopping_ || dirty_ || lease == 0; });
      if (stopping_) return;
      put = dirty_ || lease == 0;
      key = MemberKey(options_.prefix, self_.name);
      value = EncodeMemberRecord(self_);
      dirty_ = false;
    }
    Status st;
    if (lease == 0) {
      auto granted = store_->GrantLease(options_.ttl);
      st = granted.status();
      if (granted.ok()) lease = *granted;
    }
    if (st.ok() && put) st = store_->Put(key, value, lease).status();
    if (st.ok() && !put) {
      auto ttl = store_->KeepAlive(lease);
      st = ttl.status();
    }
    if (st.ok()) {
      backoff.Reset();
      Reachable();
      std::lock_guard lock(mu_);
      if (!registered_) spdlog::info("cluster: registered {} (lease {:x})", self_.name, lease);
      registered_ = true;
      lease_ = lease;
      next_renewal = Steady::now() + renew;
      continue;
    }
    {
      std::lock_guard lock(mu_);
      dirty_ = dirty_ || put;  // put again once the store answers
      if (st.code() == StatusCode::kNotFound) {
        spdlog::warn("cluster: the lease of {} expired in etcd; registering again", self_.name);
        registered_ = false;
        dirty_ = true;
      }
    }
    if (st.code() == StatusCode::kNotFound) {
      lease = 0;
      continue;
    }
    Unreachable(st);
    if (!Sleep(backoff.Next())) return;
  }
}

void ClusterMembership::WatchLoop() {
  Backoff backoff({.initial = milliseconds(200), .max = options_.max_backoff});
  const std::string prefix = MembersPrefix(options_.prefix);
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    auto snapshot = store_->List(prefix);
    if (!snapshot.ok()) {
      Unreachable(snapshot.status());
      if (!Sleep(backoff.Next())) return;
      continue;
    }
    ReplaceView(*snapshot);
    auto opened = store_->Watch(prefix, snapshot->revision + 1);
    if (!opened.ok()) {
      Unreachable(opened.status());
      if (!Sleep(backoff.Next())) return;
      continue;
    }
    std::shared_ptr<StoreWatch> watch = std::move(opened).value();
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      watch_ = watch;
    }
    Reachable();
    backoff.Reset();
    for (;;) {
      auto events = watch->Next(kWatchPoll);
      if (events.ok()) {
        ApplyEvents(*events);
        continue;
      }
      if (events.status().code() == StatusCode::kDeadlineExceeded) continue;
      if (events.status().code() == StatusCode::kCancelled) return;
      // Compacted below us, or the store went away: read everything again.
      if (events.status().code() != StatusCode::kOutOfRange) Unreachable(events.status());
      break;
    }
    {
      std::lock_guard lock(mu_);
      watch_.reset();
    }
    if (!Sleep(backoff.Next())) return;
  }
}

bool ClusterMembership::Decode(const std::string& key, const std::string& value,
                               MemberRecord* out) {
  auto record = DecodeMemberRecord(value);
  std::string name = key.substr(MembersPrefix(options_.prefix).size());
  Status bad = record.ok() && record->name != name
                   ? Status::InvalidArgument("the record names " + record->name)
                   : record.status();
  if (!bad.ok()) {
    if (bad_keys_.insert(key).second) {
      spdlog::warn("cluster: ignoring {} in etcd: {}", key, bad.message());
    }
    return false;
  }
  *out = std::move(record).value();
  return true;
}

void ClusterMembership::ReplaceView(const StoreSnapshot& snapshot) {
  {
    std::lock_guard lock(mu_);
    std::map<std::string, MemberRecord> view;
    for (const StoreEntry& e : snapshot.entries) {
      MemberRecord record;
      if (Decode(e.key, e.value, &record)) view[e.key] = std::move(record);
    }
    revision_ = snapshot.revision;
    if (view == view_) return;
    view_ = std::move(view);
  }
  Publish();
}

void ClusterMembership::ApplyEvents(const std::vector<StoreEvent>& events) {
  bool changed = false;
  {
    std::lock_guard lock(mu_);
    for (const StoreEvent& e : events) {
      revision_ = std::max(revision_, e.revision);
      if (e.kind == StoreEvent::Kind::kDelete) {
        changed |= view_.erase(e.key) > 0;
        bad_keys_.erase(e.key);
        continue;
      }
      MemberRecord record;
      if (!Decode(e.key, e.value, &record)) {
        changed |= view_.erase(e.key) > 0;
        continue;
      }
      auto it = view_.find(e.key);
      if (it != view_.end() && it->second == record) continue;
      view_[e.key] = std::move(record);
      changed = true;
    }
  }
  if (changed) Publish();
}

void ClusterMembership::Publish() {
  std::vector<MemberRecord> members = Members();
  spdlog::info("cluster: {} other member(s)", members.size());
  if (observer_ != nullptr) observer_->OnMembers(members);
}

}  // namespace rdmad
