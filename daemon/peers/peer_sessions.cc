// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/peers/peer_sessions.h"

#include <algorithm>
#include <map>

#include "spdlog/spdlog.h"

namespace rdmad {
namespace {

constexpr int kMaxRunOnceRounds = 100;
constexpr std::chrono::seconds kMaxSleep{1};

}  // namespace

struct PeerSessions::Inbox final : SessionWorker {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Work> queue;  // guarded by mu
  bool closed = false;     // guarded by mu

  void Post(Work work) override {
    {
      std::lock_guard lock(mu);
      if (closed) return;  // stopping: completions no longer matter
      queue.push_back(std::move(work));
    }
    cv.notify_one();
  }

  std::deque<std::function<void()>> Take() {
    std::lock_guard lock(mu);
    return std::exchange(queue, {});
  }
};

PeerSessions::PeerSessions(std::shared_ptr<PeerConnector> connector, const LocalHelloSource& hello,
                           PeerSessionOptions options)
    : inbox_(std::make_shared<Inbox>()), connector_(std::move(connector)) {
  if (!options.clock) options.clock = &Clock::System();
  auto env = std::make_shared<PeerSessionEnv>();
  env->connector = connector_.get();
  env->hello = &hello;
  env->options = std::move(options);
  env->worker = inbox_;
  env_ = std::move(env);
}

PeerSessions::~PeerSessions() { Stop(); }

void PeerSessions::Start() {
  worker_ = std::thread([this] { WorkerLoop(); });
}

void PeerSessions::Stop() {
  std::vector<std::shared_ptr<PeerSession>> sessions;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    sessions = sessions_;
  }
  {
    std::lock_guard lock(inbox_->mu);
    inbox_->closed = true;
  }
  inbox_->cv.notify_all();
  if (worker_.joinable()) worker_.join();
  inbox_->Take();  // dropped: removed sessions end in their destructors
  // The worker is gone: this thread is now the only one driving sessions.
  for (auto& s : sessions) s->Shutdown();
  if (!sessions.empty()) spdlog::info("peer sessions closed ({})", sessions.size());
}

void PeerSessions::Post(SessionWorker::Work work) { inbox_->Post(std::move(work)); }

void PeerSessions::SetUser(SessionUser* user) {
  std::lock_guard lock(mu_);
  user_ = user;
}

void PeerSessions::SetOnDemandQuota(int per_uid) {
  std::lock_guard lock(mu_);
  on_demand_per_uid_ = per_uid;
}

void PeerSessions::SetIdleClose(std::chrono::milliseconds after) {
  std::lock_guard lock(mu_);
  idle_close_ = after;
}

// mu_ held.
std::shared_ptr<PeerSession> PeerSessions::NewSession(const std::string& name,
                                                      const std::string& address,
                                                      PeerOrigin origin) {
  auto session = std::make_shared<PeerSession>(name, address, origin, env_);
  session->Touch(env_->options.clock->Now());
  session->SetUser(user_);
  return session;
}

void PeerSessions::SetConfiguredPeers(const std::vector<PeerConfig>& peers) {
  std::vector<std::shared_ptr<PeerSession>> removed;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    std::vector<std::shared_ptr<PeerSession>> next;
    for (const PeerConfig& p : peers) {
      auto target = NormalizePeerAddress(p.address);
      if (!target.ok()) {  // ValidateConfig keeps these out
        spdlog::error("peer {}: {}; no session", p.name, target.status().message());
        continue;
      }
      auto same = std::find_if(sessions_.begin(), sessions_.end(), [&](const auto& s) {
        return s->configured() && s->name() == p.name && s->address() == *target;
      });
      if (same != sessions_.end()) {
        next.push_back(*same);
        continue;
      }
      spdlog::info("peer {}: opening a session to {} ([[peers]])", p.name, *target);
      next.push_back(NewSession(p.name, *target, PeerOrigin::kConfigured));
    }
    for (auto& s : sessions_) {
      bool kept = std::find(next.begin(), next.end(), s) != next.end();
      // A member that is now configured, too, is reached as configured.
      bool shadowed = s->origin() == PeerOrigin::kDiscovered &&
                      std::any_of(peers.begin(), peers.end(),
                                  [&](const PeerConfig& p) { return p.name == s->name(); });
      if ((s->configured() && !kept) || shadowed) {
        spdlog::info("peer {} ({}) is no longer configured; closing its session", s->name(),
                     s->address());
        removed.push_back(s);
      } else if (!s->configured()) {
        next.push_back(s);
      }
    }
    sessions_ = std::move(next);  // configured first, in config order; then the others
  }
  for (auto& s : removed) Post([s] { s->Shutdown(); });
  Post([] {});  // wake the worker to poll the new sessions
}

