// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "daemon/cluster/membership_store.h"

namespace rdmad {

std::string PrefixRangeEnd(const std::string& prefix) {
  std::string end = prefix;
  while (!end.empty()) {
    auto& last = reinterpret_cast<unsigned char&>(end.back());
    if (last < 0xff) {
      ++last;
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');
}

}  // namespace rdmad
