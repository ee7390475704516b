// Pass 2 of analyze(): each traced group's kernels from the kernel cache (a Residual and a
// NormalEquations kernel; a constraint also its plain value's Residual kernel), as the
// KernelGroups of the layout, with the cache's hits, misses and times counted.
//
// A constraint is solved through its augmented-Lagrangian residual
// (ir/augmented_lagrangian.h); its plain value c(x), which the outer loop needs, comes
// from a residual kernel of the constraint itself, under the name "NAME.constraint", so
// that the cache does not take the two graphs for a recompile of one cost.
#pragma once

#include <vector>

#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/runtime/analyze/problem_layout.h"
#include "lsjit/runtime/analyze/trace_groups.h"

namespace lsjit::detail {

// Appends one KernelGroup per traced group to layout.groups, in order. Moves each group's
// trace into its KernelGroup (`groups` keeps the parts). Dumps the traces first when
// LSJIT_DUMP_DIR is set (dump_trace). Throws what the cache throws.
void look_up_kernels(std::vector<TracedGroup>& groups, compiler::KernelCache& cache,
                     const compiler::CompileOptions& compile, ProblemLayout& layout);

}  // namespace lsjit::detail
