// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RdmaChannel's sleeps: a blocking read of the completion channel when
// nothing else can wake the waiter, else an epoll set (or poll) of the
// completion channel, the wake eventfd and a group member's doorbell; and
// the wakers that raise a completion for a sleeper in a read.

#include <infiniband/verbs.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "client/src/client_log.h"
#include "client/src/rdma/channel_impl.h"
#include "client/src/rdma/channel_rail.h"

namespace rdmad::internal {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kSleepWithoutWake = std::chrono::milliseconds(50);  // MakeWakeFd failed

}  // namespace

// Arms the CQ and sleeps on the completion channel and the wake eventfd
// (and a group member's doorbell), and on the completion channels of the
// rails with work requests out (a second at most then: a busy rail's port
// is looked at once a second).
void RdmaChannel::Sleep(Lock& lock, Deadline deadline) {
  const bool rails_busy = RailsBusy();
  if (!deadline && res_->blocking_events && !rails_busy) {  // never a group member's
    SleepInRead(lock);
    return;
  }
  CompletionGroup* group = res_->group.get();
  const bool rung_unheard = group != nullptr && !HasDoorbell();
  if (group != nullptr) group->Watch(local_.qpn, +1);  // before arming (completion_group.h)
  auto unwatch = [this, group] {
    if (group != nullptr) group->Watch(local_.qpn, -1);
  };
  if (!ArmCq()) {
    unwatch();
    return;
  }
  if (wake_fd_ == -1) MakeWakeFd();
  if (wake_fd_ < 0 || rung_unheard) {
    // Without them, sleeps are short: Close and failures (and completions
    // another member's poll set aside) are seen within one.
    auto soon = Clock::now() + kSleepWithoutWake;
    deadline = deadline ? std::min(*deadline, soon) : soon;
  }
  // poll skips negative fds: no wake eventfd, no doorbell (not a member).
  pollfd own[3] = {
      {res_->comp_channel->fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}, {res_->doorbell, POLLIN, 0}};
  std::vector<pollfd> with_rails;  // own, then the busy rails' (no allocation without)
  for (const auto& rail : rails_) {
    if (rail->outstanding == 0) continue;
    if (with_rails.empty()) with_rails.assign(own, own + 3);
    ibv_req_notify_cq(rail->res->cq, 0);
    with_rails.push_back({rail->res->comp_channel->fd, POLLIN, 0});
  }
  pollfd* fds = with_rails.empty() ? own : with_rails.data();
  const size_t nfds = with_rails.empty() ? 3 : with_rails.size();
  if (Drain() > 0) {  // arrived before arming: no event will tell
    unwatch();
    return;
  }
  if (rails_busy) {
    auto look = Clock::now() + std::chrono::seconds(1);
    deadline = deadline ? std::min(*deadline, look) : look;
  }
  poller_ = true;
  int timeout_ms = -1;
  if (deadline) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now());
    timeout_ms = static_cast<int>(std::max<int64_t>(left.count(), 0));
  }
  const int sleep_fd = rails_busy ? -1 : SleepSet();
  lock.unlock();
  bool cq_event = false, woken = false, rung = false;
  if (sleep_fd >= 0) {  // the set was made once: no fd to look up and hook per sleep
    epoll_event events[3];
    int n = epoll_wait(sleep_fd, events, 3, timeout_ms);
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      (fd == wake_fd_ ? woken : fd == res_->doorbell ? rung : cq_event) = true;
    }
  } else {
    int n = poll(fds, nfds, timeout_ms);
    cq_event = n > 0 && (fds[0].revents & POLLIN);
    woken = n > 0 && (fds[1].revents & POLLIN);
    rung = n > 0 && (fds[2].revents & POLLIN);
  }
  lock.lock();
  poller_ = false;
  unwatch();
  if (woken && error_.ok() && !closed_) {
    uint64_t count = 0;  // Arm() took our CQ event; Close and failures stay readable
    while (read(wake_fd_, &count, sizeof(count)) == sizeof(count)) {
    }
  }
  if (rung) group->TakeDoorbell(local_.qpn);  // the caller polls next
  if (cq_event && TakeCqEvents(/*one=*/true) && group != nullptr) group->TookEvent();
  if (rails_busy) TakeRailCqEvents();
  NotifyWaiters();
}

// The CQ is armed. Whatever else must wake this thread raises a completion
// (WakeBlockedSleeper): Close, a failure, and Arm, which leaves the event
// to it.
void RdmaChannel::SleepInRead(Lock& lock) {
  if (!cq_armed_) {
    if (!ArmCq()) return;
    if (Drain() > 0) return;  // arrived before arming: no event will tell
  }
  LeaveSleepSet();
  ++wait_counts_.reads;
  poller_ = true;
  in_read_ = true;
  lock.unlock();
  ibv_cq* cq = nullptr;
  void* context = nullptr;
  int rc = ibv_get_cq_event(res_->comp_channel, &cq, &context);
  const int err = errno;
  in_read_ = false;  // before the lock: a waker that finds it clear needs do nothing
  lock.lock();
  poller_ = false;
  if (rc == 0) {
    CountCqEvent();
    ArmCq();  // at once: the caller drains next, and the next sleep need not
  } else if (err != EAGAIN && err != EINTR) {  // EAGAIN: CompletionFd made it non-blocking
    Fail(Status::Unavailable("RDMA channel " + local_.device +
                             ": reading the completion channel: " + std::strerror(err)));
  }
  NotifyWaiters();
}

