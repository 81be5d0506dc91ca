// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/rdma/device.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "client/src/client_log.h"

namespace rdmad::internal {
namespace {

struct DeviceListDeleter {
  void operator()(ibv_device** list) const { ibv_free_device_list(list); }
};

// The process-wide cache. Leaked on purpose: channels may outlive statics.
struct Cache {
  std::mutex mu;
  std::map<std::string, std::weak_ptr<RdmaDevice>> devices;
};
Cache& TheCache() {
  static Cache* cache = new Cache;
  return *cache;
}

StatusOr<ibv_context*> OpenContext(const std::string& name) {
  int n = 0;
  errno = 0;
  std::unique_ptr<ibv_device*, DeviceListDeleter> list(ibv_get_device_list(&n));
  if (!list) {
    int err = errno;
    return Status::Unavailable("RDMA device " + name + ": ibv_get_device_list failed: " +
                               std::strerror(err) + " (no RDMA support on this host?)");
  }
  std::string names;
  for (int i = 0; i < n; ++i) {
    const char* dev_name = ibv_get_device_name(list.get()[i]);
    if (name != dev_name) {
      names += names.empty() ? dev_name : std::string(", ") + dev_name;
      continue;
    }
    ibv_context* ctx = ibv_open_device(list.get()[i]);
    if (ctx == nullptr) {
      int err = errno;
      return Status::Unavailable("RDMA device " + name +
                                 ": ibv_open_device failed: " + std::strerror(err));
    }
    return ctx;
  }
  return Status::NotFound("RDMA device " + name + " not found (libibverbs lists " +
                          (names.empty() ? std::string("none") : names) + ")");
}

bool OnPci(const std::string& name) {
  std::error_code ec;
  auto path = std::filesystem::canonical("/sys/class/infiniband/" + name, ec);
  return !ec && path.string().find("/devices/pci") != std::string::npos;
}

}  // namespace

bool RdmaDevice::ProbeMemoryWindows(const ibv_device_attr& attr) {
  constexpr unsigned kType2 = IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B;
  if ((attr.device_cap_flags & kType2) == 0 || attr.max_mw == 0) {
    ClientLog().info("RDMA {}: no type 2 memory windows: Channel::Expose is unavailable", name_);
    return false;
  }
  ibv_mw* mw = ibv_alloc_mw(pd_, IBV_MW_TYPE_2);
  if (mw == nullptr) {
    ClientLog().info("RDMA {}: ibv_alloc_mw (type 2): {}; Channel::Expose is unavailable", name_,
                     std::strerror(errno));
    return false;
  }
  ibv_dealloc_mw(mw);
  ClientLog().debug("RDMA {}: type 2 memory windows (Channel::Expose)", name_);
  return true;
}

std::string GidText(const uint8_t* gid) {
  // Every channel's info names both its GIDs, and they repeat (this
  // device's, a peer's), while inet_ntop formats each word with sprintf:
  // the last two texts are kept per thread.
  struct Memo {
    std::array<uint8_t, 16> gid{};
    std::string text;  // empty: unused
  };
  thread_local std::array<Memo, 2> memo;
  thread_local size_t next = 0;
  for (const Memo& m : memo) {
    if (!m.text.empty() && std::memcmp(m.gid.data(), gid, m.gid.size()) == 0) return m.text;
  }
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid, buf, sizeof(buf));
  Memo& m = memo[next++ % memo.size()];
  std::memcpy(m.gid.data(), gid, m.gid.size());
  m.text = buf;
  return m.text;
}

StatusOr<std::shared_ptr<RdmaDevice>> RdmaDevice::Open(const std::string& name) {
  Cache& cache = TheCache();
  std::lock_guard lock(cache.mu);
  if (auto cached = cache.devices[name].lock()) return cached;
  auto ctx = OpenContext(name);
  if (!ctx.ok()) return ctx.status();
  ibv_pd* pd = ibv_alloc_pd(*ctx);
  if (pd == nullptr) {
    int err = errno;
    ibv_close_device(*ctx);
    return Status::Unavailable("RDMA device " + name +
                               ": ibv_alloc_pd failed: " + std::strerror(err));
  }
  std::shared_ptr<RdmaDevice> device(new RdmaDevice(name, *ctx, pd));
  RDMAD_RETURN_IF_ERROR(device->Start());
  cache.devices[name] = device;
  return device;
}

RdmaDevice::RdmaDevice(std::string name, ibv_context* context, ibv_pd* pd)
    : name_(std::move(name)), context_(context), pd_(pd), on_pci_(OnPci(name_)) {}

Status RdmaDevice::Start() {
  ibv_device_attr attr{};
  if (int rc = ibv_query_device(context_, &attr); rc != 0) {
    return Status::Unavailable("RDMA device " + name_ +
                               ": ibv_query_device failed: " + std::strerror(rc));
  }
  max_rd_atomic_ = std::clamp<uint32_t>(attr.max_qp_init_rd_atom, 1, kMaxRdAtomic);
  max_dest_rd_atomic_ = std::clamp<uint32_t>(attr.max_qp_rd_atom, 1, kMaxRdAtomic);
  max_qp_wr_ = attr.max_qp_wr;
  max_cqe_ = attr.max_cqe;
  memory_windows_ = ProbeMemoryWindows(attr);
  uint64_t guid = attr.node_guid;  // big endian; any fold names it
  tag_ = static_cast<uint32_t>(guid ^ (guid >> 32));
  if (tag_ == 0) tag_ = 1;
  rndv_pool_ = std::make_unique<RndvPool>(pd_, name_);
  channel_slab_ = std::make_unique<ChannelSlab>(VerbsSlabMemory(pd_, name_), name_);
  int flags = fcntl(context_->async_fd, F_GETFL);
  if (flags < 0 || fcntl(context_->async_fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return Status::FromErrno(errno, "RDMA device " + name_ + ": async fd O_NONBLOCK");
  }
  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) return Status::FromErrno(errno, "eventfd");
  events_ = std::thread([this] { EventLoop(); });
  return Status::Ok();
}

