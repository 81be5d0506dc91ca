// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// PoolFollower: a Client's link to rdmad's pool (docs/channels.md,
// "Pooling"). A thread of its own keeps the WatchPool stream open and
// gives every target list to the ChannelPool; the pool's counts go back
// with ReportPool. When the stream breaks (rdmad restarted) it is opened
// again after a second, and this client's Prewarm targets are sent again.
//
// Thread safety: every method may be called from any thread.

#ifndef RDMAD_CLIENT_SRC_POOL_FOLLOWER_H_
#define RDMAD_CLIENT_SRC_POOL_FOLLOWER_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "client/src/channel_pool.h"
#include "rdmad/v1/rdmad.grpc.pb.h"

namespace rdmad::internal {

class PoolFollower {
 public:
  // Follows the pool over rpc; warm channels are made with connect.
  PoolFollower(std::shared_ptr<grpc::Channel> rpc, ChannelPool::Connector connect);
  ~PoolFollower();

  // Waits (up to timeout) for the first target list. UNAVAILABLE if the
  // daemon does not answer, with why.
  Status WaitFollowing(std::chrono::milliseconds timeout);
  // This client's own target for (peer, service); kept across reconnects.
  Status Prewarm(const std::string& peer, const std::string& service, int channels,
                 std::chrono::milliseconds timeout);
  ChannelPool& pool() { return *pool_; }

 private:
  void Run();
  void Follow();  // one WatchPool stream, until it ends
  Status SendPrewarm(uint64_t client_id, const std::string& peer, const std::string& service,
                     int channels, std::chrono::milliseconds timeout);
  void Report(const PoolCount& count);

  std::shared_ptr<grpc::Channel> rpc_;
  std::unique_ptr<v1::Rdmad::Stub> stub_;
  std::shared_ptr<ChannelPool> pool_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t client_id_ = 0;  // 0 while no stream is up; guarded by mu_
  Status last_error_;       // guarded by mu_
  std::map<std::pair<std::string, std::string>, int> prewarm_;  // guarded by mu_
  grpc::ClientContext* context_ = nullptr;                      // the open stream's; guarded by mu_
  bool stopping_ = false;                                       // guarded by mu_
  std::thread thread_;
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_POOL_FOLLOWER_H_
