// The trust-region Levenberg–Marquardt loop (and undamped Gauss–Newton), on the normal
// equations assembled by the Evaluator.
//
// Damping update: Nielsen's rule, as Ceres' LEVENBERG_MARQUARDT strategy uses it. A step
// solves (H + D/μ) δ = −g with D = diag(H) clamped to [min_lm_diagonal, max_lm_diagonal]
// and μ the trust-region radius. With ρ = actual / predicted decrease, a step is accepted
// when ρ > min_relative_decrease; then μ ← μ / max(1/3, 1 − (2ρ − 1)³) and the factor
// ν ← 2, else μ ← μ / ν and ν ← 2ν. Nielsen's rule changes μ smoothly with ρ (a good model
// widens the region up to 3x, a poor one narrows it), and the growing ν backs off fast
// after repeated failures; both avoid the oscillation of the classic ×10 / ÷10 update. We
// chose it so that iteration counts and final costs compare one to one with Ceres. One
// departure, SolverOptions::very_successful_radius_growth: after a step with ρ > 3/4, μ
// grows at least by that factor (2, the textbook trust region's doubling), because
// Nielsen's rule grows μ only 1.24x at ρ = 0.8 and a long run of such steps (bundle
// adjustment's tail) stays damped; 1 restores Ceres' schedule exactly.
//
// With jacobi_scaling the step is that of the system in variables scaled by s = 1/(1 +
// sqrt(diag H)) computed at the initial point (Ceres does the same), which makes D well
// conditioned across variables of very different magnitude. Iterative solvers solve the
// scaled system; direct ones the same system carried back to the unscaled variables (the
// same step up to rounding, without scaling H at every evaluation).
//
// Numerical trouble is a rejected step, never an exception: a linear solve that fails
// (not positive definite, non-finite) or a trial point whose cost is not finite shrinks
// the region like a poor step. A solve whose radius falls below min_trust_region_radius
// ends with TrustRegionTooSmall.
#pragma once

#include <chrono>
#include <vector>

#include "lsjit/runtime/evaluate/evaluator.h"
#include "lsjit/runtime/solver_options.h"

namespace lsjit::detail {

// Minimizes from `state` (per type, rows as in the layout), which it updates in place to
// the last accepted point. Fills the summary's costs, iterations, termination, message,
// timings (residual_s, jacobian_s, linear_solver_s) and per_iteration. `solver` must have
// been made for layout.pattern. `solve_start` is when solve() began: iterations'
// cumulative_s and the max_time_s budget count from it, so that they include solve()'s
// set-up (the Evaluator's tables, the linear solver's analysis) and every earlier inner
// solve of an augmented-Lagrangian loop.
void levenberg_marquardt(const ProblemLayout& layout, Evaluator& evaluator,
                         linear::LinearSolver& solver, std::vector<std::vector<double>>& state,
                         const SolverOptions& options, SolveSummary& summary,
                         std::chrono::steady_clock::time_point solve_start);

}  // namespace lsjit::detail
