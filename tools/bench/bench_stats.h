// The statistics every benchmark reports: medians over repeats, because the machines are
// shared and a single run moves by tens of percent.
#pragma once

#include <algorithm>
#include <vector>

namespace lsjit::bench {

// The median of `v` (the upper one of an even count), 0 for none.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace lsjit::bench
