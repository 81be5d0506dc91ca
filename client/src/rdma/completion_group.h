// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// CompletionGroup: one CQ and completion channel shared by the channels of
// a batch (Client::ConnectMany's, and the acceptor's side of such a batch).
// On Soft-RoCE a CQ and its completion channel cost a channel end about
// two thirds of what its QP costs to make (docs/benchmarks.md); a batch's
// channels need one between them, as NIXL's and Mooncake's endpoints share
// their worker's CQ. A lone channel keeps a CQ of its own, so that its
// waits sleep in one read of its own completion channel.
//
// Each member is a QP, and its completions stay its own, in order: Poll
// takes first those that other members' polls set aside for it (its
// inbox), then the CQ's, setting aside the others' and ringing their
// doorbell (an eventfd a member's sleep and CompletionFd watch) if they
// are watching, all under the group's mutex. The CQ holds every member's
// worst case (send and receive depth + 1 each: Reserve refuses a member
// beyond that), so it cannot overrun.
//
// One arming of the CQ raises one event on the shared completion channel,
// and any member's sleeper may take it. A member that is about to sleep on
// the completion channel (or watches it through CompletionFd) counts itself
// with Watch(+1) before it arms the CQ; whoever takes an event calls
// TookEvent(), which arms the CQ again while anyone watches, before the
// taker polls. So a sleeper whose arming another member's taking used up
// still hears of its completions: routed to its inbox by that poll (the
// doorbell), or through the new arming's event.
//
// Leave, after the member's QP is destroyed, drops what of its completions
// is still in the CQ. The last member's resources release the group, which
// destroys CQ and completion channel (every member has acknowledged the
// events it took by then).
//
// Thread safety: every method is safe from any thread.

#ifndef RDMAD_CLIENT_SRC_RDMA_COMPLETION_GROUP_H_
#define RDMAD_CLIENT_SRC_RDMA_COMPLETION_GROUP_H_

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "client/src/rdma/device.h"
#include "client/src/ring_queue.h"
#include "common/endpoint.h"
#include "rdmad/status.h"

namespace rdmad::internal {

class CompletionGroup {
 public:
  // What one channel of plan may have outstanding in a CQ: its send and
  // receive depth, and one.
  static uint32_t EntriesFor(const RdmaPlan& plan) {
    return plan.qp.send_depth + plan.qp.recv_depth + 1;
  }
  // A group for `channels` channels of plan on its device (fewer if the
  // device's largest CQ holds fewer: Join refuses the rest, which make CQs
  // of their own). The verbs error if CQ or completion channel cannot be
  // made.
  static StatusOr<std::shared_ptr<CompletionGroup>> ForBatch(const RdmaPlan& plan, size_t channels);
  ~CompletionGroup();
  CompletionGroup(const CompletionGroup&) = delete;
  CompletionGroup& operator=(const CompletionGroup&) = delete;

  ibv_cq* cq() const { return cq_; }
  ibv_comp_channel* comp_channel() const { return comp_channel_; }
  uint32_t capacity() const { return capacity_; }

  // Reserves `entries` of the CQ for a member: false when the CQ has no
  // room left for them.
  bool Reserve(uint32_t entries);
  // qpn joins, before its QP can complete anything.
  void Join(uint32_t qpn);
  // qpn's doorbell (an eventfd, non-blocking, owned by the group until
  // Leave), made at the member's first call: a member that never sleeps
  // nor hands out a CompletionFd holds no descriptor. The error making it.
  StatusOr<int> Doorbell(uint32_t qpn);
  // qpn's QP is destroyed: its completions left in the CQ are dropped (the
  // others' set aside), its doorbell closed, its entries given back.
  void Leave(uint32_t qpn, uint32_t entries);

  // Up to max of qpn's completions into out, in order; -1 if polling the CQ
  // fails. *more: the inbox or the CQ may hold more (poll again).
  int Poll(uint32_t qpn, ibv_wc* out, int max, bool* more);
  // Clears qpn's doorbell if it rang (the caller polls next): whether it had.
  bool TakeDoorbell(uint32_t qpn);

  // A sleeper of member qpn on the completion channel (or its
  // CompletionFd) comes (+1) or goes (-1); see above for the order. Only a
  // watching member's doorbell rings (one that has none, or does not
  // watch, takes its inbox at its next poll).
  void Watch(uint32_t qpn, int delta);
  // An event of the completion channel was taken: the CQ is armed again if
  // anyone watches. The caller polls next.
  void TookEvent();

  // Tests: completions Poll set aside for another member so far, and the
  // members now.
  uint64_t routed() const;
  size_t members() const;

 private:
  struct Member {
    uint32_t qpn = 0;
    int doorbell = -1;
    bool rung = false;
    int watching = 0;
    RingQueue<ibv_wc> inbox;  // allocates at its first completion
  };
  CompletionGroup() = default;
  Member* FindLocked(uint32_t qpn);
  // wc to its member's inbox (dropped if it has left), ringing its doorbell.
  void RouteLocked(const ibv_wc& wc);

  std::shared_ptr<RdmaDevice> device_;
  ibv_comp_channel* comp_channel_ = nullptr;
  ibv_cq* cq_ = nullptr;
  uint32_t capacity_ = 0;  // CQ entries

  mutable std::mutex mu_;
  uint32_t reserved_ = 0;        // entries the members hold (guarded by mu_)
  std::vector<Member> members_;  // guarded by mu_
  uint64_t routed_ = 0;          // guarded by mu_
};

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_RDMA_COMPLETION_GROUP_H_
