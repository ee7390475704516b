// Variable IDs to rows: the sorted table of a type's referenced IDs and the lookup from an
// ID to its row, shared by number_variables and place_instances.
//
// IDs are arbitrary int64s, but most problems number their variables 0..n-1 or close to it
// (BAL, g2o). When a type's IDs span at most kDenseIdSpan times as many values as it has
// rows, both go through an array over the span instead of sorting and binary searches,
// which is linear in the references instead of n log n.
#pragma once

#include <cstdint>

#include "lsjit/runtime/evaluate/huge_page_allocator.h"

namespace lsjit::detail {

constexpr uint64_t kDenseIdSpan = 4;

// The span hi − lo + 1 of IDs in [lo, hi] if an array over it is worth it for `rows` of
// them, else 0 (also when the span overflows: the int64 extremes).
uint64_t dense_span(int64_t lo, int64_t hi, size_t rows);

// `ids` sorted, without duplicates.
void sort_unique(BigVector<int64_t>& ids);

// The row of each ID of a sorted, duplicate-free table: an array over a dense span, else a
// binary search. Every ID looked up must be in the table, which must outlive this.
class RowOfId {
 public:
  explicit RowOfId(const BigVector<int64_t>& ids);
  int32_t operator()(int64_t id) const;

 private:
  const BigVector<int64_t>& ids_;
  int64_t lo_ = 0;
  BigVector<int32_t> row_;
};

}  // namespace lsjit::detail
