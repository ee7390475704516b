// The percentile that lsjit replay and the GTSAM baseline (tools/bench/gtsam) both report for
// times per update: one definition, so that their medians and 99th percentiles compare.
#pragma once

#include <algorithm>
#include <vector>

namespace lsjit {

// The sorted value at round(p (n − 1)) for p in [0, 1]: p = 0.5 the median (the upper one
// of an even count), 1 the maximum; 0 for no values.
inline double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

}  // namespace lsjit
