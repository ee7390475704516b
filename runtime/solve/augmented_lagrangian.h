// The augmented-Lagrangian outer loop for problems with constraint costs: the rules are
// ConstraintOptions' (solver_options.h), the per-constraint residual ir/augmented_lagrangian.h.
#pragma once

#include <chrono>

#include "lsjit/runtime/evaluate/evaluator.h"
#include "lsjit/runtime/solver_options.h"

namespace lsjit::detail {

// Like levenberg_marquardt (whose inner solves it runs, warm-started), for a layout with at
// least one constraint group: fills the summary's objective costs, summed inner iterations
// and timings, outer_iterations, constraint_violation and the termination. `solve_start`
// as for levenberg_marquardt: the time budget is the whole solve's, not each inner one's.
void augmented_lagrangian(const ProblemLayout& layout, Evaluator& evaluator,
                          linear::LinearSolver& solver, State& state, const SolverOptions& options,
                          SolveSummary& summary, std::chrono::steady_clock::time_point solve_start);

}  // namespace lsjit::detail
