// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The ops of the local_query target (local_query_fuzz.cc), for it and the
// seed generator.

#ifndef RDMAD_TESTS_FUZZ_LOCAL_QUERY_FUZZ_H_
#define RDMAD_TESTS_FUZZ_LOCAL_QUERY_FUZZ_H_

#include <cstdint>

namespace rdmad::fuzz {

enum class QueryOp : uint8_t {
  kGetDevice,        // GetDeviceRequest
  kGetPortCounters,  // GetPortCountersRequest
  kResolvePath,      // ResolvePathRequest
  kSetConfig,        // raw: TOML text; the running config when it is valid
  kSetSource,        // raw: the kernel's source address for every peer ("": none)
  kCount,
};

}  // namespace rdmad::fuzz

#endif  // RDMAD_TESTS_FUZZ_LOCAL_QUERY_FUZZ_H_
