// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "rdmad/channel.h"

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "client/src/abortable_channel.h"
#include "client/src/recv_into.h"

namespace rdmad {
namespace {

// Serialized descriptor: address (8), length (8), rkey (4), reserved (4),
// each little endian.
constexpr size_t kDescriptorBytes = 24;
constexpr size_t kRailKeyBytes = 8;
constexpr size_t kMaxRailKeys = 7;

void Put(uint8_t* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t Get(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A transfer that finished within Submit.
class DoneTransfer final : public Transfer {
 public:
  DoneTransfer(Status status, int failed_op) : status_(std::move(status)), failed_op_(failed_op) {}
  Status Wait(std::chrono::milliseconds) override { return status_; }
  bool Poll(Status* status) override {
    if (status != nullptr) *status = status_;
    return true;
  }
  int failed_op() const override { return failed_op_; }

 private:
  const Status status_;
  const int failed_op_;
};

// Channel::Prepare's default: each Post is a Submit of the ops it kept.
class SubmittingTransfer final : public PreparedTransfer {
 public:
  SubmittingTransfer(Channel* channel, std::vector<TransferOp> ops)
      : channel_(channel), ops_(std::move(ops)) {}
  using PreparedTransfer::Post;
  Status Post(std::string_view notification) override {
    if (last_ != nullptr && !last_->Poll()) {
      return internal::StillInFlight();
    }
    RDMAD_RETURN_IF_ERROR(ValidateNotification(notification));
    auto started = channel_->Submit(ops_, notification);
    if (!started.ok()) {  // nothing started: Wait says why
      last_ = std::make_unique<DoneTransfer>(started.status(), -1);
      return started.status();
    }
    last_ = std::move(started).value();
    return Status::Ok();
  }
  Status Wait(std::chrono::milliseconds timeout) override {
    return last_ == nullptr ? internal::NotPosted() : last_->Wait(timeout);
  }
  bool Poll(Status* status) override {
    if (last_ != nullptr) return last_->Poll(status);
    if (status != nullptr) *status = internal::NotPosted();
    return true;
  }
  int failed_op() const override { return last_ == nullptr ? -1 : last_->failed_op(); }

 private:
  Channel* const channel_;
  const std::vector<TransferOp> ops_;
  std::unique_ptr<Transfer> last_;
};

std::string Range(uint64_t offset, uint64_t len) {
  return "[" + std::to_string(offset) + ", " + std::to_string(offset) + " + " +
         std::to_string(len) + ")";
}

}  // namespace

Status ValidateTransferOps(const std::vector<TransferOp>& ops) {
  for (size_t i = 0; i < ops.size(); ++i) {
    const TransferOp& op = ops[i];
    std::string what = "op " + std::to_string(i) + ": ";
    if (op.local == nullptr) return Status::InvalidArgument(what + "no local region");
    if (op.local_offset > op.local->size() || op.len > op.local->size() - op.local_offset) {
      return Status::OutOfRange(what + "local range " + Range(op.local_offset, op.len) +
                                " exceeds the region's " + std::to_string(op.local->size()) +
                                " bytes");
    }
    if (op.remote_offset > op.remote.length || op.len > op.remote.length - op.remote_offset) {
      return Status::OutOfRange(what + "remote range " + Range(op.remote_offset, op.len) +
                                " exceeds the remote region's " + std::to_string(op.remote.length) +
                                " bytes");
    }
  }
  return Status::Ok();
}

namespace internal {

Status NotPosted() { return Status::FailedPrecondition("the prepared transfer was never posted"); }

Status StillInFlight() {
  return Status::FailedPrecondition("Post: the transfer's last Post is still in flight");
}

Status AbortableChannel::CheckExposure(const MemoryRegion& region, MemoryAccess access) {
  if (access == MemoryAccess::kLocal) {
    return Status::InvalidArgument("Expose: the access shown must be kReadWrite or kRemoteRead");
  }
  if (region.access() == MemoryAccess::kRemoteRead && access == MemoryAccess::kReadWrite) {
    return Status::InvalidArgument(
        "Expose: the region is registered for remote read only (MemoryAccess::kRemoteRead)");
  }
  return Status::Ok();
}

}  // namespace internal

Status ValidateNotification(std::string_view notification) {
  if (notification.size() > kMaxNotificationBytes) {
    return Status::InvalidArgument("notification: " + std::to_string(notification.size()) +
                                   " bytes, at most " + std::to_string(kMaxNotificationBytes));
  }
  return Status::Ok();
}

StatusOr<std::vector<uint8_t>> Channel::RecvNotification(std::chrono::milliseconds) {
  return Status::Unimplemented("this channel has no notifications");
}

StatusOr<size_t> Channel::RecvInto(const MemoryRegion& region, size_t offset, size_t max_len,
                                   std::chrono::milliseconds timeout) {
  RDMAD_RETURN_IF_ERROR(internal::CheckRecvInto(region, offset, max_len));
  auto message = Recv(timeout);
  if (!message.ok()) return message.status();
  std::memcpy(region.data() + offset, message->data(), std::min(message->size(), max_len));
  if (message->size() > max_len) return internal::RecvIntoTooLong(message->size(), max_len);
  return message->size();
}

StatusOr<int> Channel::CompletionFd() {
  return Status::Unimplemented("this channel has no completion fd");
}

bool Channel::Arm() { return false; }

StatusOr<std::unique_ptr<Transfer>> Channel::Submit(const std::vector<TransferOp>& ops,
                                                    std::string_view notification) {
  RDMAD_RETURN_IF_ERROR(ValidateTransferOps(ops));
  RDMAD_RETURN_IF_ERROR(ValidateNotification(notification));
  if (!notification.empty()) {
    return Status::Unimplemented("this channel cannot send notifications");
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    const TransferOp& op = ops[i];
    Status done = op.kind == TransferOp::Kind::kWrite
                      ? Write(*op.local, op.local_offset, op.remote, op.remote_offset, op.len)
                      : Read(*op.local, op.local_offset, op.remote, op.remote_offset, op.len);
    if (!done.ok()) return std::unique_ptr<Transfer>(new DoneTransfer(done, int(i)));
  }
  return std::unique_ptr<Transfer>(new DoneTransfer(Status::Ok(), -1));
}

StatusOr<std::unique_ptr<PreparedTransfer>> Channel::Prepare(const std::vector<TransferOp>& ops) {
  RDMAD_RETURN_IF_ERROR(ValidateTransferOps(ops));
  return std::unique_ptr<PreparedTransfer>(new SubmittingTransfer(this, ops));
}

const char* ChannelTransportName(ChannelTransport transport) {
  switch (transport) {
    case ChannelTransport::kRdma: return "RDMA";
    case ChannelTransport::kTcp: return "TCP";
  }
  return "unknown";
}

Status Channel::TrySend(const void* buf, size_t len) {
  return Status::Unimplemented("TrySend: this channel cannot send without waiting");
}

std::string FormatChannelId(uint64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%016" PRIx64, id);
  return buf;
}

StatusOr<uint64_t> ParseChannelId(std::string_view text) {
  std::string_view digits = text;
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    digits.remove_prefix(2);
    base = 16;
  } else if (digits.find_first_not_of("0123456789") != std::string_view::npos) {
    base = 16;  // hex digits without "0x"
  }
  uint64_t id = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id, base);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || id == 0) {
    return Status::InvalidArgument("not a channel id: \"" + std::string(text.substr(0, 64)) +
                                   "\" (0x and hex digits, as rdmactl channels shows, or decimal)");
  }
  return id;
}

