// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// ForwardingChannel: a Channel that passes every call on to the channel it
// wraps. The channels that wrap one (HeldChannel, PooledChannel) derive
// from it and write only what they add, so a new Channel method is
// forwarded here, once. A wrapper lends its channel to each call through
// Enter()/Leave() (PooledChannel counts the calls in flight and refuses
// them once closed); info() and Close() are each wrapper's own.
//
// Thread safety: as the wrapped channel's, plus what Enter/Leave provide.

#ifndef RDMAD_CLIENT_SRC_FORWARDING_CHANNEL_H_
#define RDMAD_CLIENT_SRC_FORWARDING_CHANNEL_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "rdmad/channel.h"
#include "rdmad/status.h"

namespace rdmad::internal {

class ForwardingChannel : public Channel {
 public:
  Status Send(const void* buf, size_t len) override {
    return Forward<Status>([&](Channel& c) { return c.Send(buf, len); });
  }
  Status TrySend(const void* buf, size_t len) override {
    return Forward<Status>([&](Channel& c) { return c.TrySend(buf, len); });
  }
  Status Send(const MemoryRegion& region, size_t offset, size_t len) override {
    return Forward<Status>([&](Channel& c) { return c.Send(region, offset, len); });
  }
  StatusOr<std::vector<uint8_t>> Recv(std::chrono::milliseconds timeout) override {
    return Forward<StatusOr<std::vector<uint8_t>>>([&](Channel& c) { return c.Recv(timeout); });
  }
  StatusOr<size_t> RecvInto(const MemoryRegion& region, size_t offset, size_t max_len,
                            std::chrono::milliseconds timeout) override {
    return Forward<StatusOr<size_t>>(
        [&](Channel& c) { return c.RecvInto(region, offset, max_len, timeout); });
  }
  using Channel::RegisterMemory;
  StatusOr<std::unique_ptr<MemoryRegion>> RegisterMemory(void* addr, size_t len,
                                                         MemoryAccess access) override {
    return Forward<StatusOr<std::unique_ptr<MemoryRegion>>>(
        [&](Channel& c) { return c.RegisterMemory(addr, len, access); });
  }
  using Channel::Expose;
  StatusOr<RegionDescriptor> Expose(const MemoryRegion& region, MemoryAccess access) override {
    return Forward<StatusOr<RegionDescriptor>>(
        [&](Channel& c) { return c.Expose(region, access); });
  }
  Status Revoke(const RegionDescriptor& exposed) override {
    return Forward<Status>([&](Channel& c) { return c.Revoke(exposed); });
  }
  StatusOr<std::unique_ptr<MemoryRegion>> RegisterDmabuf(int fd, uint64_t offset,
                                                         size_t len) override {
    return Forward<StatusOr<std::unique_ptr<MemoryRegion>>>(
        [&](Channel& c) { return c.RegisterDmabuf(fd, offset, len); });
  }
  Status Write(const MemoryRegion& local, size_t local_offset, const RegionDescriptor& remote,
               uint64_t remote_offset, size_t len) override {
    return Forward<Status>(
        [&](Channel& c) { return c.Write(local, local_offset, remote, remote_offset, len); });
  }
  Status Read(const MemoryRegion& local, size_t local_offset, const RegionDescriptor& remote,
              uint64_t remote_offset, size_t len) override {
    return Forward<Status>(
        [&](Channel& c) { return c.Read(local, local_offset, remote, remote_offset, len); });
  }
  using Channel::Submit;
  StatusOr<std::unique_ptr<Transfer>> Submit(const std::vector<TransferOp>& ops,
                                             std::string_view notification) override {
    return Forward<StatusOr<std::unique_ptr<Transfer>>>(
        [&](Channel& c) { return c.Submit(ops, notification); });
  }
  StatusOr<std::vector<uint8_t>> RecvNotification(std::chrono::milliseconds timeout) override {
    return Forward<StatusOr<std::vector<uint8_t>>>(
        [&](Channel& c) { return c.RecvNotification(timeout); });
  }
  StatusOr<int> CompletionFd() override {
    return Forward<StatusOr<int>>([](Channel& c) { return c.CompletionFd(); });
  }
  bool Arm() override {
    auto armed = Forward<StatusOr<bool>>([](Channel& c) -> StatusOr<bool> { return c.Arm(); });
    return armed.ok() && *armed;
  }
  Status status() const override {
    return Forward<Status>([](Channel& c) { return c.status(); });
  }
  std::vector<ChannelRail> rails() const override {
    Channel* c = Enter();
    if (c == nullptr) return {};
    std::vector<ChannelRail> out = c->rails();
    Leave();
    return out;
  }

 protected:
  // The wrapped channel for one call, or nullptr when the wrapper no longer
  // lends it (the call then returns Unusable()). Every Enter that returns a
  // channel is followed by one Leave.
  virtual Channel* Enter() const = 0;
  virtual void Leave() const {}
  virtual Status Unusable() const { return Status::Cancelled("the channel was closed"); }

 private:
  template <typename R, typename F>
  R Forward(F&& f) const {
    Channel* c = Enter();
    if (c == nullptr) return R(Unusable());
    R result = f(*c);
    Leave();
    return result;
  }
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_FORWARDING_CHANNEL_H_
