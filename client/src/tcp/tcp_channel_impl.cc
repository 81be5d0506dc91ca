// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// TcpChannel, the caller's side: Send, Recv, Write, Read, Close. The I/O
// thread is in tcp_channel_reader.cc.

#include "client/src/tcp/tcp_channel_impl.h"

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <system_error>
#include <utility>

#include "client/src/tcp/tcp_region.h"

namespace rdmad::internal {
namespace {

// How long Close() waits for a send in progress before it gives up on
// telling the peer and just shuts the socket down.
constexpr std::chrono::milliseconds kCloseSendWait{100};

std::string Range(uint64_t offset, uint64_t len) {
  return "[" + std::to_string(offset) + ", +" + std::to_string(len) + ")";
}

Status CheckRange(const char* what, uint64_t offset, uint64_t len, uint64_t size) {
  if (offset > size || len > size - offset) {
    return Status::OutOfRange(std::string(what) + " range " + Range(offset, len) +
                              " does not fit its " + std::to_string(size) + "-byte region");
  }
  return Status::Ok();
}

}  // namespace

void FifoSendLock::lock() {
  std::unique_lock lock(mu_);
  const uint64_t ticket = next_ticket_++;
  cv_.wait(lock, [&] { return serving_ == ticket; });
}

void FifoSendLock::unlock() {
  {
    std::lock_guard lock(mu_);
    ++serving_;
  }
  cv_.notify_all();
}

bool FifoSendLock::try_lock_for(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  if (!cv_.wait_for(lock, timeout, [this] { return serving_ == next_ticket_; })) return false;
  ++next_ticket_;
  return true;
}

StatusOr<std::unique_ptr<TcpChannel>> TcpChannel::Start(UniqueFd fd, ChannelInfo info) {
  info.transport = ChannelTransport::kTcp;
  info.tcp_local = LocalAddress(fd.get());
  info.tcp_peer = PeerAddress(fd.get());
  // The I/O thread's reads wake this often when nothing comes, to see
  // whether the daemon ended the channel (Abort) and the peer fell silent.
  timeval quiet{0, int(std::chrono::microseconds(kAbortQuiet).count())};
  if (setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &quiet, sizeof(quiet)) != 0) {
    return Status::FromErrno(errno, "SO_RCVTIMEO");
  }
  std::unique_ptr<TcpChannel> channel(new TcpChannel(std::move(fd), std::move(info)));
  try {
    channel->reader_ = std::thread([c = channel.get()] { c->ReaderMain(); });
  } catch (const std::system_error& e) {
    return Status::ResourceExhausted(std::string("cannot start the channel's I/O thread: ") +
                                     e.what());
  }
  return channel;
}

namespace {
std::atomic<uint64_t> next_tag{1};
}  // namespace

TcpChannel::TcpChannel(UniqueFd fd, ChannelInfo info)
    : info_(std::move(info)), tag_(next_tag.fetch_add(1)), fd_(std::move(fd)) {}

TcpChannel::~TcpChannel() {
  Close();
  RegionRegistry::Global().RemoveChannel(tag_);
}

Status TcpChannel::Send(const void* buf, size_t len) { return SendData("Send", buf, len, false); }

Status TcpChannel::TrySend(const void* buf, size_t len) {
  return SendData("TrySend", buf, len, /*without_waiting=*/true);
}

Status TcpChannel::SendData(const char* what, const void* buf, size_t len, bool without_waiting) {
  if (len > kMaxPayloadBytes) {
    return Status::InvalidArgument("a message of " + std::to_string(len) +
                                   " bytes exceeds the TCP channel's limit of " +
                                   std::to_string(kMaxPayloadBytes));
  }
  if (buf == nullptr && len > 0)
    return Status::InvalidArgument(std::string(what) + ": null buffer");
  RDMAD_RETURN_IF_ERROR(status());
  FrameHeader header;
  header.type = FrameType::kData;
  header.payload_len = len;
  return SendFrame(header, buf, len, without_waiting);
}

