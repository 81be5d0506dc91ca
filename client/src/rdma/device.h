// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RdmaDevice: one opened RDMA device (ibv_context) and the one protection
// domain every channel and memory region of this process uses on it, so a
// MemoryRegion works with every channel on its device. Devices come from a
// process-wide cache (device name -> device) and stay open while anything
// holds a reference; the last reference closes them.
//
// Each open device has a thread that sleeps on the device's async event fd
// and hands queue pair events (IBV_EVENT_QP_FATAL, ...) to the channel that
// watches that QP number; other events are logged.
//
// Thread safety: all methods may be called from any thread. The context and
// PD are thread safe as libibverbs objects.

#ifndef RDMAD_CLIENT_SRC_RDMA_DEVICE_H_
#define RDMAD_CLIENT_SRC_RDMA_DEVICE_H_

#include <infiniband/verbs.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "client/src/rdma/channel_slab.h"
#include "client/src/rdma/mr_cache.h"
#include "client/src/rdma/rndv_pool.h"
#include "rdmad/status.h"

namespace rdmad::internal {

class RdmaDevice {
 public:
  // The cached device, or opens it. NOT_FOUND if libibverbs does not list
  // it, UNAVAILABLE if this host has no RDMA support or opening fails.
  static StatusOr<std::shared_ptr<RdmaDevice>> Open(const std::string& name);

  ~RdmaDevice();
  RdmaDevice(const RdmaDevice&) = delete;
  RdmaDevice& operator=(const RdmaDevice&) = delete;

  const std::string& name() const { return name_; }
  ibv_context* context() const { return context_; }
  ibv_pd* pd() const { return pd_; }
  // Responder resources / initiator depth this device supports (for RDMA
  // READ), already capped at kMaxRdAtomic.
  uint32_t max_rd_atomic() const { return max_rd_atomic_; }
  uint32_t max_dest_rd_atomic() const { return max_dest_rd_atomic_; }
  uint32_t max_qp_wr() const { return max_qp_wr_; }
  uint32_t max_cqe() const { return max_cqe_; }
  // True when the device sits on a PCI bus (relaxed ordering matters only
  // there; Soft-RoCE and siw have none).
  bool on_pci() const { return on_pci_; }
  // True when the device binds type 2 memory windows (a window bound to one
  // QP, over a registration, invalidated by the binder): Channel::Expose
  // needs them.
  bool memory_windows() const { return memory_windows_; }
  // Names the device in a region's rail keys (RegionDescriptor::rail_keys)
  // and a channel's handshake: its node GUID folded to 32 bits, never 0.
  uint32_t tag() const { return tag_; }

  // Calls handler (on the event thread) for async events of QP qpn, until
  // Unwatch(qpn) returns. The handler must not call Watch/Unwatch.
  using QpEventHandler = std::function<void(int event_type)>;
  void Watch(uint32_t qpn, QpEventHandler handler);
  void Unwatch(uint32_t qpn);

  // ibv_query_port and ibv_query_gid_ex as a new channel asks them, kept
  // for the next ones (a burst of channels asks the kernel about once): an
  // ACTIVE port's attributes and a GID entry for up to kQueryTtl, dropped
  // at once by the device's port, GID and LID events. Errors are not kept.
  // 0 or an errno, as the verbs they stand for.
  int QueryPort(uint8_t port, ibv_port_attr* attr);
  int QueryGidEntry(uint8_t port, uint32_t index, ibv_gid_entry* entry);
  static constexpr std::chrono::seconds kQueryTtl{1};
  // The queries that went to the kernel (tests).
  uint64_t kernel_queries() const;

  // Host-memory registrations on pd(), shared by range (mr_cache.h).
  MrCache& mr_cache() { return mr_cache_; }
  // This process's rendezvous landing chunks on the device (rndv_pool.h).
  RndvPool& rndv_pool() { return *rndv_pool_; }
  // Where channels take their first ring slots and staging chunks
  // (channel_slab.h).
  ChannelSlab& channel_slab() { return *channel_slab_; }
  // How many rendezvous send chunks a channel opened now may register
  // (send_chunks.h): RndvPool::kChannelShare unless a test set fewer.
  uint32_t send_share() const { return send_share_; }
  // Tests: a pool of `chunks` instead, and channels opened from now on
  // send through at most that many chunks. Only while no chunk is taken.
  void ReplaceRndvPoolForTesting(uint32_t chunks);
  // Logs the relaxed ordering decision for application memory the first
  // time, and again only when it changes.
  void LogOrderingOnce(const std::string& decision);

  static constexpr uint32_t kMaxRdAtomic = 16;

 private:
  RdmaDevice(std::string name, ibv_context* context, ibv_pd* pd);
  Status Start();
  bool ProbeMemoryWindows(const ibv_device_attr& attr);
  void EventLoop();
  void Dispatch();

  std::string name_;
  ibv_context* context_;
  ibv_pd* pd_;
  uint32_t max_rd_atomic_ = 1, max_dest_rd_atomic_ = 1;
  uint32_t max_qp_wr_ = 0, max_cqe_ = 0;
  bool on_pci_ = false;
  bool memory_windows_ = false;
  uint32_t tag_ = 1;
  int stop_fd_ = -1;
  std::thread events_;
  std::mutex mu_;  // guards watchers_; held while a handler runs
  std::map<uint32_t, QpEventHandler> watchers_;
  MrCache mr_cache_;
  std::unique_ptr<RndvPool> rndv_pool_;
  std::unique_ptr<ChannelSlab> channel_slab_;
  uint32_t send_share_ = RndvPool::kChannelShare;
  std::mutex log_mu_;
  std::string logged_ordering_;
  // What QueryPort and QueryGidEntry keep, with when the kernel said it.
  using QueryClock = std::chrono::steady_clock;
  struct KeptPort {
    ibv_port_attr attr;
    QueryClock::time_point at;
  };
  struct KeptGid {
    ibv_gid_entry entry;
    QueryClock::time_point at;
  };
  mutable std::mutex query_mu_;  // guards the three below
  std::map<uint8_t, KeptPort> ports_;
  std::map<std::pair<uint8_t, uint32_t>, KeptGid> gids_;
  uint64_t kernel_queries_ = 0;
  void ForgetQueries();
};

// "::ffff:192.0.2.1" for a raw 16-byte GID.
std::string GidText(const uint8_t* gid);

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_RDMA_DEVICE_H_
