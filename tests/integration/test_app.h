// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Helpers of the integration tests that play an application:
//   Eventually(pred, timeout)  polls pred every 20 ms until it holds;
//   EnvInt(name, fallback)     an integer from the environment;
//   InLab()                    in the Soft-RoCE lab (LAB_IP set);
//   AcceptAll                  listens on a service and keeps every channel
//                              it accepts, by channel id, until dropped;
//   RoundTrip(channel, server) one message each way between channel and its
//                              end in server.
//
// Thread safety: AcceptAll accepts on its own thread; Get/Drop/DropAll may
// be called from any thread. A channel Get returned stays valid until it is
// dropped.

#ifndef RDMAD_TESTS_INTEGRATION_TEST_APP_H_
#define RDMAD_TESTS_INTEGRATION_TEST_APP_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "rdmad/client.h"

namespace rdmad::testing {

// Whether the test runs in the Soft-RoCE lab (LAB_IP set): over RDMA.
inline bool InLab() { return std::getenv("LAB_IP") != nullptr; }

// The integer in environment variable name, or fallback when unset.
inline int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != 0 ? std::atoi(v) : fallback;
}

template <typename Pred>
bool Eventually(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return pred();
}

class AcceptAll {
 public:
  AcceptAll(Client* client, const std::string& service) {
    auto listener = client->Listen(service);
    EXPECT_TRUE(listener.ok()) << listener.status().ToString();
    if (!listener.ok()) return;
    listener_ = std::move(listener).value();
    thread_ = std::thread([this] {
      while (!stop_) {
        auto channel = listener_->Accept(std::chrono::milliseconds(100));
        if (!channel.ok()) continue;
        std::unique_ptr<Channel> gone;  // closed outside the lock
        std::lock_guard lock(mu_);
        uint64_t id = channel.value()->info().id;
        if (dropped_.erase(id) > 0) {  // dropped before it got here
          gone = std::move(channel).value();
          continue;
        }
        channels_[id] = std::move(channel).value();
        accepted_.notify_all();
      }
    });
  }
  ~AcceptAll() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  // The accepted end of channel id, or null (not accepted yet, or dropped).
  Channel* Get(uint64_t id) {
    std::lock_guard lock(mu_);
    auto it = channels_.find(id);
    return it == channels_.end() ? nullptr : it->second.get();
  }
  // Waits up to timeout for channel id to be accepted; null if it is not.
  Channel* Wait(uint64_t id, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    accepted_.wait_for(lock, timeout, [&] { return channels_.count(id) > 0; });
    auto it = channels_.find(id);
    return it == channels_.end() ? nullptr : it->second.get();
  }
  // Closes the accepted end of channel id, now or as soon as it is
  // accepted (the initiator may close before this side's Accept returns).
  void Drop(uint64_t id) {
    std::unique_ptr<Channel> gone;  // closed outside the lock
    std::lock_guard lock(mu_);
    auto it = channels_.find(id);
    if (it == channels_.end()) {
      if (dropped_.size() < 4096) dropped_.insert(id);
      return;
    }
    gone = std::move(it->second);
    channels_.erase(it);
  }
  void DropAll() {
    std::map<uint64_t, std::unique_ptr<Channel>> gone;
    std::lock_guard lock(mu_);
    gone.swap(channels_);
  }
  // Closes the accepted ends whose channel ended (closed by the peer, or
  // failed), as a server does once it sees that.
  void DropEnded() {
    std::vector<std::unique_ptr<Channel>> gone;  // closed outside the lock
    std::lock_guard lock(mu_);
    for (auto it = channels_.begin(); it != channels_.end();) {
      if (it->second->status().ok()) {
        ++it;
        continue;
      }
      gone.push_back(std::move(it->second));
      it = channels_.erase(it);
    }
  }

 private:
  std::unique_ptr<Listener> listener_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable accepted_;
  std::map<uint64_t, std::unique_ptr<Channel>> channels_;  // guarded by mu_
  std::set<uint64_t> dropped_;  // dropped before accepted; guarded by mu_
  std::thread thread_;
};

// One message each way on channel: its id, sent back by its accepted end
// in server.
inline ::testing::AssertionResult RoundTrip(Channel* channel, AcceptAll& server) {
  using std::chrono::seconds;
  std::string id = std::to_string(channel->info().id);
  if (Status s = channel->Send(id.data(), id.size()); !s.ok()) {
    return ::testing::AssertionFailure() << "send " << id << ": " << s.ToString();
  }
  Channel* far = server.Wait(channel->info().id, seconds(10));
  if (far == nullptr) return ::testing::AssertionFailure() << "channel " << id << " never accepted";
  auto got = far->Recv(seconds(10));
  if (!got.ok() || std::string(got->begin(), got->end()) != id) {
    return ::testing::AssertionFailure() << "B got " << got.status().ToString();
  }
  if (Status s = far->Send(got->data(), got->size()); !s.ok()) {
    return ::testing::AssertionFailure() << "reply " << id << ": " << s.ToString();
  }
  auto back = channel->Recv(seconds(10));
  if (!back.ok() || std::string(back->begin(), back->end()) != id) {
    return ::testing::AssertionFailure() << "A got " << back.status().ToString();
  }
  return ::testing::AssertionSuccess();
}

}  // namespace rdmad::testing

#endif  // RDMAD_TESTS_INTEGRATION_TEST_APP_H_