bool RdmaChannel::ArmCq() {
  if (int rc = ibv_req_notify_cq(res_->cq, 0); rc != 0) {
    Fail(Status::Unavailable(std::string("ibv_req_notify_cq: ") + std::strerror(rc)));
    return false;
  }
  cq_armed_ = true;
  ++wait_counts_.arms;
  return true;
}

void RdmaChannel::WakeBlockedSleeper(bool broken) {
  if (!in_read_) return;
  // Unsignaled SENDs and batch work requests may have completed unseen.
  const bool signaled_out = sq_outstanding_ > silent_ + quiet_batch_wrs_;
  if (broken) {
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_ERR;  // what the QP holds flushes, each a completion
    ibv_modify_qp(res_->qp, &attr, IBV_QP_STATE);
    if (recv_posted_ > 0 || signaled_out) return;
  } else if (signaled_out) {
    return;  // their completions come
  }
  if (sq_outstanding_ >= res_->send_depth) return;
  // A zero-length WRITE names no memory (the peer checks no rkey, IB C9-88):
  // it completes once the peer acknowledges it, or flushes in ERR.
  ibv_send_wr wr{};
  wr.wr_id = WithCovered(MakeWrId(WrKind::kWake, 0), uncovered_);
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(res_->qp, &wr, &bad); rc != 0) {
    ClientLog().warn("RDMA channel {} QP {:#x}: a WRITE to wake a waiting call: {}", info_.id,
                     local_.qpn, std::strerror(rc));
    return;
  }
  ++sq_outstanding_;
  uncovered_ = 0;
}

void RdmaChannel::WaitOnCv(Lock& lock, Deadline until) {
  ++cv_waiters_;
  if (until) {
    cv_.wait_until(lock, *until);
  } else {
    cv_.wait(lock);
  }
  --cv_waiters_;
}

// The eventfd Close, failures and Arm write to wake a sleeping poller,
// made at the channel's first sleep (a channel that never sleeps holds no
// descriptor for it): wakers hold mu_, and the sleeper makes it under mu_
// before it lets go, so a waker finding none knows no one sleeps. False
// (logged, and not tried again) if it cannot be made.
bool RdmaChannel::MakeWakeFd() {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ >= 0) return true;
  const int err = errno;
  ClientLog().warn("RDMA channel {}: eventfd: {}; sleeping at most {} ms at a time", info_.id,
                   std::strerror(err), kSleepWithoutWake.count());
  wake_fd_ = -2;  // tried
  return false;
}

// A group member's doorbell, from the group at the first sleep or
// CompletionFd. False (logged, and not tried again by sleeps) if it cannot
// be made.
bool RdmaChannel::HasDoorbell() {
  if (res_->doorbell == -1) {
    auto doorbell = res_->group->Doorbell(local_.qpn);
    if (doorbell.ok()) {
      res_->doorbell = *doorbell;
    } else {
      ClientLog().warn("RDMA channel {}: {}; sleeping at most {} ms at a time", info_.id,
                       doorbell.status().message(), kSleepWithoutWake.count());
      res_->doorbell = -2;  // tried
    }
  }
  return res_->doorbell >= 0;
}

// The epoll set Sleep waits on (the completion channel, the wake eventfd
// and a group member's doorbell if it has one), made at the first sleep,
// the completion channel put back if a sleep in a read took it out
// (LeaveSleepSet); -1 if it cannot be (Sleep polls).
int RdmaChannel::SleepSet() {
  if (sleep_fd_ == -1 && wake_fd_ >= 0) {
    auto set = res_->group ? EpollSet({res_->comp_channel->fd, wake_fd_, res_->doorbell}, "Sleep")
                           : EpollSet({res_->comp_channel->fd, wake_fd_}, "Sleep");
    if (!set.ok()) {
      ClientLog().debug("RDMA channel {}: sleeping with poll: {}", info_.id,
                        set.status().message());
      sleep_fd_ = -2;  // tried
      return -1;
    }
    sleep_fd_ = *set;
    comp_in_sleep_set_ = true;
  }
  if (sleep_fd_ < 0) return -1;
  if (!comp_in_sleep_set_) {  // a sleep in a read took it out
    if (EpollWatch(sleep_fd_, EPOLL_CTL_ADD, res_->comp_channel->fd) != 0)
      return -1;  // Sleep polls
    comp_in_sleep_set_ = true;
  }
  return sleep_fd_;
}

// A CQ event wakes every waiter of the completion channel, the epoll sets
// it is in among them: the kernel runs the set's callback for each event,
// in the time of the thread whose work request made it (for a message, the
// sender's). A sleep in a read needs no set: the channel leaves it until the
// next timed sleep (SleepSet). If it cannot leave, it stays (and costs only
// that callback).
void RdmaChannel::LeaveSleepSet() {
  if (comp_in_sleep_set_ && EpollWatch(sleep_fd_, EPOLL_CTL_DEL, res_->comp_channel->fd) == 0) {
    comp_in_sleep_set_ = false;
  }
}

}  // namespace rdmad::internal
