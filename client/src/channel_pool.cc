// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/channel_pool.h"

#include <algorithm>

#include "client/src/client_log.h"
#include "client/src/pooled_channel.h"

namespace rdmad::internal {
namespace {

constexpr std::chrono::milliseconds kFirstBackoff{100};
constexpr std::chrono::milliseconds kMaxBackoff{10000};
constexpr std::chrono::milliseconds kMaintainEvery{1000};
// Counts go to rdmad at most this often: a burst of Acquire/Close cycles is
// one report, not an RPC per cycle competing with the application.
constexpr std::chrono::milliseconds kReportEvery{250};
// A pool short of its target while channels are out waits this long before
// it connects: a channel given back meanwhile fills it without a connect (an
// application taking and closing channels in a loop costs no connects).
constexpr std::chrono::milliseconds kReturnGrace{50};

// Healthy and nothing unread: fit for the next user.
bool FitForReuse(Channel& channel) {
  if (!channel.status().ok()) return false;
  auto unread = channel.Recv(std::chrono::milliseconds(0));
  return !unread.ok() && unread.status().code() == StatusCode::kDeadlineExceeded;
}

void CloseAll(std::vector<std::unique_ptr<Channel>>* channels) {
  for (auto& c : *channels) c->Close();
  channels->clear();
}

}  // namespace

std::shared_ptr<ChannelPool> ChannelPool::Create(Connector connect, Reporter report) {
  std::shared_ptr<ChannelPool> pool(new ChannelPool(std::move(connect), std::move(report)));
  pool->thread_ = std::thread([raw = pool.get()] { raw->Run(); });
  return pool;
}

ChannelPool::ChannelPool(Connector connect, Reporter report)
    : connect_(std::move(connect)), report_(std::move(report)) {}

ChannelPool::~ChannelPool() { Stop(); }

void ChannelPool::Stop() {
  std::vector<std::unique_ptr<Channel>> closing;
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (auto& [key, slot] : slots_) {
      for (Warm& w : slot.warm) closing.push_back(std::move(w.channel));
      slot.warm.clear();
    }
    cv_.notify_all();
  }
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
  CloseAll(&closing);
}

void ChannelPool::SetTargets(const std::vector<Target>& targets,
                             std::chrono::seconds idle_timeout) {
  std::vector<std::unique_ptr<Channel>> closing;
  {
    std::lock_guard lock(mu_);
    std::map<Key, int> next;
    for (const Target& t : targets) next[{t.peer, t.service}] = std::max(0, t.channels);
    for (const auto& [key, n] : next) slots_[key];
    for (auto& [key, slot] : slots_) {
      auto it = next.find(key);
      int target = it == next.end() ? 0 : it->second;
      // A lowered target closes the warm channels beyond it at once.
      while (target<slot.target&& int(slot.warm.size())> target) {
        closing.push_back(std::move(slot.warm.front().channel));
        slot.warm.pop_front();
      }
      slot.target = target;
    }
    idle_timeout_ = idle_timeout;
    kicked_ = true;
    cv_.notify_all();
  }
  CloseAll(&closing);
}

std::unique_ptr<Channel> ChannelPool::Acquire(const std::string& peer, const std::string& service) {
  std::unique_ptr<Channel> channel;
  std::vector<std::unique_ptr<Channel>> failed;
  bool kick = false;
  Key key{peer, service};
  {
    std::lock_guard lock(mu_);
    auto it = slots_.find(key);
    if (stopping_ || it == slots_.end()) return nullptr;
    Slot& slot = it->second;
    // Newest first: the one most recently known healthy.
    while (!slot.warm.empty() && !channel) {
      std::unique_ptr<Channel> candidate = std::move(slot.warm.back().channel);
      slot.warm.pop_back();
      if (candidate->status().ok()) {
        channel = std::move(candidate);
      } else {
        failed.push_back(std::move(candidate));
      }
    }
    if (channel) ++slot.in_use;
    // Short of the target: the thread refills after the grace, so a loop of
    // Acquire and Close does not wake it every time; failed ones go at once.
    Clock::time_point now = Clock::now();
    slot.NoteShortage(now);
    Clock::time_point due = Clock::time_point::max();
    if (int(slot.warm.size()) < slot.target) due = slot.RefillDue();
    if (!failed.empty()) due = now;
    kick = KickByLocked(due);
  }
  if (kick) cv_.notify_all();
  CloseAll(&failed);
  if (!channel) return nullptr;
  return std::make_unique<PooledChannel>(weak_from_this(), std::move(key), std::move(channel));
}

void ChannelPool::Return(const Key& key, std::unique_ptr<Channel> channel) {
  bool keep = channel && FitForReuse(*channel);
  bool kick = false;
  {
    std::lock_guard lock(mu_);
    Slot& slot = slots_[key];
    slot.in_use = std::max(0, slot.in_use - 1);
    if (keep && !stopping_) {
      slot.warm.push_back({std::move(channel), Clock::now()});
    }
    // Due: a refill (the channel did not come back) or closing what is
    // beyond the target once idle.
    Clock::time_point now = Clock::now();
    slot.NoteShortage(now);
    Clock::time_point due = Clock::time_point::max();
    if (int(slot.warm.size()) < slot.target) due = now;
    if (int(slot.warm.size()) > slot.target) due = now + idle_timeout_;
    kick = KickByLocked(due);
  }
  if (kick) cv_.notify_all();
  if (channel) channel->Close();
}

