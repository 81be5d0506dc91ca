// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// PooledChannel: a warm channel handed out by ChannelPool::Acquire. It
// forwards every call to the channel (ForwardingChannel); Close() (or the destructor) gives
// the channel back to the pool, which keeps it if it is healthy. If a call
// is still running on another thread when Close() comes, the channel is
// closed instead (which wakes that call) and not returned. After Close()
// every call is CANCELLED, as for any channel.
//
// Thread safety: as rdmad::Channel. Each forwarded call costs two atomic
// operations (the in-flight count).

#ifndef RDMAD_CLIENT_SRC_POOLED_CHANNEL_H_
#define RDMAD_CLIENT_SRC_POOLED_CHANNEL_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "client/src/channel_pool.h"
#include "client/src/forwarding_channel.h"
#include "rdmad/channel.h"

namespace rdmad::internal {

class PooledChannel final : public ForwardingChannel {
 public:
  PooledChannel(std::weak_ptr<ChannelPool> pool, ChannelPool::Key key,
                std::unique_ptr<Channel> channel);
  ~PooledChannel() override;

  const ChannelInfo& info() const override { return info_; }
  // What this lease exposed is revoked when the channel goes back to the
  // pool: the next user of the warm channel inherits none of it.
  using ForwardingChannel::Expose;
  StatusOr<RegionDescriptor> Expose(const MemoryRegion& region, MemoryAccess access) override;
  Status Revoke(const RegionDescriptor& exposed) override;
  void Close() override;

 protected:
  // Counts the call, or refuses it once closed (the channel went back).
  Channel* Enter() const override;
  void Leave() const override { calls_.fetch_sub(1); }

 private:
  const std::weak_ptr<ChannelPool> pool_;
  const ChannelPool::Key key_;
  const ChannelInfo info_;
  std::unique_ptr<Channel> channel_;  // given back (moved out) by Close()
  mutable std::atomic<int> calls_{0};
  std::atomic<bool> closed_{false};
  std::mutex close_mu_;  // one Close at a time
  std::mutex exposed_mu_;
  std::vector<RegionDescriptor> exposed_;  // not yet revoked; guarded by exposed_mu_
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_POOLED_CHANNEL_H_
