// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/echo/echo_session.h"

#include <poll.h>

#include <memory>
#include <string>

#include "common/echo_protocol.h"
#include "common/echo_region.h"
#include "spdlog/spdlog.h"

namespace rdmad {
namespace {

using Steady = std::chrono::steady_clock;
using echo::RegionMemory;

std::vector<uint8_t> Text(const std::string& text) { return {text.begin(), text.end()}; }

Status SendAck(Channel& channel, const echo::Ack& ack) {
  std::vector<uint8_t> bytes = echo::EncodeAck(ack);
  return channel.Send(bytes.data(), bytes.size());
}

// Best effort after a refusal: the ack, then a short wait for the client
// to close, so that closing here does not cut the ack off on TCP.
void Refuse(Channel& channel, const Status& why, std::chrono::milliseconds linger) {
  if (!SendAck(channel, {why, {}}).ok()) return;
  auto deadline = Steady::now() + linger;
  while (Steady::now() < deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Steady::now());
    if (!channel.Recv(left).ok()) return;
  }
}

// Memory of bytes registered on channel for receiving (kLocal), or null
// (no memlock left: the caller receives into vectors).
struct LocalRegion {
  std::unique_ptr<RegionMemory> memory;
  std::unique_ptr<MemoryRegion> region;  // declared after memory: goes first
  void Reset() {
    region.reset();
    memory.reset();
  }
};
LocalRegion RegisterLocal(Channel& channel, size_t bytes) {
  LocalRegion r;
  auto mapped = RegionMemory::Map(bytes);
  if (!mapped.ok()) return r;
  auto registered = channel.RegisterMemory(mapped.value()->data(), bytes, MemoryAccess::kLocal);
  if (!registered.ok()) return r;
  r.memory = std::move(mapped).value();
  r.region = std::move(registered).value();
  return r;
}

// ECHO. With the client's longest message (longest > 0) each message is
// received into memory registered once and sent back from it, as SINK
// receives: no allocation per message. A longer message ends the session
// (OUT_OF_RANGE: its tail is gone).
Status ServeEcho(Channel& channel, uint64_t longest, EchoSessionResult* result) {
  RDMAD_RETURN_IF_ERROR(SendAck(channel, {Status::Ok(), Text("ECHO")}));
  LocalRegion local = longest > 0 ? RegisterLocal(channel, longest) : LocalRegion();
  for (;;) {
    if (local.region) {
      auto n = channel.RecvInto(*local.region, 0, longest, kForever);
      if (!n.ok()) return n.status();
      ++result->messages;
      result->bytes += *n;
      RDMAD_RETURN_IF_ERROR(channel.Send(*local.region, 0, *n));
      continue;
    }
    auto message = channel.Recv(kForever);
    if (!message.ok()) return message.status();
    ++result->messages;
    result->bytes += message->size();
    RDMAD_RETURN_IF_ERROR(channel.Send(message->data(), message->size()));
  }
}

// SINK receives into memory registered once, as an application that
// cares for speed does: a large message's pieces are read straight into
// it, no copy, no allocation. The buffer starts at kSinkStart and doubles
// (to kSinkMax) past a message that did not fit, which is counted with the
// bytes that did. Without a registration (no memlock left) it
// receives into new vectors.
constexpr size_t kSinkStart = size_t(1) << 20;
constexpr size_t kSinkMax = size_t(64) << 20;

Status ServeSink(Channel& channel, uint64_t every, EchoSessionResult* result) {
  RDMAD_RETURN_IF_ERROR(SendAck(channel, {Status::Ok(), Text("SINK")}));
  LocalRegion local;
  size_t size = kSinkStart;
  for (;;) {
    if (!local.region && size > 0) {
      local = RegisterLocal(channel, size);
      if (!local.region) size = 0;  // vectors from now on
    }
    if (local.region) {
      auto n = channel.RecvInto(*local.region, 0, size, kForever);
      if (!n.ok() && n.status().code() != StatusCode::kOutOfRange) return n.status();
      result->bytes += n.ok() ? *n : size;
      if (!n.ok() && size < kSinkMax) {  // too long: a larger buffer for the next
        local.Reset();
        size *= 2;
      }
    } else {
      auto message = channel.Recv(kForever);
      if (!message.ok()) return message.status();
      result->bytes += message->size();
    }
    ++result->messages;
    if (every == 0 || result->messages % every != 0) continue;
    std::vector<uint8_t> count = echo::EncodeCount(result->messages);
    RDMAD_RETURN_IF_ERROR(channel.Send(count.data(), count.size()));
  }
}

// REGION's traffic after the ack: messages are counted and dropped, and
// each notification (of a Submit) goes back as a message, so the client
// can time a batch to its notification. One thread serves both on the
// channel's completion fd; a transport without one only counts messages.
Status ServeRegionTraffic(Channel& channel, EchoSessionResult* result) {
  constexpr std::chrono::milliseconds kNow{0};
  auto fd = channel.CompletionFd();
  for (;;) {
    bool idle = true;
    auto message = channel.Recv(fd.ok() ? kNow : kForever);
    if (message.ok()) {
      ++result->messages;
      result->bytes += message->size();
      idle = false;
    } else if (message.status().code() != StatusCode::kDeadlineExceeded) {
      return message.status();
    }
    if (!fd.ok()) continue;  // messages only
    auto note = channel.RecvNotification(kNow);
    if (note.ok()) {
      ++result->notifications;
      RDMAD_RETURN_IF_ERROR(channel.Send(note->data(), note->size()));
      idle = false;
    } else if (note.status().code() != StatusCode::kDeadlineExceeded) {
      return note.status();
    }
    if (idle && channel.Arm()) {
      // A second's cap: Close from another thread ends the wait for sure.
      pollfd p{*fd, POLLIN, 0};
      poll(&p, 1, 1000);
    }
  }
}

// Registers the region, sends its descriptor and keeps it until the
// channel ends; the client's Writes and Reads need nothing from here.
Status ServeRegion(Channel& channel, uint64_t size, std::chrono::milliseconds linger,
                   EchoSessionResult* result) {
  auto memory = RegionMemory::Map(size);
  if (!memory.ok()) {
    Status why(memory.status().code(), std::string("REGION: ") + memory.status().message());
    Refuse(channel, why, linger);
    return why;
  }
  auto region = channel.RegisterMemory(memory.value()->data(), size);
  if (!region.ok()) {
    Status why(region.status().code(), "REGION: registering " + std::to_string(size) +
                                           " bytes: " + region.status().message());
    Refuse(channel, why, linger);
    return why;
  }
  spdlog::info("echo: channel {:#018x}: REGION of {} bytes registered (rkey {:#x})",
               channel.info().id, size, region.value()->descriptor().rkey);
  RDMAD_RETURN_IF_ERROR(SendAck(channel, {Status::Ok(), region.value()->descriptor().Serialize()}));
  return ServeRegionTraffic(channel, result);
}

Status Serve(Channel& channel, const EchoSessionOptions& options, EchoSessionResult* result) {
  auto first = channel.Recv(options.header_timeout);
  if (!first.ok()) {
    if (first.status().code() != StatusCode::kDeadlineExceeded) return first.status();
    Status why = Status::DeadlineExceeded("no echo header within " +
                                          std::to_string(options.header_timeout.count()) + " ms");
    Refuse(channel, why, options.refuse_linger);
    return why;
  }
  auto header = echo::DecodeHeader(first->data(), first->size());
  if (!header.ok()) {
    spdlog::warn("echo: channel {:#018x} from {}: refused: {}", channel.info().id,
                 channel.info().peer, header.status().message());
    Refuse(channel, header.status(), options.refuse_linger);
    return header.status();
  }
  spdlog::info("echo: channel {:#018x} from {}: mode {} (param {})", channel.info().id,
               channel.info().peer, echo::ModeName(uint16_t(header->mode)), header->param);
  switch (header->mode) {
    case echo::Mode::kEcho: return ServeEcho(channel, header->param, result);
    case echo::Mode::kSink: return ServeSink(channel, header->param, result);
    case echo::Mode::kRegion:
      return ServeRegion(channel, header->param, options.refuse_linger, result);
  }
  return Status::Internal("unreachable");
}

}  // namespace

EchoSessionResult ServeEchoChannel(Channel& channel, const EchoSessionOptions& options) {
  EchoSessionResult result;
  result.status = Serve(channel, options, &result);
  channel.Close();
  return result;
}

}  // namespace rdmad
