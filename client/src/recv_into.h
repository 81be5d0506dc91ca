// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The argument checks and the truncation status Channel::RecvInto shares
// between its transports.

#ifndef RDMAD_CLIENT_SRC_RECV_INTO_H_
#define RDMAD_CLIENT_SRC_RECV_INTO_H_

#include <cstddef>

#include "rdmad/channel.h"

namespace rdmad::internal {

// CheckRecvInto's errors, built out of line.
Status RecvIntoOutOfRange(size_t offset, size_t max_len, size_t region_size);
Status RecvIntoNoHostAddress();

// OUT_OF_RANGE for a range outside the region, INVALID_ARGUMENT for a
// region without a host address. Inline: every RecvInto asks.
inline Status CheckRecvInto(const MemoryRegion& region, size_t offset, size_t max_len) {
  const size_t size = region.size();
  if (offset > size || max_len > size - offset) return RecvIntoOutOfRange(offset, max_len, size);
  if (region.data() == nullptr) return RecvIntoNoHostAddress();
  return Status::Ok();
}
// The OUT_OF_RANGE of a message longer than max_len.
Status RecvIntoTooLong(size_t size, size_t max_len);

}  // namespace rdmad::internal

#endif  // RDMAD_CLIENT_SRC_RECV_INTO_H_