Status TcpChannel::Send(const MemoryRegion& region, size_t offset, size_t len) {
  if (region.data() == nullptr) {
    return Status::InvalidArgument("Send: a dmabuf region cannot be sent over TCP");
  }
  RDMAD_RETURN_IF_ERROR(CheckRange("Send", offset, len, region.size()));
  return Send(region.data() + offset, len);
}

StatusOr<std::vector<uint8_t>> TcpChannel::Recv(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  auto ready = [this] { return closed_locally_ || !queue_.empty() || !status_.ok(); };
  if (timeout.count() < 0) {
    recv_cv_.wait(lock, ready);
  } else if (!recv_cv_.wait_for(lock, timeout, ready)) {
    return Status::DeadlineExceeded("Recv: no message within " + std::to_string(timeout.count()) +
                                    " ms");
  }
  if (closed_locally_ || queue_.empty()) return status_;
  std::vector<uint8_t> message = std::move(queue_.front());
  queue_.pop_front();
  queued_bytes_ -= message.size() + kQueuedMessageOverhead;
  space_cv_.notify_all();
  return message;
}

StatusOr<std::unique_ptr<Transfer>> TcpChannel::Submit(const std::vector<TransferOp>& ops,
                                                       std::string_view notification) {
  RDMAD_RETURN_IF_ERROR(ValidateNotification(notification));
  uint64_t started = meter_ != nullptr ? MeterNowNs() : 0;
  auto transfer = Channel::Submit(ops, std::string_view());
  if (!transfer.ok()) return transfer;
  Status done;
  (*transfer)->Poll(&done);  // finished: the ops ran in Submit
  if (done.ok() && meter_ != nullptr) {
    meter_->Batch(BatchTotals::Of(ops));
    meter_->Completed(MeterNowNs() - started);
  }
  if (done.ok() && !notification.empty()) {
    FrameHeader header;
    header.type = FrameType::kNotify;
    header.payload_len = notification.size();
    Status sent = SendFrame(header, notification.data(), notification.size());
    if (!sent.ok()) return sent;
  }
  std::lock_guard lock(mu_);
  ++batches_done_;
  signal_.Notify();
  return transfer;
}

StatusOr<std::vector<uint8_t>> TcpChannel::RecvNotification(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  auto ready = [this] { return closed_locally_ || !notes_.empty() || !status_.ok(); };
  if (timeout.count() < 0) {
    recv_cv_.wait(lock, ready);
  } else if (!recv_cv_.wait_for(lock, timeout, ready)) {
    return Status::DeadlineExceeded("RecvNotification: none within " +
                                    std::to_string(timeout.count()) + " ms");
  }
  if (closed_locally_ || notes_.empty()) return status_;
  std::vector<uint8_t> note = std::move(notes_.front());
  notes_.pop_front();
  return note;
}

StatusOr<int> TcpChannel::CompletionFd() {
  std::lock_guard lock(mu_);
  return signal_.Open();
}

bool TcpChannel::Arm() {
  std::lock_guard lock(mu_);
  if (!signal_.open()) return false;
  bool pending =
      !status_.ok() || !queue_.empty() || !notes_.empty() || batches_done_ > 0 || closed_locally_;
  batches_done_ = 0;
  if (pending) return false;
  signal_.Armed();
  return true;
}

StatusOr<std::unique_ptr<MemoryRegion>> TcpChannel::RegisterMemory(void* addr, size_t len,
                                                                   MemoryAccess access) {
  if (addr == nullptr && len > 0) return Status::InvalidArgument("RegisterMemory: null address");
  return std::unique_ptr<MemoryRegion>(
      new TcpMemoryRegion(static_cast<uint8_t*>(addr), len, access));
}

StatusOr<RegionDescriptor> TcpChannel::Expose(const MemoryRegion& region, MemoryAccess access) {
  const auto* own = dynamic_cast<const TcpMemoryRegion*>(&region);
  if (own == nullptr) {
    return Status::InvalidArgument("Expose: the region was not registered by a TCP channel");
  }
  RDMAD_RETURN_IF_ERROR(CheckExposure(region, access));
  RDMAD_RETURN_IF_ERROR(status());
  auto exposed = RegionRegistry::Global().Expose(own->descriptor().address, tag_,
                                                 access == MemoryAccess::kReadWrite);
  if (!exposed.ok()) return exposed.status();
  std::lock_guard lock(exposed_mu_);
  exposed_.insert(exposed->address);
  return exposed;
}

