// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// TcpChannel, the I/O thread: reads and validates every frame from the
// peer, fills the receive queue, serves the peer's WRITE and READ_REQ from
// the region registry and completes this side's Writes and Reads.

#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <new>
#include <string>
#include <string_view>
#include <utility>

#include "client/src/client_log.h"
#include "client/src/tcp/tcp_channel_impl.h"
#include "client/src/tcp/tcp_region.h"

namespace rdmad::internal {
namespace {

// How OnClose words the peer's CLOSE: the channel's status after it.
constexpr std::string_view kClosedByPeer = "closed by peer";

bool IsPeerClose(const Status& status) { return status.message().starts_with(kClosedByPeer); }

// The I/O thread moves region bytes through a buffer of this size, so that
// a region is only locked for one memcpy, never while waiting on the peer.
constexpr size_t kBounceBytes = size_t{1} << 20;
// A DATA message's buffer starts at this size and doubles as bytes arrive:
// a peer announcing a large message cannot make us allocate much more than
// it actually sends.
constexpr size_t kFirstChunkBytes = size_t{4} << 20;

bool IsEof(const Status& status) { return status.message().find("EOF after") != std::string::npos; }

std::string Describe(const FrameHeader& h) {
  return FrameTypeName(static_cast<uint8_t>(h.type)) + " of region " + std::to_string(h.region_id) +
         " [" + std::to_string(h.offset) + ", +" +
         std::to_string(h.type == FrameType::kWrite ? h.payload_len : h.read_len) + ")";
}

}  // namespace

void TcpChannel::ReaderMain() {
  Status status;
  while (status.ok()) status = ReadFrame();
  Finish(status);
}

Status TcpChannel::ReadFrame() {
  RDMAD_RETURN_IF_ERROR(WaitForQueueSpace());
  RawFrameHeader raw;
  size_t got = 0;
  heard_ = std::chrono::steady_clock::now();  // waiting for the application is not silence
  Status read = Receive(raw.data(), raw.size(), &got);
  if (!read.ok()) {
    if (got == 0 && IsEof(read)) {
      return Status::Unavailable("connection lost: the peer closed the connection without CLOSE");
    }
    return IsEof(read) ? Status::Unavailable("connection lost in a frame header: " + read.message())
                       : read;
  }
  StatusOr<FrameHeader> header = DecodeFrameHeader(raw);
  if (!header.ok()) return header.status();
  switch (header->type) {
    case FrameType::kData: return OnData(*header);
    case FrameType::kWrite: return OnWrite(*header);
    case FrameType::kReadReq: return OnReadReq(*header);
    case FrameType::kReadResp:
    case FrameType::kAck: return OnAnswer(*header);
    case FrameType::kClose: return OnClose(*header);
    case FrameType::kNotify: return OnNotify(*header);
  }
  return Status(StatusCode::kDataLoss, "malformed frame");  // not reached: decoded
}

Status TcpChannel::WaitForQueueSpace() {
  std::unique_lock lock(mu_);
  space_cv_.wait(lock, [this] {
    return !status_.ok() || queued_bytes_ <= kRecvQueueBytes ||
           (!pending_.empty() && queued_bytes_ <= kRecvQueueHardBytes);
  });
  return status_;
}

Status TcpChannel::Receive(void* buf, size_t len, size_t* got) {
  size_t heard_at = 0;  // bytes received when last heard
  return RecvExact(fd_.get(), buf, len, got, [&](size_t received) {
    auto now = std::chrono::steady_clock::now();
    if (received != heard_at) {
      heard_at = received;
      heard_ = now;
    }
    std::lock_guard lock(mu_);
    return aborted_.has_value() && now - heard_ >= kAbortQuiet;
  });
}

Status TcpChannel::ReadPayload(void* buf, size_t len) {
  Status read = Receive(buf, len);
  if (!read.ok() && IsEof(read)) {
    return Status::Unavailable("connection lost in a frame's payload: " + read.message());
  }
  return read;
}

StatusOr<std::string> TcpChannel::ReadText(uint64_t len) {
  std::string text(len, '\0');  // len <= kMaxReasonBytes: validated
  RDMAD_RETURN_IF_ERROR(ReadPayload(text.data(), text.size()));
  return SanitizePeerText(text);
}

Status TcpChannel::OnData(const FrameHeader& header) {
  std::vector<uint8_t> message;
  try {
    for (size_t done = 0; done < header.payload_len;) {
      size_t step = std::min<size_t>(header.payload_len - done, std::max(done, kFirstChunkBytes));
      message.resize(done + step);
      RDMAD_RETURN_IF_ERROR(ReadPayload(message.data() + done, step));
      done += step;
    }
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted("cannot allocate a message of " +
                                     std::to_string(header.payload_len) + " bytes");
  }
  {
    std::lock_guard lock(mu_);
    queued_bytes_ += message.size() + kQueuedMessageOverhead;
    queue_.push_back(std::move(message));
    signal_.Notify();
  }
  recv_cv_.notify_all();  // Recv and RecvNotification may both wait
  return Status::Ok();
}

Status TcpChannel::OnNotify(const FrameHeader& header) {
  std::vector<uint8_t> note(header.payload_len);  // at most kMaxNotificationBytes: decoded
  RDMAD_RETURN_IF_ERROR(ReadPayload(note.data(), note.size()));
  {
    std::lock_guard lock(mu_);
    notes_.push_back(std::move(note));
    signal_.Notify();
  }
  recv_cv_.notify_all();
  return Status::Ok();
}

Status TcpChannel::OnWrite(const FrameHeader& header) {
  RegionRegistry& registry = RegionRegistry::Global();
  Status access =
      registry.Check(tag_, header.region_id, header.arg, header.offset, header.payload_len);
  if (!access.ok()) return RefuseAccess(header, FrameType::kAck, access);
  if (bounce_.empty()) bounce_.resize(kBounceBytes);
  for (size_t done = 0; done < header.payload_len;) {
    size_t n = std::min<size_t>(header.payload_len - done, bounce_.size());
    RDMAD_RETURN_IF_ERROR(ReadPayload(bounce_.data(), n));
    access = registry.CopyIn(tag_, header.region_id, header.arg, header.offset + done,
                             bounce_.data(), n);
    if (!access.ok()) return RefuseAccess(header, FrameType::kAck, access);  // deregistered
    done += n;
  }
  return Reply(FrameType::kAck, header.request_id, Status::Ok());
}

Status TcpChannel::OnReadReq(const FrameHeader& header) {
  Status access = RegionRegistry::Global().Check(tag_, header.region_id, header.arg, header.offset,
                                                 header.read_len);
  if (!access.ok()) return RefuseAccess(header, FrameType::kReadResp, access);
  return SendReadResp(header);
}

// Streams the region out through the bounce buffer, holding the socket for
// the whole frame.
Status TcpChannel::SendReadResp(const FrameHeader& request) {
  RegionRegistry& registry = RegionRegistry::Global();
  FrameHeader header;
  header.type = FrameType::kReadResp;
  header.request_id = request.request_id;
  header.payload_len = request.read_len;
  RawFrameHeader raw = EncodeFrameHeader(header);
  if (bounce_.empty()) bounce_.resize(kBounceBytes);
  std::lock_guard lock(send_mu_);
  RDMAD_RETURN_IF_ERROR(SendAll(fd_.get(), raw.data(), raw.size()));
  for (size_t done = 0; done < request.read_len;) {
    size_t n = std::min<size_t>(request.read_len - done, bounce_.size());
    Status access = registry.CopyOut(tag_, request.region_id, request.arg, request.offset + done,
                                     bounce_.data(), n);
    // Deregistered mid-read: the frame cannot be finished, the channel ends.
    if (!access.ok()) return Status(access.code(), "remote access error: " + access.message());
    RDMAD_RETURN_IF_ERROR(SendAll(fd_.get(), bounce_.data(), n));
    done += n;
  }
  return Status::Ok();
}

// An ACK or READ_RESP for one of this side's Writes or Reads.
Status TcpChannel::OnAnswer(const FrameHeader& header) {
  const std::string type = FrameTypeName(static_cast<uint8_t>(header.type));
  PendingOp* op = nullptr;
  {
    std::lock_guard lock(mu_);
    auto it = pending_.find(header.request_id);
    if (it != pending_.end() && it->second->answer == header.type) op = it->second;
  }
  if (op == nullptr) {
    return Status(StatusCode::kDataLoss, "malformed " + type + " frame: no " +
                                             (header.type == FrameType::kAck ? "Write" : "Read") +
                                             " waits for request " +
                                             std::to_string(header.request_id));
  }
  if (header.arg != 0) {
    StatusOr<std::string> text = ReadText(header.payload_len);
    if (!text.ok()) return text.status();
    CompleteOp(header.request_id, Status(static_cast<StatusCode>(header.arg),
                                         "the peer refused the access: " + *text));
    return Status::Ok();
  }
  if (header.type == FrameType::kReadResp && header.payload_len != op->len) {
    return Status(StatusCode::kDataLoss,
                  "malformed READ_RESP frame: " + std::to_string(header.payload_len) +
                      " bytes for a Read of " + std::to_string(op->len));
  }
  if (header.payload_len > 0) RDMAD_RETURN_IF_ERROR(ReadPayload(op->dst, header.payload_len));
  CompleteOp(header.request_id, Status::Ok());
  return Status::Ok();
}

Status TcpChannel::OnClose(const FrameHeader& header) {
  StatusOr<std::string> reason = ReadText(header.payload_len);
  if (!reason.ok()) return reason.status();
  std::string why(kClosedByPeer);
  if (!reason->empty()) why += ": " + *reason;
  return Status::Unavailable(why);
}

Status TcpChannel::Reply(FrameType type, uint64_t request_id, const Status& status) {
  std::string text = status.message().substr(0, kMaxReasonBytes);
  FrameHeader header;
  header.type = type;
  header.arg = static_cast<uint32_t>(status.code());
  header.request_id = request_id;
  header.payload_len = status.ok() ? 0 : text.size();
  return SendFrame(header, text.data(), header.payload_len);
}

// Tells the peer why its access failed, then ends the channel (see the
// header: a remote access error is fatal, as on RDMA).
Status TcpChannel::RefuseAccess(const FrameHeader& header, FrameType reply, const Status& why) {
  // Best effort: the channel ends either way.
  Reply(reply, header.request_id, why).IgnoreError();
  return Status(why.code(),
                "remote access error: the peer's " + Describe(header) + ": " + why.message());
}

void TcpChannel::CompleteOp(uint64_t request_id, const Status& status) {
  {
    std::lock_guard lock(mu_);
    auto it = pending_.find(request_id);
    if (it == pending_.end()) return;
    it->second->status = status;
    it->second->done = true;
    pending_.erase(it);
  }
  op_cv_.notify_all();
}

// The channel is over: record why, tell the peer when the fault is ours to
// report, and fail every waiting call.
void TcpChannel::Finish(const Status& status) {
  Status final;
  {
    std::lock_guard lock(mu_);
    if (status_.ok()) status_ = aborted_ && !IsPeerClose(status) ? *aborted_ : status;
    final = status_;
    signal_.Notify();
  }
  bool local_fault =
      status.code() != StatusCode::kUnavailable && status.code() != StatusCode::kCancelled;
  if (local_fault && final == status) SendClose(status.ToString());
  shutdown(fd_.get(), SHUT_RDWR);
  {
    std::lock_guard lock(mu_);
    for (auto& [id, op] : pending_) {
      op->status = final;
      op->done = true;
    }
    pending_.clear();
  }
  recv_cv_.notify_all();
  space_cv_.notify_all();
  op_cv_.notify_all();
  const bool normal = final.code() == StatusCode::kCancelled || IsPeerClose(final);
  if (normal) {
    ClientLog().debug("TCP channel {} to {}: {}", info_.id, info_.tcp_peer, final.ToString());
  } else if (final.code() == StatusCode::kUnavailable) {
    ClientLog().info("TCP channel {} to {}: {}", info_.id, info_.tcp_peer, final.ToString());
  } else {
    ClientLog().warn("TCP channel {} to {}: {}", info_.id, info_.tcp_peer, final.ToString());
  }
}

}  // namespace rdmad::internal
