// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ChannelPool: the client library's warm channels (docs/channels.md,
// "Pooling"). rdmad says which (peer, service) pairs to keep warm and how
// many (SetTargets, from the WatchPool stream); a thread of the pool's own
// keeps that many channels established and idle. Acquire() hands one out
// at once (nullptr when none is ready: the caller connects cold) and the
// thread refills behind it: at once when no channel is out, else 50 ms later
// unless one came back meanwhile. The application's Close() of a pooled channel
// gives it back (Return): a healthy channel with nothing unread stays warm,
// anything else is closed. Channels given back beyond the target (after a
// burst) close once idle for the idle timeout. A warm channel
// whose peer went away (status() not OK) is dropped and replaced. Failed
// refills back off exponentially (100 ms doubling to 10 s, with jitter) and
// the last error is reported. Counts go to the reporter when they change, at
// most once per 250 ms (the newest counts, so a burst is one report).
//
// Closing a channel (eviction, shutdown) is the channel's own Close: the
// QP goes to error and is drained and destroyed, and rdmad tells the peer.
//
// Thread safety: every method may be called from any thread. The connector
// and reporter are called from the pool's thread, never under its lock.

#ifndef RDMAD_CLIENT_SRC_CHANNEL_POOL_H_
#define RDMAD_CLIENT_SRC_CHANNEL_POOL_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "rdmad/channel.h"

namespace rdmad::internal {

struct PoolCount {
  std::string peer;
  std::string service;
  int target = 0;
  int warm = 0;
  int in_use = 0;
  std::string last_error;
  friend bool operator==(const PoolCount&, const PoolCount&) = default;
};

class ChannelPool : public std::enable_shared_from_this<ChannelPool> {
 public:
  using Clock = std::chrono::steady_clock;
  using Connector = std::function<StatusOr<std::unique_ptr<Channel>>(const std::string& peer,
                                                                     const std::string& service)>;
  using Reporter = std::function<void(const PoolCount&)>;
  struct Target {
    std::string peer;
    std::string service;
    int channels = 0;
  };

  // Starts the pool's thread. reporter may be null.
  static std::shared_ptr<ChannelPool> Create(Connector connect, Reporter report);
  ~ChannelPool();  // Stop()

  // Replaces every target (those absent now have target 0). Where a target
  // is lowered, the warm channels beyond it are closed at once.
  void SetTargets(const std::vector<Target>& targets, std::chrono::seconds idle_timeout);
  // A warm channel, or nullptr. The channel returns here when closed.
  std::unique_ptr<Channel> Acquire(const std::string& peer, const std::string& service);
  // Stops the thread and closes every warm channel; later Returns close.
  void Stop();

  std::vector<PoolCount> Counts() const;

 private:
  friend class PooledChannel;
  using Key = std::pair<std::string, std::string>;  // peer, service
  struct Warm {
    std::unique_ptr<Channel> channel;
    Clock::time_point since;
  };
  struct Slot {
    int target = 0;
    std::deque<Warm> warm;  // oldest first
    int in_use = 0;
    std::string last_error;
    Clock::time_point next_attempt;
    std::chrono::milliseconds backoff{0};
    Clock::time_point short_since;  // warm below target since; zero when not
    PoolCount reported;

    // Starts (at now) or ends short_since as warm is below the target or not.
    void NoteShortage(Clock::time_point now);
    // When a short slot should be refilled: after the return grace while
    // channels are out, else once short (backoff aside).
    Clock::time_point RefillDue() const;
  };

  ChannelPool(Connector connect, Reporter report);
  void Return(const Key& key, std::unique_ptr<Channel> channel);
  void Run();
  // One pass (mu_ held): drops failed and evicts idle channels into
  // *closing, picks a key to refill (true), else lowers *wake to when the
  // next backoff or idle timeout ends.
  bool PlanLocked(Clock::time_point now, std::vector<std::unique_ptr<Channel>>* closing,
                  Key* refill, Clock::time_point* wake);
  // mu_ held. Something is due at `due` (max(): nothing): a thread asleep
  // past it is kicked (true: notify cv_ once mu_ is released); an awake one
  // plans again before it sleeps.
  bool KickByLocked(Clock::time_point due);
  void Refill(const Key& key);
  // Sends the counts that changed, at most once per 250 ms; when that holds
  // them back, lowers *wake to when they may go.
  void ReportChanges(Clock::time_point* wake);

  const Connector connect_;
  const Reporter report_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, Slot> slots_;                    // guarded by mu_
  std::chrono::seconds idle_timeout_{0};         // guarded by mu_
  bool stopping_ = false;                        // guarded by mu_
  bool kicked_ = false;                          // guarded by mu_
  // When the sleeping thread wakes by itself; min() while it is awake (it
  // plans again before it sleeps). Guarded by mu_.
  Clock::time_point wake_at_ = Clock::time_point::min();
  std::mt19937 jitter_{std::random_device{}()};  // the pool's thread only
  Clock::time_point last_report_;                // the pool's thread only
  std::thread thread_;
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_CHANNEL_POOL_H_