void PeerSessions::SetDiscoveredPeers(const std::vector<PeerConfig>& peers) {
  std::vector<std::shared_ptr<PeerSession>> removed;
  std::vector<std::shared_ptr<PeerSession>> back;  // members that appeared again
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    std::map<std::string, std::string> members;
    for (const PeerConfig& p : peers) {
      auto target = NormalizePeerAddress(p.address);
      if (!target.ok()) {  // the member records keep these out
        spdlog::error("cluster member {}: {}; not a peer", p.name, target.status().message());
        continue;
      }
      members[p.name] = *target;
    }
    const std::map<std::string, std::string> before = std::exchange(members_, std::move(members));
    std::erase_if(sessions_, [&](const std::shared_ptr<PeerSession>& s) {
      if (s->origin() != PeerOrigin::kDiscovered) return false;
      if (!Departed(*s)) {
        auto was = before.find(s->name());
        if (was == before.end() || was->second != s->address()) back.push_back(s);
        return false;
      }
      if (s->snapshot().state == PeerSessionState::kUp) {
        spdlog::info(
            "peer {} ({}) left the cluster view; keeping its session while it is up (its own "
            "heartbeats decide)",
            s->name(), s->address());
        return false;
      }
      spdlog::info("peer {} ({}) is no longer a cluster member there; closing its session",
                   s->name(), s->address());
      removed.push_back(s);
      return true;
    });
  }
  for (auto& s : removed) Post([s] { s->Shutdown(); });
  for (auto& s : back) {
    s->DialSoon();
    Post([s, env = env_] {
      s->Revive(env->options.clock->Now(), "its member record is back in etcd");
    });
  }
}

void PeerSessions::PeerAlive(const std::string& host_name, const std::string& ip,
                             const std::string& why) {
  std::vector<std::shared_ptr<PeerSession>> alive;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    for (const auto& s : sessions_) {
      PeerSnapshot snap = s->snapshot();
      bool named = s->name() == host_name || (snap.remote && snap.remote->host_name == host_name);
      bool dialled = !snap.remote && !ip.empty() && HostOfAddress(s->address()) == ip;
      if (named || dialled) alive.push_back(s);
    }
  }
  for (auto& s : alive) {
    s->DialSoon();
    Post([s, why, env = env_] { s->Revive(env->options.clock->Now(), why); });
  }
}

// mu_ held.
bool PeerSessions::Departed(const PeerSession& s) const {
  if (s.origin() != PeerOrigin::kDiscovered) return false;
  auto member = members_.find(s.name());
  return member == members_.end() || member->second != s.address();
}

// Worker only.
void PeerSessions::CloseDeparted() {
  std::vector<std::shared_ptr<PeerSession>> closed;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    std::erase_if(sessions_, [&](const std::shared_ptr<PeerSession>& s) {
      if (!Departed(*s) || s->snapshot().state == PeerSessionState::kUp) return false;
      closed.push_back(s);
      return true;
    });
  }
  for (auto& s : closed) {
    spdlog::info("peer {} ({}) left the cluster and its session is down; closing it", s->name(),
                 s->address());
    s->Shutdown();
  }
}

StatusOr<std::shared_ptr<PeerSession>> PeerSessions::Peer(const std::string& name_or_address,
                                                          std::optional<uid_t> opener) {
  std::shared_ptr<PeerSession> created;
  {
    std::lock_guard lock(mu_);
    if (stopped_) return Status::FailedPrecondition("rdmad is stopping");
    const SteadyTime now = env_->options.clock->Now();
    for (auto& s : sessions_) {  // a [[peers]] name wins over a member's
      if (s->name() == name_or_address) {
        s->Touch(now);
        return s;
      }
    }
    auto member = members_.find(name_or_address);
    if (member != members_.end()) {
      created = NewSession(member->first, member->second, PeerOrigin::kDiscovered);
    } else {
      auto target = NormalizePeerAddress(name_or_address);
      if (!target.ok()) {
        return Status::InvalidArgument("no peer named \"" + name_or_address +
                                       "\", and it is not an address (HOST, HOST:PORT or "
                                       "[IPV6]:PORT)");
      }
      for (auto& s : sessions_) {
        if (s->address() == *target) {
          s->Touch(now);
          return s;
        }
      }
      if (opener && on_demand_per_uid_ > 0) {
        // Forget the sessions that are gone (an address may be reused).
        std::erase_if(openers_, [&](const auto& entry) {
          return std::none_of(sessions_.begin(), sessions_.end(), [&](const auto& s) {
            return s.get() == entry.first && s->origin() == PeerOrigin::kOnDemand;
          });
        });
        int open = 0;
        for (const auto& [session, uid] : openers_) open += uid == *opener;
        if (open >= on_demand_per_uid_) {
          return Status::ResourceExhausted(
              "uid " + std::to_string(*opener) + " has " + std::to_string(open) +
              " peer sessions opened on demand, its limit (limits.max_peer_sessions_per_uid = " +
              std::to_string(on_demand_per_uid_) + ")");
        }
      }
      created = NewSession(*target, *target, PeerOrigin::kOnDemand);
      openers_.erase(created.get());
      if (opener) openers_[created.get()] = *opener;
    }
    sessions_.push_back(created);
  }
  spdlog::info("peer {}: opening a session to {} on first use ({})", created->name(),
               created->address(), PeerOriginName(created->origin()));
  Post([] {});
  return created;
}

