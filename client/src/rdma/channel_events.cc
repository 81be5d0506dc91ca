// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RdmaChannel: the completion fd (Channel::CompletionFd and Arm). The fd
// is an epoll set over the CQ's completion channel, readable once the
// armed CQ has a completion, and over the CompletionSignal, readable when
// another thread of the application (a blocking call, or the one that
// took the CQ event) processed news while the channel was armed. While a
// striped batch has pieces on further rails, their completion channels are
// in the set too (ArmRails).

#include <infiniband/verbs.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "client/src/rdma/channel_impl.h"
#include "client/src/rdma/channel_rail.h"

namespace rdmad::internal {

int EpollWatch(int epoll_fd, int op, int fd) {
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.fd = fd;
  return epoll_ctl(epoll_fd, op, fd, &event);
}

StatusOr<int> EpollSet(std::initializer_list<int> fds, const char* what) {
  int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0) return Status::FromErrno(errno, std::string(what) + ": epoll_create1");
  for (int fd : fds) {
    if (fd < 0) continue;  // none (a doorbell that could not be made)
    if (EpollWatch(epoll_fd, EPOLL_CTL_ADD, fd) != 0) {
      Status failed = Status::FromErrno(errno, std::string(what) + ": epoll_ctl");
      close(epoll_fd);
      return failed;
    }
  }
  return epoll_fd;
}

StatusOr<int> RdmaChannel::CompletionFd() {
  Lock lock(mu_);
  if (epoll_fd_ >= 0) return epoll_fd_;
  auto signal = signal_.Open();
  if (!signal.ok()) return signal.status();
  // Arm takes the CQ's events without blocking; a thread asleep in a read
  // of the channel until now keeps waiting for the event it armed.
  if (res_->blocking_events) RDMAD_RETURN_IF_ERROR(res_->NonBlockingEvents());
  if (res_->group && !HasDoorbell()) {
    return Status::ResourceExhausted(
        "CompletionFd: no eventfd for the shared CQ's member could be made (see the log)");
  }
  // A group member's fd also wakes when another member's poll set some of
  // its completions aside (the doorbell), and it watches the shared
  // completion channel for as long as the channel lives.
  auto set = res_->group
                 ? EpollSet({res_->comp_channel->fd, *signal, res_->doorbell}, "CompletionFd")
                 : EpollSet({res_->comp_channel->fd, *signal}, "CompletionFd");
  if (!set.ok()) return set.status();
  epoll_fd_ = *set;
  if (res_->group) {
    res_->group->Watch(local_.qpn, +1);
    watching_fd_ = true;
  }
  return epoll_fd_;
}

bool RdmaChannel::Arm() {
  Lock lock(mu_);
  if (epoll_fd_ < 0) return false;
  // A thread asleep in Sleep() waits for the event (or the doorbell) taken
  // here: it must look again. One asleep in a read of the completion
  // channel takes it itself.
  bool took = res_->group && res_->group->TakeDoorbell(local_.qpn);
  if (!in_read_ && TakeCqEvents()) {
    if (res_->group) res_->group->TookEvent();
    took = true;
  }
  if (took && poller_) Wake();
  if (!rails_.empty()) TakeRailCqEvents();
  Drain();
  bool pending = Pending();
  if (!pending) {
    ArmCq();
    ArmRails();
    Drain();  // what arrived before the CQs were armed raises no event
    pending = Pending();
  }
  batches_done_ = 0;
  if (pending) return false;
  signal_.Armed();
  return true;
}

// The rails with work requests out (a striped batch's pieces): their CQs
// armed, their completion channels in the epoll set (a rail's QP and
// channel are new after it came back; a closed fd leaves the set itself).
void RdmaChannel::ArmRails() {
  for (const auto& rail : rails_) {
    if (rail->outstanding == 0) continue;
    int fd = rail->res->comp_channel->fd;
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = fd;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0 && errno != EEXIST) {
      TakeRailOut(*rail, std::string("CompletionFd: epoll_ctl: ") + std::strerror(errno));
      continue;
    }
    ibv_req_notify_cq(rail->res->cq, 0);
  }
}

bool RdmaChannel::Pending() const {
  if (closed_ || !error_.ok() || peer_closed_) return true;
  if (!notes_.empty() || batches_done_ > 0) return true;
  return std::any_of(ready_.begin(), ready_.end(),
                     [](const Fragment& f) { return f.last || f.close; });
}

void RdmaChannel::CountCqEvent() {
  cq_armed_ = false;
  if (++res_->unacked_cq_events >= kAckBatch) {
    ibv_ack_cq_events(res_->cq, res_->unacked_cq_events);
    res_->unacked_cq_events = 0;
  }
}

bool RdmaChannel::TakeCqEvents(bool one) {
  bool took = false;
  ibv_cq* cq = nullptr;
  void* context = nullptr;
  while (ibv_get_cq_event(res_->comp_channel, &cq, &context) == 0) {
    took = true;
    CountCqEvent();
    if (one) break;  // each syscall here costs as much as the event saves
  }
  return took;
}

}  // namespace rdmad::internal