RdmaDevice::~RdmaDevice() {
  if (events_.joinable()) {
    uint64_t one = 1;
    if (write(stop_fd_, &one, sizeof(one)) < 0)
      ClientLog().warn("device {}: eventfd write failed", name_);
    events_.join();
  }
  if (stop_fd_ >= 0) close(stop_fd_);
  rndv_pool_.reset();     // its MR is on pd_
  channel_slab_.reset();  // its MRs too
  if (int rc = ibv_dealloc_pd(pd_); rc != 0) {
    ClientLog().warn("device {}: ibv_dealloc_pd: {} (memory regions still registered?)", name_,
                     std::strerror(rc));
  }
  ibv_close_device(context_);
}

void RdmaDevice::ReplaceRndvPoolForTesting(uint32_t chunks) {
  rndv_pool_ = std::make_unique<RndvPool>(pd_, name_, chunks);
  send_share_ = std::min(chunks, RndvPool::kChannelShare);
}

void RdmaDevice::Watch(uint32_t qpn, QpEventHandler handler) {
  std::lock_guard lock(mu_);
  watchers_[qpn] = std::move(handler);
}

void RdmaDevice::Unwatch(uint32_t qpn) {
  std::lock_guard lock(mu_);
  watchers_.erase(qpn);
}

void RdmaDevice::LogOrderingOnce(const std::string& decision) {
  std::lock_guard lock(log_mu_);
  if (decision == logged_ordering_) return;
  logged_ordering_ = decision;
  ClientLog().info("memory on {}: relaxed ordering {}", name_, decision);
}

int RdmaDevice::QueryPort(uint8_t port, ibv_port_attr* attr) {
  std::lock_guard lock(query_mu_);
  auto now = QueryClock::now();
  if (auto it = ports_.find(port); it != ports_.end() && now - it->second.at < kQueryTtl) {
    *attr = it->second.attr;
    return 0;
  }
  ++kernel_queries_;
  int rc = ibv_query_port(context_, port, attr);
  if (rc == 0 && attr->state == IBV_PORT_ACTIVE) {
    ports_[port] = {*attr, now};
  } else {
    ports_.erase(port);
  }
  return rc;
}

int RdmaDevice::QueryGidEntry(uint8_t port, uint32_t index, ibv_gid_entry* entry) {
  std::lock_guard lock(query_mu_);
  auto now = QueryClock::now();
  auto key = std::make_pair(port, index);
  if (auto it = gids_.find(key); it != gids_.end() && now - it->second.at < kQueryTtl) {
    *entry = it->second.entry;
    return 0;
  }
  ++kernel_queries_;
  int rc = ibv_query_gid_ex(context_, port, index, entry, 0);
  if (rc == 0) {
    gids_[key] = {*entry, now};
  } else {
    gids_.erase(key);
  }
  return rc;
}

uint64_t RdmaDevice::kernel_queries() const {
  std::lock_guard lock(query_mu_);
  return kernel_queries_;
}

void RdmaDevice::ForgetQueries() {
  std::lock_guard lock(query_mu_);
  ports_.clear();
  gids_.clear();
}

void RdmaDevice::EventLoop() {
  pollfd fds[2] = {{context_->async_fd, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
  for (;;) {
    int n = poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || (fds[1].revents & POLLIN)) return;
    if (fds[0].revents & (POLLERR | POLLHUP | POLLNVAL)) {
      ClientLog().warn("device {}: async event fd closed; no more QP events", name_);
      return;
    }
    if (fds[0].revents & POLLIN) Dispatch();
  }
}

void RdmaDevice::Dispatch() {
  ibv_async_event event{};
  while (ibv_get_async_event(context_, &event) == 0) {
    int type = event.event_type;
    bool qp_event = type == IBV_EVENT_QP_FATAL || type == IBV_EVENT_QP_REQ_ERR ||
                    type == IBV_EVENT_QP_ACCESS_ERR || type == IBV_EVENT_COMM_EST ||
                    type == IBV_EVENT_SQ_DRAINED || type == IBV_EVENT_PATH_MIG ||
                    type == IBV_EVENT_PATH_MIG_ERR || type == IBV_EVENT_QP_LAST_WQE_REACHED;
    if (qp_event) {
      uint32_t qpn = event.element.qp->qp_num;
      std::lock_guard lock(mu_);
      auto it = watchers_.find(qpn);
      if (it != watchers_.end()) it->second(type);
    } else if (type == IBV_EVENT_CQ_ERR) {
      ClientLog().error("device {}: CQ error (CQ overrun?)", name_);
    } else {
      if (type == IBV_EVENT_PORT_ACTIVE || type == IBV_EVENT_PORT_ERR ||
          type == IBV_EVENT_LID_CHANGE || type == IBV_EVENT_PKEY_CHANGE ||
          type == IBV_EVENT_GID_CHANGE || type == IBV_EVENT_SM_CHANGE ||
          type == IBV_EVENT_CLIENT_REREGISTER) {
        ForgetQueries();  // what the next channel asks goes to the kernel
      }
      ClientLog().info("device {}: async event {}", name_, ibv_event_type_str(event.event_type));
    }
    ibv_ack_async_event(&event);
  }
}

}  // namespace rdmad::internal
