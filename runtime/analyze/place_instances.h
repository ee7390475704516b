// Pass 4 of analyze(): each instance's variable rows and data in its kernel group's
// arrays, the groups' places in the evaluation buffers, and the robust losses.
//
// The rows are what the kernels gather variables by, so after this pass the IDs are no
// longer needed to evaluate; a constraint's data rows get room for its multiplier (0) and
// penalty (1) after the user's data, which the augmented-Lagrangian loop updates.
#pragma once

#include <vector>

#include "lsjit/runtime/analyze/problem_layout.h"
#include "lsjit/runtime/analyze/trace_groups.h"

namespace lsjit::detail {

// Fills each KernelGroup's rows, data (and user_data), losses, instances, first_instance
// and residual_offset, and the layout's instances, residual_buffer_size and residuals.
// number_variables must have run. Throws lsjit::Error past kMaxInstances instances.
void place_instances(const std::vector<TracedGroup>& groups, ProblemLayout& layout);

}  // namespace lsjit::detail