std::vector<uint8_t> RegionDescriptor::Serialize() const {
  std::vector<uint8_t> out(kDescriptorBytes + kRailKeyBytes * rail_keys.size());
  Put(out.data(), address, 8);
  Put(out.data() + 8, length, 8);
  Put(out.data() + 16, rkey, 4);
  Put(out.data() + 20, reserved, 4);
  for (size_t i = 0; i < rail_keys.size(); ++i) {
    uint8_t* p = out.data() + kDescriptorBytes + kRailKeyBytes * i;
    Put(p, rail_keys[i].device_tag, 4);
    Put(p + 4, rail_keys[i].rkey, 4);
  }
  return out;
}

StatusOr<RegionDescriptor> RegionDescriptor::Parse(const void* bytes, size_t size) {
  if (bytes == nullptr || size < kDescriptorBytes ||
      (size - kDescriptorBytes) % kRailKeyBytes != 0 ||
      size > kDescriptorBytes + kRailKeyBytes * kMaxRailKeys) {
    return Status::InvalidArgument(
        "region descriptor: expected 24 bytes and 8 per rail key (at most " +
        std::to_string(kMaxRailKeys) + "), got " + std::to_string(bytes == nullptr ? 0 : size));
  }
  const auto* p = static_cast<const uint8_t*>(bytes);
  RegionDescriptor d;
  d.address = Get(p, 8);
  d.length = Get(p + 8, 8);
  d.rkey = static_cast<uint32_t>(Get(p + 16, 4));
  d.reserved = static_cast<uint32_t>(Get(p + 20, 4));
  if (d.reserved != 0) return Status::InvalidArgument("region descriptor: reserved field is not 0");
  if (d.address + d.length < d.address) {
    return Status::InvalidArgument("region descriptor: address + length overflows 64 bits");
  }
  for (size_t at = kDescriptorBytes; at < size; at += kRailKeyBytes) {
    RailKey key;
    key.device_tag = static_cast<uint32_t>(Get(p + at, 4));
    key.rkey = static_cast<uint32_t>(Get(p + at + 4, 4));
    if (key.device_tag == 0)
      return Status::InvalidArgument("region descriptor: rail key for device tag 0");
    for (const RailKey& seen : d.rail_keys) {
      if (seen.device_tag == key.device_tag) {
        return Status::InvalidArgument("region descriptor: two rail keys for one device");
      }
    }
    d.rail_keys.push_back(key);
  }
  return d;
}

namespace internal {

Status RecvIntoOutOfRange(size_t offset, size_t max_len, size_t region_size) {
  return Status::OutOfRange("RecvInto: " + Range(offset, max_len) + " exceeds the region's " +
                            std::to_string(region_size) + " bytes");
}

Status RecvIntoNoHostAddress() {
  return Status::InvalidArgument("RecvInto: the region has no host address (dmabuf)");
}

Status RecvIntoTooLong(size_t size, size_t max_len) {
  return Status::OutOfRange("RecvInto: a message of " + std::to_string(size) +
                            " bytes does not fit max_len " + std::to_string(max_len) +
                            "; its first " + std::to_string(max_len) + " bytes were kept");
}

}  // namespace internal

}  // namespace rdmad
