// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// PooledChannel: a warm channel handed out by ChannelPool::Acquire. It
// forwards every call to the channel; Close() (or the destructor) gives
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
#include "rdmad/channel.h"

namespace rdmad::internal {

class PooledChannel final : public Channel {
 public:
  PooledChannel(std::weak_ptr<ChannelPool> pool, ChannelPool::Key key,
                std::unique_ptr<Channel> channel);
  ~PooledChannel() override;

  const ChannelInfo& info() const override { return info_; }
  Status Send(const void* buf, size_t len) override {
    return Call<Status>([&](Channel* c) { return c->Send(buf, len); });
  }
  Status TrySend(const void* buf, size_t len) override {
    return Call<Status>([&](Channel* c) { return c->TrySend(buf, len); });
  }
  Status Send(const MemoryRegion& region, size_t offset, size_t len) override {
    return Call<Status>([&](Channel* c) { return c->Send(region, offset, len); });
  }
  StatusOr<std::vector<uint8_t>> Recv(std::chrono::milliseconds timeout) override {
    return Call<StatusOr<std::vector<uint8_t>>>([&](Channel* c) { return c->Recv(timeout); });
  }
  using Channel::RegisterMemory;
  StatusOr<std::unique_ptr<MemoryRegion>> RegisterMemory(void* addr, size_t len,
                                                         MemoryAccess access) override {
    return Call<StatusOr<std::unique_ptr<MemoryRegion>>>(
        [&](Channel* c) { return c->RegisterMemory(addr, len, access); });
  }
  StatusOr<std::unique_ptr<MemoryRegion>> RegisterDmabuf(int fd, uint64_t offset,
                                                         size_t len) override {
    return Call<StatusOr<std::unique_ptr<MemoryRegion>>>(
        [&](Channel* c) { return c->RegisterDmabuf(fd, offset, len); });
  }
  using Channel::Expose;
  // What this lease exposed is revoked when the channel goes back to the
  // pool: the next user of the warm channel inherits none of it.
  StatusOr<RegionDescriptor> Expose(const MemoryRegion& region, MemoryAccess access) override;
  Status Revoke(const RegionDescriptor& exposed) override;
  Status Write(const MemoryRegion& local, size_t local_offset, const RegionDescriptor& remote,
               uint64_t remote_offset, size_t len) override {
    return Call<Status>(
        [&](Channel* c) { return c->Write(local, local_offset, remote, remote_offset, len); });
  }
  Status Read(const MemoryRegion& local, size_t local_offset, const RegionDescriptor& remote,
              uint64_t remote_offset, size_t len) override {
    return Call<Status>(
        [&](Channel* c) { return c->Read(local, local_offset, remote, remote_offset, len); });
  }
  using Channel::Submit;
  StatusOr<std::unique_ptr<Transfer>> Submit(const std::vector<TransferOp>& ops,
                                             std::string_view notification) override {
    return Call<StatusOr<std::unique_ptr<Transfer>>>(
        [&](Channel* c) { return c->Submit(ops, notification); });
  }
  StatusOr<std::vector<uint8_t>> RecvNotification(std::chrono::milliseconds timeout) override {
    return Call<StatusOr<std::vector<uint8_t>>>(
        [&](Channel* c) { return c->RecvNotification(timeout); });
  }
  StatusOr<size_t> RecvInto(const MemoryRegion& region, size_t offset, size_t max_len,
                            std::chrono::milliseconds timeout) override {
    return Call<StatusOr<size_t>>(
        [&](Channel* c) { return c->RecvInto(region, offset, max_len, timeout); });
  }
  StatusOr<int> CompletionFd() override {
    return Call<StatusOr<int>>([](Channel* c) { return c->CompletionFd(); });
  }
  bool Arm() override {
    auto armed = Call<StatusOr<bool>>([](Channel* c) -> StatusOr<bool> { return c->Arm(); });
    return armed.ok() && *armed;
  }
  Status status() const override;
  void Close() override;

 private:
  template <typename R, typename F>
  R Call(F&& f) {
    calls_.fetch_add(1);
    if (closed_.load()) {
      calls_.fetch_sub(1);
      return Closed();
    }
    R result = f(channel_.get());
    calls_.fetch_sub(1);
    return result;
  }
  static Status Closed() { return Status::Cancelled("the channel was closed"); }

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
