// Pass 5 of analyze(): the block pattern of H = JᵀJ over the free variables, and the
// gather lists that assemble H and g from the kernels' per-instance blocks.
//
// Each stored block of H and each free variable's part of g gets the list of kernel
// outputs (sources) summed into it, in instance order, as CSR. The order is fixed here,
// once, so that the summation order, and with it every bit of H and g, does not depend on
// threads or on how instance ranges are split at evaluation.
#pragma once

#include "lsjit/runtime/analyze/problem_layout.h"

namespace lsjit::detail {

// Fills layout.pattern, h_begin, h_sources, g_begin, g_sources, h_value_offset, h_rows and
// h_cols. place_instances must have run.
void build_gather_lists(ProblemLayout& layout);

}  // namespace lsjit::detail