std::vector<PoolCount> ChannelPool::Counts() const {
  std::lock_guard lock(mu_);
  std::vector<PoolCount> out;
  for (const auto& [key, slot] : slots_) {
    out.push_back(
        {key.first, key.second, slot.target, int(slot.warm.size()), slot.in_use, slot.last_error});
  }
  return out;
}

void ChannelPool::Run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    std::vector<std::unique_ptr<Channel>> closing;
    Key refill;
    Clock::time_point wake = Clock::now() + kMaintainEvery;
    bool connect = PlanLocked(Clock::now(), &closing, &refill, &wake);
    lock.unlock();
    CloseAll(&closing);
    if (connect) Refill(refill);
    ReportChanges(&wake);
    lock.lock();
    if (connect || stopping_) continue;  // refill the next one at once
    wake_at_ = wake;
    cv_.wait_until(lock, wake, [this] { return kicked_ || stopping_; });
    kicked_ = false;
    wake_at_ = Clock::time_point::min();  // awake: nothing needs a kick
  }
}

bool ChannelPool::PlanLocked(Clock::time_point now, std::vector<std::unique_ptr<Channel>>* closing,
                             Key* refill, Clock::time_point* wake) {
  bool found = false;
  for (auto& [key, slot] : slots_) {
    // Drop warm channels whose peer went away.
    for (auto it = slot.warm.begin(); it != slot.warm.end();) {
      if (it->channel->status().ok()) {
        ++it;
        continue;
      }
      ClientLog().info("pool {} {}: a warm channel failed: {}", key.first, key.second,
                       it->channel->status().message());
      closing->push_back(std::move(it->channel));
      it = slot.warm.erase(it);
    }
    // Beyond the target: the oldest go once idle long enough.
    while (int(slot.warm.size()) > slot.target) {
      Clock::time_point expires = slot.warm.front().since + idle_timeout_;
      if (now < expires) {
        *wake = std::min(*wake, expires);
        break;
      }
      closing->push_back(std::move(slot.warm.front().channel));
      slot.warm.pop_front();
    }
    slot.NoteShortage(now);
    if (found || int(slot.warm.size()) >= slot.target) continue;
    Clock::time_point due = std::max(slot.RefillDue(), slot.next_attempt);
    if (now >= due) {
      *refill = key;
      found = true;
    } else {
      *wake = std::min(*wake, due);
    }
  }
  return found;
}

void ChannelPool::Slot::NoteShortage(Clock::time_point now) {
  if (int(warm.size()) >= target) {
    short_since = Clock::time_point();
  } else if (short_since == Clock::time_point()) {
    short_since = now;
  }
}

ChannelPool::Clock::time_point ChannelPool::Slot::RefillDue() const {
  return in_use > 0 ? short_since + kReturnGrace : short_since;
}

bool ChannelPool::KickByLocked(Clock::time_point due) {
  bool asleep_past = due < wake_at_;
  if (asleep_past || wake_at_ == Clock::time_point::min()) kicked_ = true;
  return asleep_past;
}

void ChannelPool::Refill(const Key& key) {
  StatusOr<std::unique_ptr<Channel>> channel = connect_(key.first, key.second);
  {
    std::lock_guard lock(mu_);
    Slot& slot = slots_[key];
    if (!channel.ok()) {
      slot.last_error = channel.status().ToString();
      slot.backoff =
          slot.backoff.count() == 0 ? kFirstBackoff : std::min(kMaxBackoff, slot.backoff * 2);
      std::uniform_int_distribution<int64_t> spread(0, slot.backoff.count() / 2);
      slot.next_attempt = Clock::now() + slot.backoff + std::chrono::milliseconds(spread(jitter_));
      ClientLog().warn("pool {} {}: refill failed, next try in {} ms: {}", key.first, key.second,
                       slot.backoff.count(), slot.last_error);
      return;
    }
    slot.last_error.clear();
    slot.backoff = std::chrono::milliseconds(0);
    slot.next_attempt = Clock::time_point();
    if (!stopping_) {
      slot.warm.push_back({std::move(channel).value(), Clock::now()});
      return;
    }
  }
  channel.value()->Close();  // stopped meanwhile
}

void ChannelPool::ReportChanges(Clock::time_point* wake) {
  if (!report_) return;
  Clock::time_point now = Clock::now();
  bool hold = last_report_ + kReportEvery > now;
  std::vector<PoolCount> changed;
  {
    std::lock_guard lock(mu_);
    for (auto& [key, slot] : slots_) {
      PoolCount count{key.first,   key.second,     slot.target, int(slot.warm.size()),
                      slot.in_use, slot.last_error};
      if (count == slot.reported) continue;
      if (hold) {
        *wake = std::min(*wake, last_report_ + kReportEvery);
        return;
      }
      slot.reported = count;
      changed.push_back(std::move(count));
    }
  }
  if (changed.empty()) return;
  last_report_ = now;
  for (const PoolCount& c : changed) report_(c);
}

}  // namespace rdmad::internal
