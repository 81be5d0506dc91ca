// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The control protocol of rdmad's built-in echo service ("rdmad.echo"),
// shared by the daemon (the server) and rdmactl (connect, ping, bench).
// Internal to the client library: not a public header.
//
// On a new channel the client's first message is a header, 16 bytes, little
// endian: magic "RDEC", u16 version (1), u16 mode, u64 param. The server
// answers with one ack message: magic "RDEA", u16 version, u16 status code
// (rdmad::StatusCode), then the payload: on OK the serialized
// RegionDescriptor (REGION) or a short text (ECHO, SINK); on an error, the
// error's message, after which the server closes the channel.
//
//   ECHO   (param: 0 or bytes)   every later message is sent back as is.
//                                With param, the longest message the client
//                                will send (at most kMaxRegionBytes), the
//                                server receives into memory registered once
//                                (RecvInto) instead of a new vector per
//                                message; a longer message ends the session.
//                                An older server ignores param.
//   SINK   (param: N)            messages are consumed; after every N of
//                                them (N > 0) the server sends the count so
//                                far as an 8-byte u64 (EncodeCount).
//   REGION (param: bytes)        the server registers a region of that size
//                                (at most kMaxRegionBytes) for the client's
//                                Write/Read and keeps it until the channel
//                                closes. Each notification of the client's
//                                batches (Channel::Submit) is sent back as
//                                a message, as is.
//
// Thread safety: pure functions over values, except Handshake, which uses
// the channel's sending and receiving sides (see rdmad/channel.h).

#ifndef RDMAD_COMMON_ECHO_PROTOCOL_H_
#define RDMAD_COMMON_ECHO_PROTOCOL_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "rdmad/channel.h"
#include "rdmad/status.h"

namespace rdmad::echo {

inline constexpr char kService[] = "rdmad.echo";
inline constexpr uint16_t kVersion = 1;
inline constexpr size_t kHeaderBytes = 16;
inline constexpr size_t kAckHeaderBytes = 8;
inline constexpr size_t kCountBytes = 8;
inline constexpr uint64_t kMaxRegionBytes = uint64_t(1) << 30;  // 1 GiB

enum class Mode : uint16_t { kEcho = 1, kSink = 2, kRegion = 3 };

// "ECHO", "SINK", "REGION"; "mode N" for others.
std::string ModeName(uint16_t mode);

struct Header {
  uint16_t version = kVersion;
  Mode mode = Mode::kEcho;
  uint64_t param = 0;
};

std::vector<uint8_t> EncodeHeader(const Header& header);

// The header of a message the server received. INVALID_ARGUMENT naming what
// is wrong (size, magic, mode, a REGION size of 0 or above
// kMaxRegionBytes, or an ECHO message above it); FAILED_PRECONDITION for another protocol version.
StatusOr<Header> DecodeHeader(const void* bytes, size_t size);

// The server's answer to a header.
struct Ack {
  Status status;                 // the server's verdict
  std::vector<uint8_t> payload;  // OK only: descriptor or text
};

std::vector<uint8_t> EncodeAck(const Ack& ack);

// INVALID_ARGUMENT for a message that is not an ack.
StatusOr<Ack> DecodeAck(const void* bytes, size_t size);

// SINK's running count.
std::vector<uint8_t> EncodeCount(uint64_t count);
StatusOr<uint64_t> DecodeCount(const void* bytes, size_t size);

// The client's side of the handshake: sends header, waits up to timeout for
// the ack and returns its payload, or the server's error status (its
// message prefixed "echo service: "), or the channel's.
StatusOr<std::vector<uint8_t>> Handshake(Channel& channel, const Header& header,
                                         std::chrono::milliseconds timeout);

// The payload clients send for sequence number seq: seq in the first 8
// bytes (when size >= 8), then a pattern that depends on seq and the
// offset, so a reply can be checked byte for byte and a late reply told
// from a corrupt one. The server does not look at it.
std::vector<uint8_t> PatternPayload(uint64_t seq, size_t size);

// The sequence number in a PatternPayload of at least 8 bytes.
uint64_t PayloadSequence(const std::vector<uint8_t>& payload);

}  // namespace rdmad::echo

#endif  // RDMAD_COMMON_ECHO_PROTOCOL_H_
