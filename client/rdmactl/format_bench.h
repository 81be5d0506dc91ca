// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The output of `rdmactl bench`: a header line (test, peer, transport and
// device, channels, iterations or duration), then perftest's columns:
//
//   lat          #bytes #iters t_min t_typical t_avg t_p99 t_p99.9 t_max
//                t_stdev, half round trips in µs (t_typical: the median)
//   bw/write/read #bytes #iters BW peak / average in MB/s (2^20 bytes) and
//                Gb/s, MsgRate in Mmsg/s, time in s
//   idle         the CPU of the whole process in % of one core
//   connect      connects/s and the Connect time's min/p50/avg/p99/max
//
// and the JSON of the same, keys as in docs/benchmarks.md:
//   {"test", "peer", "channels", "iters", "duration_s", "channel":
//    ChannelInfoJson, then "results": [...] (lat, bw, write, read), or
//    "idle": {...}, or "connect": {...}}
//
// Thread safety: pure functions over values.

#ifndef RDMAD_CLIENT_RDMACTL_FORMAT_BENCH_H_
#define RDMAD_CLIENT_RDMACTL_FORMAT_BENCH_H_

#include <string>

#include "client/rdmactl/bench_session.h"
#include "client/rdmactl/json.h"

namespace rdmactl {

std::string FormatBench(const BenchReport& report);

Json BenchJson(const BenchReport& report);

}  // namespace rdmactl

#endif  // RDMAD_CLIENT_RDMACTL_FORMAT_BENCH_H_
