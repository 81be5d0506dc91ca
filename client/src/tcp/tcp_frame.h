// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The TCP channel's wire format: every frame is a fixed 48-byte header,
// little endian, followed by payload_len bytes.
//
//   offset size field
//        0    1 type         FrameType
//        1    1 version      kFrameVersion
//        2    2 reserved     0
//        4    4 arg          WRITE, READ_REQ: the region's key (rkey);
//                            ACK, READ_RESP, CLOSE: a StatusCode (0 = OK);
//                            DATA: 0
//        8    8 payload_len  bytes after the header
//       16    8 request_id   WRITE, READ_REQ: != 0, chosen by the sender;
//                            ACK, READ_RESP: the request's; else 0
//       24    8 region_id    WRITE, READ_REQ: the target region; else 0
//       32    8 offset       WRITE, READ_REQ: byte offset in it; else 0
//       40    8 read_len     READ_REQ: bytes to read; else 0
//
// Payloads: DATA one whole message (0..kMaxPayloadBytes); NOTIFY a batch's
// notification (1..kMaxNotificationBytes, sent after its ops completed, with
// the same header rules as DATA); WRITE the bytes to
// place at region_id[offset]; READ_RESP with arg 0 exactly read_len bytes of
// the request; ACK, READ_RESP with an error, and CLOSE carry ASCII text
// (<= kMaxReasonBytes): the error or the reason for closing ("" for a
// plain Close).
//
// Thread safety: plain values and pure functions.

#ifndef RDMAD_CLIENT_SRC_TCP_TCP_FRAME_H_
#define RDMAD_CLIENT_SRC_TCP_TCP_FRAME_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "rdmad/channel.h"
#include "rdmad/status.h"

namespace rdmad::internal {

enum class FrameType : uint8_t {
  kData = 1,
  kWrite = 2,
  kReadReq = 3,
  kReadResp = 4,
  kAck = 5,
  kClose = 6,
  kNotify = 7,
};

inline constexpr uint8_t kFrameVersion = 1;
inline constexpr size_t kFrameHeaderSize = 48;
// The largest DATA message, WRITE or READ; longer Writes and Reads are split.
inline constexpr uint64_t kMaxPayloadBytes = uint64_t{1} << 30;
// The largest error or close reason text.
inline constexpr uint64_t kMaxReasonBytes = 4096;

struct FrameHeader {
  FrameType type = FrameType::kData;
  uint32_t arg = 0;
  uint64_t payload_len = 0;
  uint64_t request_id = 0;
  uint64_t region_id = 0;
  uint64_t offset = 0;
  uint64_t read_len = 0;
};

using RawFrameHeader = std::array<uint8_t, kFrameHeaderSize>;

RawFrameHeader EncodeFrameHeader(const FrameHeader& header);

// Decodes and validates a header received from the peer: the type is known,
// the version is ours, reserved and unused fields are 0, lengths are within
// the limits above and offset + length does not overflow. DATA_LOSS naming
// the first violation otherwise.
StatusOr<FrameHeader> DecodeFrameHeader(const RawFrameHeader& raw);

// "DATA", "WRITE", ... or "type 0x7f".
std::string FrameTypeName(uint8_t type);

// Text from the peer made safe for logs and Status messages: printable
// ASCII kept, everything else replaced by '?', at most kMaxReasonBytes.
std::string SanitizePeerText(std::string_view text);

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_TCP_TCP_FRAME_H_
