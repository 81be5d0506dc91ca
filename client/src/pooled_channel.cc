// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/pooled_channel.h"

#include <thread>

namespace rdmad::internal {

PooledChannel::PooledChannel(std::weak_ptr<ChannelPool> pool, ChannelPool::Key key,
                             std::unique_ptr<Channel> channel)
    : pool_(std::move(pool)),
      key_(std::move(key)),
      info_(channel->info()),
      channel_(std::move(channel)) {}

PooledChannel::~PooledChannel() { Close(); }

StatusOr<RegionDescriptor> PooledChannel::Expose(const MemoryRegion& region, MemoryAccess access) {
  auto exposed = ForwardingChannel::Expose(region, access);
  if (exposed.ok()) {
    std::lock_guard lock(exposed_mu_);
    exposed_.push_back(*exposed);
  }
  return exposed;
}

Status PooledChannel::Revoke(const RegionDescriptor& exposed) {
  Status s = ForwardingChannel::Revoke(exposed);
  std::lock_guard lock(exposed_mu_);
  std::erase_if(exposed_, [&](const RegionDescriptor& d) {
    return d.address == exposed.address && d.rkey == exposed.rkey;
  });
  return s;
}

Channel* PooledChannel::Enter() const {
  calls_.fetch_add(1);
  if (closed_.load()) {
    calls_.fetch_sub(1);
    return nullptr;
  }
  return channel_.get();
}

void PooledChannel::Close() {
  std::lock_guard lock(close_mu_);
  if (closed_.exchange(true)) return;
  std::shared_ptr<ChannelPool> pool = pool_.lock();
  if (calls_.load() > 0) {
    // A call is still running on another thread: the channel cannot go
    // back. Closing it wakes the call; wait until it has left.
    channel_->Close();
    while (calls_.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    channel_.reset();
  }
  if (pool && channel_) {
    std::lock_guard hold(exposed_mu_);
    for (const RegionDescriptor& d : exposed_) (void)channel_->Revoke(d);
    exposed_.clear();
  }
  if (pool) {
    pool->Return(key_, std::move(channel_));  // null: in use no more, nothing back
  } else if (channel_) {
    channel_->Close();
    channel_.reset();
  }
}

}  // namespace rdmad::internal
