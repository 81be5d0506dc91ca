// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// Fuzz target: what a remote application sends on a channel that the
// daemon reads itself, in its built-in echo service (daemon/echo): the echo
// header and its replies (DecodeHeader, DecodeAck, DecodeCount), and the
// decoders of the channels' own wire under it (a TCP frame header, an RDMA
// message's immediate data, a region descriptor, a peer's reason text). The
// bytes go to every decoder; what one accepts must encode back to the same
// bytes.

#include <array>
#include <cstring>

#include "client/src/rdma/wire.h"
#include "client/src/tcp/tcp_frame.h"
#include "common/echo_protocol.h"
#include "rdmad/channel.h"
#include "tests/fuzz/fuzz_support.h"

using namespace rdmad;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::FuzzInit();
  std::vector<uint8_t> bytes(data, data + size);

  StatusOr<echo::Header> header = echo::DecodeHeader(data, size);
  fuzz::CheckStatus(header.status());
  if (header.ok()) {
    FUZZ_CHECK(size == echo::kHeaderBytes);
    FUZZ_CHECK(echo::EncodeHeader(header.value()) == bytes);
    (void)echo::ModeName(uint16_t(header.value().mode));
  }
  StatusOr<echo::Ack> ack = echo::DecodeAck(data, size);
  fuzz::CheckStatus(ack.status());
  if (ack.ok()) (void)echo::EncodeAck(ack.value());
  StatusOr<uint64_t> count = echo::DecodeCount(data, size);
  fuzz::CheckStatus(count.status());
  if (count.ok()) FUZZ_CHECK(echo::EncodeCount(count.value()) == bytes);

  StatusOr<RegionDescriptor> region = RegionDescriptor::Parse(data, size);
  fuzz::CheckStatus(region.status());
  if (region.ok()) FUZZ_CHECK(region.value().Serialize() == bytes);

  internal::RawFrameHeader raw{};
  std::memcpy(raw.data(), data, std::min(size, raw.size()));
  StatusOr<internal::FrameHeader> frame = internal::DecodeFrameHeader(raw);
  fuzz::CheckStatus(frame.status());
  if (frame.ok()) {
    FUZZ_CHECK(internal::EncodeFrameHeader(frame.value()) == raw);
    FUZZ_CHECK(frame.value().payload_len <= internal::kMaxPayloadBytes);
  }
  (void)internal::FrameTypeName(raw[0]);

  uint32_t imm = fuzz::RawU32(std::string_view(reinterpret_cast<const char*>(data), size));
  std::optional<internal::Imm> decoded = internal::DecodeImm(imm);
  if (decoded) FUZZ_CHECK(internal::EncodeImm(*decoded) == imm);

  std::string text =
      internal::SanitizePeerText(std::string_view(reinterpret_cast<const char*>(data), size));
  FUZZ_CHECK(text.size() <= internal::kMaxReasonBytes);
  for (char c : text) FUZZ_CHECK(c >= 0x20 && c < 0x7f);
  return 0;
}