// mu_ held.
bool PeerSessions::HasSessionNamed(const std::string& name) const {
  return std::any_of(sessions_.begin(), sessions_.end(),
                     [&](const auto& s) { return s->name() == name; });
}

std::vector<PeerSnapshot> PeerSessions::List() const {
  std::vector<std::shared_ptr<PeerSession>> sessions;
  std::vector<PeerSnapshot> idle;
  {
    std::lock_guard lock(mu_);
    sessions = sessions_;
    for (const auto& [name, address] : members_) {
      if (!HasSessionNamed(name)) {
        PeerSnapshot p;
        p.name = name;
        p.address = address;
        p.configured = false;
        p.origin = PeerOrigin::kDiscovered;
        p.state = PeerSessionState::kIdle;
        idle.push_back(std::move(p));
      }
    }
  }
  std::vector<PeerSnapshot> out;
  for (const auto& s : sessions) out.push_back(s->snapshot());
  out.insert(out.end(), std::make_move_iterator(idle.begin()), std::make_move_iterator(idle.end()));
  return out;
}

bool PeerSessions::Knows(const std::string& name_or_address) const {
  std::lock_guard lock(mu_);
  auto named = [&](const std::string& name, const std::string& address) {
    return name == name_or_address || address == name_or_address;
  };
  return std::any_of(sessions_.begin(), sessions_.end(),
                     [&](const auto& s) { return named(s->name(), s->address()); }) ||
         std::any_of(members_.begin(), members_.end(),
                     [&](const auto& m) { return named(m.first, m.second); });
}

size_t PeerSessions::size() const {
  std::lock_guard lock(mu_);
  size_t idle = 0;
  for (const auto& [name, address] : members_) {
    idle += !HasSessionNamed(name);
  }
  return sessions_.size() + idle;
}

SteadyTime PeerSessions::PollAll(SteadyTime now) {
  std::vector<std::shared_ptr<PeerSession>> sessions;
  {
    std::lock_guard lock(mu_);
    sessions = sessions_;
  }
  SteadyTime next = SteadyTime::max();
  for (auto& s : sessions) next = std::min(next, s->Poll(now));
  CloseDeparted();
  CloseIdle(now);
  return next;
}

// Worker only. The worker polls at least every kMaxSleep, so a session is
// closed within a second of its time.
void PeerSessions::CloseIdle(SteadyTime now) {
  std::vector<std::shared_ptr<PeerSession>> unused;
  SessionUser* user;
  std::chrono::milliseconds after;
  {
    std::lock_guard lock(mu_);
    after = idle_close_;
    if (after.count() <= 0 || stopped_) return;
    for (const auto& s : sessions_) {
      if (!s->configured() && now - s->last_used() >= after) unused.push_back(s);
    }
    user = user_;
  }
  if (unused.empty()) return;
  // A session that still carries channels counts as used now: it is asked
  // again one idle-close time later, not on every poll.
  std::erase_if(unused, [&](const std::shared_ptr<PeerSession>& s) {
    if (user == nullptr || !user->UsesSession(s->snapshot())) return false;
    s->Touch(now);
    return true;
  });
  std::vector<std::shared_ptr<PeerSession>> closed;
  {
    std::lock_guard lock(mu_);
    std::erase_if(sessions_, [&](const std::shared_ptr<PeerSession>& s) {
      // Named again meanwhile (Peer() touched it): it stays.
      bool close = std::find(unused.begin(), unused.end(), s) != unused.end() &&
                   now - s->last_used() >= after;
      if (close) closed.push_back(s);
      return close;
    });
  }
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(after).count();
  for (auto& s : closed) {
    spdlog::info("peer {} ({}): no channel and no use for {} s; closing its session{}", s->name(),
                 s->address(), seconds,
                 s->origin() == PeerOrigin::kDiscovered ? " (the member stays listed, idle)" : "");
    s->Shutdown();
  }
}

SteadyTime PeerSessions::RunOnce() {
  SteadyTime next = SteadyTime::max();
  for (int round = 0; round < kMaxRunOnceRounds; ++round) {
    for (auto& work : inbox_->Take()) work();
    next = PollAll(env_->options.clock->Now());
    std::lock_guard lock(inbox_->mu);
    if (inbox_->queue.empty()) break;
  }
  return next;
}

void PeerSessions::WorkerLoop() {
  SteadyTime next = std::chrono::steady_clock::now();
  for (;;) {
    std::deque<std::function<void()>> batch;
    {
      std::unique_lock lock(inbox_->mu);
      next = std::min(next, std::chrono::steady_clock::now() + kMaxSleep);
      inbox_->cv.wait_until(lock, next, [&] { return inbox_->closed || !inbox_->queue.empty(); });
      if (inbox_->closed) return;
      batch.swap(inbox_->queue);
    }
    for (auto& work : batch) work();
    next = PollAll(env_->options.clock->Now());
  }
}

}  // namespace rdmad
