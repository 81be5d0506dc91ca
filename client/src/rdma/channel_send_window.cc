// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// RdmaChannel: the send window, how a large message from a registered host
// region that grants remote read (kReadWrite, kRemoteRead: the application
// registered it for peers) goes without a copy. The channel keeps one type 2
// memory window (allocated at the first such message). Each message's
// rendezvous descriptors name the window's rkey over the message's own
// bytes: a BIND_MW on this channel's QP, posted in front of the descriptors
// (the QP executes it first), binds it to [address, +len) with remote read,
// under a new rkey each time. Send returns once the peer has read every
// piece and a LOCAL_INV has invalidated the window: nothing of the region
// is reachable through it once Send has returned, the region's own rkey
// never travels, and the window works from this channel's QP alone. A
// device that enforces a window's bounds (as the IB spec has it) shows the
// peer only the message while the Send lasts; Soft-RoCE (rxe) checks only
// the registration's, so there the window reaches the whole region for
// that time (docs/security.md). One window is enough: a channel sends one
// message at a time. A kLocal region, a device without memory windows, or
// no window to be had: the pieces are copied into the channel's send
// chunks (channel_rndv.cc).

#include <infiniband/verbs.h>

#include <cstring>

#include "client/src/client_log.h"
#include "client/src/rdma/channel_impl.h"

namespace rdmad::internal {

bool RdmaChannel::CanUseSendWindow(const RdmaMemoryRegion& region) {
  if (!region.host() || region.access() == MemoryAccess::kLocal || !device_->memory_windows() ||
      send_window_failed_) {
    return false;
  }
  if (send_window_ != nullptr) return true;
  send_window_ = ibv_alloc_mw(device_->pd(), IBV_MW_TYPE_2);
  if (send_window_ == nullptr) {
    send_window_failed_ = true;
    ClientLog().info(
        "RDMA channel {} QP {:#x}: no memory window for sending from registered memory ({}): "
        "large messages are copied",
        info_.id, local_.qpn, std::strerror(errno));
    return false;
  }
  send_window_rkey_ = send_window_->rkey;
  return true;
}

StatusOr<uint32_t> RdmaChannel::BindSendWindow(Lock& lock, const RdmaMemoryRegion& region,
                                               uint64_t address, uint64_t len) {
  uint32_t rkey = ibv_inc_rkey(send_window_rkey_);
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_BIND_MW;
  wr.bind_mw.mw = send_window_;
  wr.bind_mw.rkey = rkey;
  wr.bind_mw.bind_info.mr = region.mr();
  wr.bind_mw.bind_info.addr = address;
  wr.bind_mw.bind_info.length = len;
  wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
  RDMAD_RETURN_IF_ERROR(PostLocalOp(lock, wr, WrKind::kWindow, "send window", &window_ops_posted_));
  send_window_rkey_ = rkey;
  send_window_->rkey = rkey;
  return rkey;
}

Status RdmaChannel::InvalidateSendWindow(Lock& lock) {
  ibv_send_wr wr{};
  wr.opcode = IBV_WR_LOCAL_INV;
  wr.invalidate_rkey = send_window_rkey_;
  RDMAD_RETURN_IF_ERROR(PostLocalOp(lock, wr, WrKind::kWindow, "send window", &window_ops_posted_));
  uint64_t mine = window_ops_posted_;
  return WaitFor(
      lock, [&] { return window_ops_done_ >= mine; }, std::nullopt, Side::kSend);
}

void RdmaChannel::FreeSendWindow() {
  if (send_window_ != nullptr) ibv_dealloc_mw(send_window_);
  send_window_ = nullptr;
}

}  // namespace rdmad::internal
