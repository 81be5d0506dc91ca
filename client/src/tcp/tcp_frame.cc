// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "client/src/tcp/tcp_frame.h"

#include <cstdio>

namespace rdmad::internal {
namespace {

constexpr uint32_t kMaxStatusCode = static_cast<uint32_t>(StatusCode::kDataLoss);

void Put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

void Put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint32_t Get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint64_t Get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

Status Bad(const FrameHeader& h, const std::string& what) {
  return Status(StatusCode::kDataLoss,
                "malformed " + FrameTypeName(static_cast<uint8_t>(h.type)) + " frame: " + what);
}

// The fields only WRITE and READ_REQ use must be 0 in other frames.
Status CheckNoTarget(const FrameHeader& h) {
  if (h.region_id != 0 || h.offset != 0 || h.read_len != 0) {
    return Bad(h, "region_id, offset and read_len must be 0");
  }
  return Status::Ok();
}

Status CheckPayload(const FrameHeader& h, uint64_t limit) {
  if (h.payload_len > limit) {
    return Bad(h, "payload of " + std::to_string(h.payload_len) + " bytes exceeds the limit of " +
                      std::to_string(limit));
  }
  return Status::Ok();
}

Status CheckStatusCode(const FrameHeader& h) {
  if (h.arg > kMaxStatusCode) return Bad(h, "unknown status code " + std::to_string(h.arg));
  return Status::Ok();
}

Status CheckRequestId(const FrameHeader& h) {
  if (h.request_id == 0) return Bad(h, "request_id 0");
  return Status::Ok();
}

Status CheckRange(const FrameHeader& h, uint64_t len) {
  if (h.offset > UINT64_MAX - len) return Bad(h, "offset + length overflows");
  return Status::Ok();
}

Status ValidateData(const FrameHeader& h) {
  if (h.arg != 0 || h.request_id != 0) return Bad(h, "arg and request_id must be 0");
  RDMAD_RETURN_IF_ERROR(CheckNoTarget(h));
  return CheckPayload(h, kMaxPayloadBytes);
}

Status ValidateNotify(const FrameHeader& h) {
  if (h.arg != 0 || h.request_id != 0) return Bad(h, "arg and request_id must be 0");
  RDMAD_RETURN_IF_ERROR(CheckNoTarget(h));
  return CheckPayload(h, rdmad::kMaxNotificationBytes);
}

Status ValidateWrite(const FrameHeader& h) {
  RDMAD_RETURN_IF_ERROR(CheckRequestId(h));
  if (h.read_len != 0) return Bad(h, "read_len must be 0");
  RDMAD_RETURN_IF_ERROR(CheckPayload(h, kMaxPayloadBytes));
  return CheckRange(h, h.payload_len);
}

Status ValidateReadReq(const FrameHeader& h) {
  RDMAD_RETURN_IF_ERROR(CheckRequestId(h));
  RDMAD_RETURN_IF_ERROR(CheckPayload(h, 0));
  if (h.read_len > kMaxPayloadBytes) {
    return Bad(h, "read_len " + std::to_string(h.read_len) + " exceeds the limit");
  }
  return CheckRange(h, h.read_len);
}

Status ValidateReadResp(const FrameHeader& h) {
  RDMAD_RETURN_IF_ERROR(CheckRequestId(h));
  RDMAD_RETURN_IF_ERROR(CheckNoTarget(h));
  RDMAD_RETURN_IF_ERROR(CheckStatusCode(h));
  return CheckPayload(h, h.arg == 0 ? kMaxPayloadBytes : kMaxReasonBytes);
}

Status ValidateAck(const FrameHeader& h) {
  RDMAD_RETURN_IF_ERROR(CheckRequestId(h));
  RDMAD_RETURN_IF_ERROR(CheckNoTarget(h));
  RDMAD_RETURN_IF_ERROR(CheckStatusCode(h));
  return CheckPayload(h, h.arg == 0 ? 0 : kMaxReasonBytes);
}

Status ValidateClose(const FrameHeader& h) {
  if (h.request_id != 0) return Bad(h, "request_id must be 0");
  RDMAD_RETURN_IF_ERROR(CheckNoTarget(h));
  RDMAD_RETURN_IF_ERROR(CheckStatusCode(h));
  return CheckPayload(h, kMaxReasonBytes);
}

}  // namespace

RawFrameHeader EncodeFrameHeader(const FrameHeader& header) {
  RawFrameHeader raw{};
  raw[0] = static_cast<uint8_t>(header.type);
  raw[1] = kFrameVersion;
  Put32(&raw[4], header.arg);
  Put64(&raw[8], header.payload_len);
  Put64(&raw[16], header.request_id);
  Put64(&raw[24], header.region_id);
  Put64(&raw[32], header.offset);
  Put64(&raw[40], header.read_len);
  return raw;
}

StatusOr<FrameHeader> DecodeFrameHeader(const RawFrameHeader& raw) {
  if (raw[1] != kFrameVersion) {
    return Status(StatusCode::kDataLoss, "malformed frame: version " + std::to_string(raw[1]) +
                                             ", expected " + std::to_string(kFrameVersion));
  }
  if (raw[2] != 0 || raw[3] != 0) {
    return Status(StatusCode::kDataLoss, "malformed frame: reserved bytes are not 0");
  }
  FrameHeader h;
  h.type = static_cast<FrameType>(raw[0]);
  h.arg = Get32(&raw[4]);
  h.payload_len = Get64(&raw[8]);
  h.request_id = Get64(&raw[16]);
  h.region_id = Get64(&raw[24]);
  h.offset = Get64(&raw[32]);
  h.read_len = Get64(&raw[40]);
  Status status;
  switch (h.type) {
    case FrameType::kData: status = ValidateData(h); break;
    case FrameType::kWrite: status = ValidateWrite(h); break;
    case FrameType::kReadReq: status = ValidateReadReq(h); break;
    case FrameType::kReadResp: status = ValidateReadResp(h); break;
    case FrameType::kAck: status = ValidateAck(h); break;
    case FrameType::kClose: status = ValidateClose(h); break;
    case FrameType::kNotify: status = ValidateNotify(h); break;
    default:
      return Status(StatusCode::kDataLoss, "malformed frame: unknown " + FrameTypeName(raw[0]));
  }
  if (!status.ok()) return status;
  return h;
}

std::string FrameTypeName(uint8_t type) {
  switch (static_cast<FrameType>(type)) {
    case FrameType::kData: return "DATA";
    case FrameType::kWrite: return "WRITE";
    case FrameType::kReadReq: return "READ_REQ";
    case FrameType::kReadResp: return "READ_RESP";
    case FrameType::kAck: return "ACK";
    case FrameType::kClose: return "CLOSE";
    case FrameType::kNotify: return "NOTIFY";
  }
  char buf[16];
  std::snprintf(buf, sizeof(buf), "type 0x%02x", type);
  return buf;
}

std::string SanitizePeerText(std::string_view text) {
  std::string out(text.substr(0, kMaxReasonBytes));
  for (char& c : out) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return out;
}

}  // namespace rdmad::internal
