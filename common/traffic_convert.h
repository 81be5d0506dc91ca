// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// TrafficTotals to and from rdmad.v1.ChannelTraffic: the one conversion,
// for the client library's reports and the daemon's RPC edge. FromProto
// refuses a latency histogram of another size than kLatencyBuckets
// (INVALID_ARGUMENT); an empty one is no completions.
//
// Thread safety: stateless functions.

#ifndef RDMAD_COMMON_TRAFFIC_CONVERT_H_
#define RDMAD_COMMON_TRAFFIC_CONVERT_H_

#include "common/traffic.h"
#include "rdmad/status.h"
#include "rdmad/v1/rdmad.pb.h"

namespace rdmad::internal {

void ToProto(const TrafficTotals& totals, v1::ChannelTraffic* out);
StatusOr<TrafficTotals> FromProto(const v1::ChannelTraffic& in);

}  // namespace rdmad::internal

#endif  // RDMAD_COMMON_TRAFFIC_CONVERT_H_
