#include "lsjit/runtime/analyze/id_tables.h"

#include <algorithm>

namespace lsjit::detail {

uint64_t dense_span(int64_t lo, int64_t hi, size_t rows) {
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  return span != 0 && span <= kDenseIdSpan * rows + 64 ? span : 0;
}

void sort_unique(BigVector<int64_t>& ids) {
  if (ids.empty()) return;
  const auto [lo, hi] = std::minmax_element(ids.begin(), ids.end());
  const int64_t first = *lo;
  if (const uint64_t span = dense_span(first, *hi, ids.size()); span != 0) {
    BigVector<uint8_t> seen(span, 0);
    for (int64_t id : ids) seen[static_cast<uint64_t>(id) - static_cast<uint64_t>(first)] = 1;
    ids.clear();
    for (uint64_t k = 0; k < span; ++k)
      if (seen[k]) ids.push_back(static_cast<int64_t>(static_cast<uint64_t>(first) + k));
    return;
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

RowOfId::RowOfId(const BigVector<int64_t>& ids) : ids_(ids) {
  if (ids.empty()) return;
  const uint64_t span = dense_span(ids.front(), ids.back(), ids.size());
  if (span == 0) return;
  lo_ = ids.front();
  row_.assign(span, -1);
  for (size_t r = 0; r < ids.size(); ++r)
    row_[static_cast<uint64_t>(ids[r]) - static_cast<uint64_t>(lo_)] = static_cast<int32_t>(r);
}

int32_t RowOfId::operator()(int64_t id) const {
  if (!row_.empty()) return row_[static_cast<uint64_t>(id) - static_cast<uint64_t>(lo_)];
  return static_cast<int32_t>(std::lower_bound(ids_.begin(), ids_.end(), id) - ids_.begin());
}

}  // namespace lsjit::detail
