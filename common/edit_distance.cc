// Copyright rdmad authors. SPDX-License-Identifier: Apache-2.0

#include "common/edit_distance.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace rdmad {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                  std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + !same});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace rdmad