Status TcpChannel::Revoke(const RegionDescriptor& exposed) {
  {
    std::lock_guard lock(exposed_mu_);
    if (exposed_.erase(exposed.address) == 0) {
      return Status::NotFound("Revoke: this channel has not exposed region " +
                              std::to_string(exposed.address));
    }
  }
  // Gone already when its region was.
  (void)RegionRegistry::Global().Revoke(exposed, tag_);
  return Status::Ok();
}

StatusOr<std::unique_ptr<MemoryRegion>> TcpChannel::RegisterDmabuf(int fd, uint64_t offset,
                                                                   size_t len) {
  return Status::Unimplemented("dmabuf needs an RDMA channel");
}

Status TcpChannel::Write(const MemoryRegion& local, size_t local_offset,
                         const RegionDescriptor& remote, uint64_t remote_offset, size_t len) {
  return RemoteAccess(FrameType::kWrite, local, local_offset, remote, remote_offset, len);
}

Status TcpChannel::Read(const MemoryRegion& local, size_t local_offset,
                        const RegionDescriptor& remote, uint64_t remote_offset, size_t len) {
  return RemoteAccess(FrameType::kReadReq, local, local_offset, remote, remote_offset, len);
}

// Checks both ranges, then moves the bytes in pieces of at most
// kMaxPayloadBytes, one round trip each.
Status TcpChannel::RemoteAccess(FrameType type, const MemoryRegion& local, size_t local_offset,
                                const RegionDescriptor& remote, uint64_t remote_offset,
                                size_t len) {
  const char* what = type == FrameType::kWrite ? "Write" : "Read";
  if (local.data() == nullptr) {
    return Status::InvalidArgument(std::string(what) + ": a dmabuf region needs an RDMA channel");
  }
  RDMAD_RETURN_IF_ERROR(
      CheckRange((std::string(what) + ": local").c_str(), local_offset, len, local.size()));
  RDMAD_RETURN_IF_ERROR(
      CheckRange((std::string(what) + ": remote").c_str(), remote_offset, len, remote.length));
  RDMAD_RETURN_IF_ERROR(status());
  for (size_t done = 0; done < len;) {
    size_t n = std::min<size_t>(len - done, kMaxPayloadBytes);
    FrameHeader header;
    header.type = type;
    header.arg = remote.rkey;
    header.region_id = remote.address;
    header.offset = remote_offset + done;
    uint8_t* mine = local.data() + local_offset + done;
    if (type == FrameType::kWrite) {
      header.payload_len = n;
      RDMAD_RETURN_IF_ERROR(RoundTrip(header, mine, nullptr, n));
    } else {
      header.read_len = n;
      RDMAD_RETURN_IF_ERROR(RoundTrip(header, nullptr, mine, n));
    }
    done += n;
  }
  return Status::Ok();
}

// Registers the op before sending, so that the answer always finds it; the
// I/O thread completes it, also when the channel fails.
Status TcpChannel::RoundTrip(FrameHeader header, const void* payload, uint8_t* dst, size_t len) {
  PendingOp op;
  op.answer = header.type == FrameType::kWrite ? FrameType::kAck : FrameType::kReadResp;
  op.dst = dst;
  op.len = len;
  {
    std::lock_guard lock(mu_);
    if (!status_.ok()) return status_;
    if (aborted_) return *aborted_;
    header.request_id = next_request_id_++;
    pending_[header.request_id] = &op;
  }
  space_cv_.notify_all();  // the I/O thread may now read past the queue limit
  Status sent = SendFrame(header, payload, header.payload_len);
  std::unique_lock lock(mu_);
  op_cv_.wait(lock, [&op] { return op.done; });
  return sent.ok() ? op.status : sent;
}

