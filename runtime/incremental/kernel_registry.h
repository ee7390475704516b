// The cost types of an update's cost groups: a type seen before (by Problem::add's grouping
// identity) is found without tracing, so a new instance of a known cost never traces or
// compiles again; a new one is traced once and its kernels come from the kernel cache
// (look_up_kernels, as analyze() does), and groups whose traces are equal share one type.
#pragma once

#include <memory>
#include <vector>

#include "lsjit/runtime/incremental/incremental_state.h"
#include "lsjit/runtime/problem.h"

namespace lsjit::detail {

// Per group of `groups`, the index of its CostType in state.costs, made when new (with no
// instances). Counts traces and compiles into `summary` and the state. Throws lsjit::Error
// for a constraint, a cost with no variable or more than kMaxSlots, and what tracing or the
// cache throws; a throw adds no instance anywhere.
std::vector<uint32_t> find_cost_types(IncrementalState& state,
                                      const std::vector<std::unique_ptr<CostGroup>>& groups,
                                      UpdateSummary& summary);

}  // namespace lsjit::detail
