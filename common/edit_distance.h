// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0
//
// The edit distance behind "did you mean": a mistyped config key (the
// daemon's config checks) and a mistyped rdmactl command.
//
// Thread safety: a pure function.

#ifndef RDMAD_COMMON_EDIT_DISTANCE_H_
#define RDMAD_COMMON_EDIT_DISTANCE_H_

#include <cstddef>
#include <string_view>

namespace rdmad {

// Levenshtein distance (insertions, deletions, substitutions), ignoring
// ASCII case.
size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace rdmad

#endif  // RDMAD_COMMON_EDIT_DISTANCE_H_
