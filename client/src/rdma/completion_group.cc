// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/rdma/completion_group.h"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "client/src/client_log.h"

namespace rdmad::internal {

StatusOr<std::shared_ptr<CompletionGroup>> CompletionGroup::ForBatch(const RdmaPlan& plan,
                                                                     size_t channels) {
  auto device = RdmaDevice::Open(plan.device);
  if (!device.ok()) return device.status();
  std::shared_ptr<CompletionGroup> g(new CompletionGroup);
  g->device_ = std::move(device).value();
  const uint64_t per = EntriesFor(plan);
  const uint64_t max = g->device_->max_cqe();
  if (per > max) return Status::ResourceExhausted("a channel's completions exceed the largest CQ");
  g->capacity_ = static_cast<uint32_t>(std::min<uint64_t>(per * channels, max / per * per));
  ibv_context* ctx = g->device_->context();
  g->comp_channel_ = ibv_create_comp_channel(ctx);
  if (g->comp_channel_ == nullptr) {
    return Status::FromErrno(errno, "ibv_create_comp_channel on " + plan.device);
  }
  // Several members' sleepers may look at it at once: none may block.
  int flags = fcntl(g->comp_channel_->fd, F_GETFL);
  if (flags < 0 || fcntl(g->comp_channel_->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return Status::FromErrno(errno, "completion channel O_NONBLOCK");
  }
  g->cq_ = ibv_create_cq(ctx, int(g->capacity_), nullptr, g->comp_channel_, 0);
  if (g->cq_ == nullptr) {
    return Status::FromErrno(
        errno, "ibv_create_cq (" + std::to_string(g->capacity_) + " entries, shared)");
  }
  ClientLog().debug("RDMA {}: a CQ of {} entries for a batch of {} channels", plan.device,
                    g->capacity_, channels);
  return g;
}

CompletionGroup::~CompletionGroup() {
  for (Member& m : members_) {
    if (m.doorbell >= 0) close(m.doorbell);
  }
  if (cq_ != nullptr) {
    if (int rc = ibv_destroy_cq(cq_); rc != 0) {
      ClientLog().warn("ibv_destroy_cq (shared): {}", std::strerror(rc));
    }
  }
  if (comp_channel_ != nullptr) ibv_destroy_comp_channel(comp_channel_);
}

bool CompletionGroup::Reserve(uint32_t entries) {
  std::lock_guard lock(mu_);
  if (uint64_t(reserved_) + entries > capacity_) return false;
  reserved_ += entries;
  return true;
}

void CompletionGroup::Join(uint32_t qpn) {
  std::lock_guard lock(mu_);
  members_.emplace_back().qpn = qpn;
}

StatusOr<int> CompletionGroup::Doorbell(uint32_t qpn) {
  std::lock_guard lock(mu_);
  Member* m = FindLocked(qpn);
  if (m == nullptr) return Status::FailedPrecondition("not a member of the shared CQ");
  if (m->doorbell < 0) {
    m->doorbell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (m->doorbell < 0) return Status::FromErrno(errno, "eventfd for a shared CQ's member");
  }
  return m->doorbell;
}

void CompletionGroup::Leave(uint32_t qpn, uint32_t entries) {
  std::lock_guard lock(mu_);
  ibv_wc wc[16];
  for (;;) {  // the QP is gone: nothing of it comes after these
    int n = ibv_poll_cq(cq_, 16, wc);
    for (int i = 0; i < n; ++i) {
      if (wc[i].qp_num != qpn) RouteLocked(wc[i]);
    }
    if (n < 16) break;
  }
  auto it = std::find_if(members_.begin(), members_.end(),
                         [qpn](const Member& m) { return m.qpn == qpn; });
  if (it != members_.end()) {
    if (it->doorbell >= 0) close(it->doorbell);
    members_.erase(it);
  }
  reserved_ -= std::min(reserved_, entries);
}

CompletionGroup::Member* CompletionGroup::FindLocked(uint32_t qpn) {
  for (Member& m : members_) {
    if (m.qpn == qpn) return &m;
  }
  return nullptr;
}

void CompletionGroup::RouteLocked(const ibv_wc& wc) {
  Member* m = FindLocked(wc.qp_num);
  if (m == nullptr) return;  // a member that left: its QP is gone
  m->inbox.push_back(wc);
  ++routed_;
  if (m->watching > 0 && m->doorbell >= 0 && !m->rung) {
    uint64_t one = 1;
    if (write(m->doorbell, &one, sizeof(one)) == sizeof(one)) m->rung = true;
  }
}

int CompletionGroup::Poll(uint32_t qpn, ibv_wc* out, int max, bool* more) {
  std::lock_guard lock(mu_);
  Member* me = FindLocked(qpn);
  int n = 0;
  if (me != nullptr) {
    while (n < max && !me->inbox.empty()) {
      out[n++] = me->inbox.front();
      me->inbox.pop_front();
    }
  }
  if (n == max) {
    *more = true;
    return n;
  }
  const int want = max - n;
  ibv_wc polled[64];
  int got = ibv_poll_cq(cq_, std::min(want, 64), polled);
  if (got < 0) return -1;
  for (int i = 0; i < got; ++i) {
    if (polled[i].qp_num == qpn) {
      out[n++] = polled[i];
    } else {
      RouteLocked(polled[i]);
    }
  }
  *more = got == std::min(want, 64);
  return n;
}

bool CompletionGroup::TakeDoorbell(uint32_t qpn) {
  std::lock_guard lock(mu_);
  Member* m = FindLocked(qpn);
  if (m == nullptr || !m->rung) return false;
  uint64_t count = 0;
  while (read(m->doorbell, &count, sizeof(count)) == sizeof(count)) {
  }
  m->rung = false;
  return true;
}

void CompletionGroup::Watch(uint32_t qpn, int delta) {
  std::lock_guard lock(mu_);
  if (Member* m = FindLocked(qpn)) m->watching += delta;
}

void CompletionGroup::TookEvent() {
  std::lock_guard lock(mu_);
  if (std::any_of(members_.begin(), members_.end(),
                  [](const Member& m) { return m.watching > 0; })) {
    ibv_req_notify_cq(cq_, 0);
  }
}

uint64_t CompletionGroup::routed() const {
  std::lock_guard lock(mu_);
  return routed_;
}

size_t CompletionGroup::members() const {
  std::lock_guard lock(mu_);
  return members_.size();
}

}  // namespace rdmad::internal
