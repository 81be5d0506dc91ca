// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/echo_protocol.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace rdmad::echo {
namespace {

constexpr char kHeaderMagic[4] = {'R', 'D', 'E', 'C'};
constexpr char kAckMagic[4] = {'R', 'D', 'E', 'A'};

void Put(uint8_t* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = uint8_t(v >> (8 * i));
}

uint64_t Get(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The four magic bytes as text, with non-printable bytes as \xNN.
std::string Printable(const uint8_t* p, size_t n) {
  std::string text;
  for (size_t i = 0; i < n; ++i) {
    if (p[i] >= 0x20 && p[i] < 0x7f) {
      text += char(p[i]);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", p[i]);
      text += hex;
    }
  }
  return text;
}

Status CheckParam(Mode mode, uint64_t param) {
  if (mode == Mode::kSink) return Status::Ok();
  if (mode == Mode::kRegion && param == 0) {
    return Status::InvalidArgument("echo header: REGION of 0 bytes");
  }
  if (param > kMaxRegionBytes) {
    return Status::InvalidArgument("echo header: " + ModeName(uint16_t(mode)) + " of " +
                                   std::to_string(param) +
                                   " bytes is above the echo service's cap of " +
                                   std::to_string(kMaxRegionBytes) + " bytes (1 GiB)");
  }
  return Status::Ok();
}

}  // namespace

std::string ModeName(uint16_t mode) {
  switch (Mode(mode)) {
    case Mode::kEcho: return "ECHO";
    case Mode::kSink: return "SINK";
    case Mode::kRegion: return "REGION";
  }
  return "mode " + std::to_string(mode);
}

std::vector<uint8_t> EncodeHeader(const Header& header) {
  std::vector<uint8_t> out(kHeaderBytes);
  std::memcpy(out.data(), kHeaderMagic, 4);
  Put(out.data() + 4, header.version, 2);
  Put(out.data() + 6, uint16_t(header.mode), 2);
  Put(out.data() + 8, header.param, 8);
  return out;
}

StatusOr<Header> DecodeHeader(const void* bytes, size_t size) {
  const auto* p = static_cast<const uint8_t*>(bytes);
  if (p == nullptr || size < 8) {
    return Status::InvalidArgument("echo header: " + std::to_string(size) + " bytes, expected " +
                                   std::to_string(kHeaderBytes));
  }
  if (std::memcmp(p, kHeaderMagic, 4) != 0) {
    return Status::InvalidArgument("echo header: bad magic \"" + Printable(p, 4) +
                                   "\", expected \"RDEC\"");
  }
  Header h;
  h.version = uint16_t(Get(p + 4, 2));
  if (h.version != kVersion) {
    return Status::FailedPrecondition("echo header: protocol version " + std::to_string(h.version) +
                                      ", this rdmad speaks " + std::to_string(kVersion));
  }
  if (size != kHeaderBytes) {
    return Status::InvalidArgument("echo header: " + std::to_string(size) + " bytes, expected " +
                                   std::to_string(kHeaderBytes));
  }
  uint16_t mode = uint16_t(Get(p + 6, 2));
  if (mode < uint16_t(Mode::kEcho) || mode > uint16_t(Mode::kRegion)) {
    return Status::InvalidArgument("echo header: unknown mode " + std::to_string(mode) +
                                   " (1 ECHO, 2 SINK, 3 REGION)");
  }
  h.mode = Mode(mode);
  h.param = Get(p + 8, 8);
  RDMAD_RETURN_IF_ERROR(CheckParam(h.mode, h.param));
  return h;
}

std::vector<uint8_t> EncodeAck(const Ack& ack) {
  const std::string& text = ack.status.message();
  size_t extra = ack.status.ok() ? ack.payload.size() : text.size();
  std::vector<uint8_t> out(kAckHeaderBytes + extra);
  std::memcpy(out.data(), kAckMagic, 4);
  Put(out.data() + 4, kVersion, 2);
  Put(out.data() + 6, uint16_t(ack.status.code()), 2);
  if (ack.status.ok()) {
    std::copy(ack.payload.begin(), ack.payload.end(), out.begin() + kAckHeaderBytes);
  } else {
    std::memcpy(out.data() + kAckHeaderBytes, text.data(), text.size());
  }
  return out;
}

StatusOr<Ack> DecodeAck(const void* bytes, size_t size) {
  const auto* p = static_cast<const uint8_t*>(bytes);
  if (p == nullptr || size < kAckHeaderBytes || std::memcmp(p, kAckMagic, 4) != 0) {
    return Status::InvalidArgument("echo ack: not an echo service ack (" + std::to_string(size) +
                                   " bytes)");
  }
  uint16_t code = uint16_t(Get(p + 6, 2));
  if (code > uint16_t(StatusCode::kDataLoss)) {
    return Status::InvalidArgument("echo ack: unknown status code " + std::to_string(code));
  }
  Ack ack;
  const uint8_t* rest = p + kAckHeaderBytes;
  size_t rest_size = size - kAckHeaderBytes;
  if (code == 0) {
    ack.payload.assign(rest, rest + rest_size);
  } else {
    ack.status =
        Status(StatusCode(code), std::string(reinterpret_cast<const char*>(rest), rest_size));
  }
  return ack;
}

std::vector<uint8_t> EncodeCount(uint64_t count) {
  std::vector<uint8_t> out(kCountBytes);
  Put(out.data(), count, 8);
  return out;
}

StatusOr<uint64_t> DecodeCount(const void* bytes, size_t size) {
  if (bytes == nullptr || size != kCountBytes) {
    return Status::InvalidArgument("echo count: " + std::to_string(size) + " bytes, expected 8");
  }
  return Get(static_cast<const uint8_t*>(bytes), 8);
}

StatusOr<std::vector<uint8_t>> Handshake(Channel& channel, const Header& header,
                                         std::chrono::milliseconds timeout) {
  std::vector<uint8_t> bytes = EncodeHeader(header);
  RDMAD_RETURN_IF_ERROR(channel.Send(bytes.data(), bytes.size()));
  auto reply = channel.Recv(timeout);
  if (!reply.ok()) return reply.status();
  auto ack = DecodeAck(reply->data(), reply->size());
  if (!ack.ok()) return ack.status();
  if (!ack->status.ok()) {
    return Status(ack->status.code(), "echo service: " + ack->status.message());
  }
  return std::move(ack->payload);
}

std::vector<uint8_t> PatternPayload(uint64_t seq, size_t size) {
  std::vector<uint8_t> out(size);
  size_t start = 0;
  if (size >= 8) {
    Put(out.data(), seq, 8);
    start = 8;
  }
  for (size_t i = start; i < size; ++i) out[i] = uint8_t(seq * 131 + i * 7 + (i >> 8));
  return out;
}

uint64_t PayloadSequence(const std::vector<uint8_t>& payload) {
  return payload.size() >= 8 ? Get(payload.data(), 8) : 0;
}

}  // namespace rdmad::echo