Status TcpChannel::SendFrame(const FrameHeader& header, const void* payload, size_t len,
                             bool without_waiting) {
  RawFrameHeader raw = EncodeFrameHeader(header);
  iovec iov[2] = {{raw.data(), raw.size()}, {const_cast<void*>(payload), len}};
  Status sent;
  {
    std::lock_guard lock(send_mu_);
    if (without_waiting && !SendBufferHasRoom(raw.size() + len)) {
      return Status::DeadlineExceeded("TrySend: the socket's send buffer is full");
    }
    sent = SendAll(fd_.get(), iov, len > 0 ? 2 : 1);
  }
  if (sent.ok()) return sent;
  Fail(sent);
  return status();  // the first error: CANCELLED after Close, "closed by peer", ...
}

// The kernel counts what waits in the send buffer with its overhead
// (SO_SNDBUF reports twice the payload it holds): bytes go without waiting
// when twice them fit beside twice what is queued. send_mu_ held.
bool TcpChannel::SendBufferHasRoom(size_t bytes) const {
  int sndbuf = 0;
  int queued = 0;
  socklen_t size = sizeof(sndbuf);
  return getsockopt(fd_.get(), SOL_SOCKET, SO_SNDBUF, &sndbuf, &size) == 0 &&
         ioctl(fd_.get(), SIOCOUTQ, &queued) == 0 &&
         2 * (uint64_t(queued) + bytes) <= uint64_t(sndbuf);
}

Status TcpChannel::status() const {
  std::lock_guard lock(mu_);
  return status_;
}

void TcpChannel::Fail(const Status& status) {
  {
    std::lock_guard lock(mu_);
    if (status_.ok()) status_ = aborted_ ? *aborted_ : status;  // a send after Abort
    signal_.Notify();
  }
  recv_cv_.notify_all();
  space_cv_.notify_all();
  shutdown(fd_.get(), SHUT_RDWR);
}

// The daemon's word can overtake the peer's last frames on the data path
// (a peer that sends, then closes: its frames may still wait behind what
// this application has not taken yet): the I/O thread still takes every
// frame the peer sends, up to its CLOSE, and the channel ends with the
// peer's CLOSE if it comes, else with status once the peer has been silent
// for kAbortQuiet (Receive). The socket is not shut down here: that would
// end the reading at the bytes that happen to have arrived.
void TcpChannel::Abort(const Status& status) {
  std::lock_guard lock(mu_);
  if (!status_.ok() || aborted_) return;  // closed here, failed, or the peer's CLOSE came
  aborted_ = status;
}

void TcpChannel::Close() {
  std::call_once(close_once_, [this] { CloseOnce(); });
}

void TcpChannel::CloseOnce() {
  bool tell_peer = false;
  {
    std::lock_guard lock(mu_);
    tell_peer = status_.ok();
    if (status_.ok()) status_ = Status::Cancelled("channel closed");
    closed_locally_ = true;
    signal_.Notify();
  }
  recv_cv_.notify_all();
  space_cv_.notify_all();
  if (tell_peer) SendClose("");
  shutdown(fd_.get(), SHUT_RDWR);
  if (reader_.joinable()) reader_.join();
}

// Best effort: skipped when a send holds the socket for too long, and waits
// at most kCloseSendWait for room in the socket buffer (a CLOSE dropped on
// EAGAIN, a full buffer or a kernel short of socket memory on a loaded
// host, leaves the peer seeing the connection end "without CLOSE").
void TcpChannel::SendClose(const std::string& reason) {
  auto deadline = Clock::now() + kCloseSendWait;
  std::unique_lock lock(send_mu_, std::defer_lock);
  if (!lock.try_lock_for(kCloseSendWait)) return;
  std::string text = reason.substr(0, kMaxReasonBytes);
  FrameHeader header;
  header.type = FrameType::kClose;
  header.payload_len = text.size();
  RawFrameHeader raw = EncodeFrameHeader(header);
  iovec iov[2] = {{raw.data(), raw.size()}, {text.data(), text.size()}};
  // The peer that cannot be told learns of the close from the connection.
  SendAllBefore(fd_.get(), iov, text.empty() ? 1 : 2, deadline).IgnoreError();
}

}  // namespace rdmad::internal
