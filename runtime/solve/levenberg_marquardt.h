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
// Nielsen's rule grows μ only 1.28x at ρ = 0.8 and a long run of such steps (bundle
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
// The minimizer is a class of named steps, as Ceres' TrustRegionMinimizer is: minimize()
// reads as the algorithm, one step per line, and each step is a member function small
// enough to check against the rule it implements.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "lsjit/common/clock.h"
#include "lsjit/runtime/evaluate/evaluator.h"
#include "lsjit/runtime/evaluate/huge_page_allocator.h"
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
                         Clock::time_point solve_start);

// The loop levenberg_marquardt() runs. Holds references to its arguments, which must
// outlive it; minimize() runs once.
class LevenbergMarquardt {
 public:
  using State = std::vector<std::vector<double>>;
  LevenbergMarquardt(const ProblemLayout& layout, Evaluator& evaluator, linear::LinearSolver& solver,
                     State& state, const SolverOptions& options, SolveSummary& summary,
                     Clock::time_point solve_start);
  void minimize();

  // Nielsen's rule with the very-successful floor (the header comment above): the factor
  // the radius is multiplied by after a step accepted with ratio `relative_decrease`.
  static double radius_growth(double relative_decrease, double very_successful_radius_growth);

 private:
  // Free variables of one type in consecutive rows with consecutive step offsets, taken
  // together by the retraction and the parameter norm (in the order of layout.free, so the
  // sums and results are those of a loop over the variables).
  struct FreeRun {
    uint32_t type;
    uint32_t row;
    int64_t offset;
    int64_t count;
  };

  // The steps, in the order minimize() takes them. Those returning bool return true when
  // the solve is finished (termination and message set).
  bool initialize();                    // evaluate at the start; fail on non-finite values
  void apply_jacobi_scaling();          // S from diag(H) at the start
  bool iteration_zero();                // report it, the tolerances at the start
  bool budget_exhausted(int iteration); // max_iterations, max_time_s
  void begin_iteration(int iteration);
  void form_damped_system();            // shift = D/μ and rhs = −(S) g
  linear::LinearSolveSummary compute_step();
  enum class StepOutcome { Successful, Unsuccessful, Finished };
  StepOutcome assess_step(const linear::LinearSolveSummary& ls, std::string& why_rejected);
  double model_decrease(const linear::LinearSolveSummary& ls);
  bool parameter_tolerance_reached();
  void evaluate_candidate();            // retract the step, cost (and H if speculating)
  bool function_tolerance_reached();
  bool is_step_successful() const;
  bool move_to_candidate();             // false when the candidate's gradient is not finite
  void handle_successful_step(double previous_cost);
  bool handle_unsuccessful_step(const std::string& why_rejected);
  bool end_iteration(bool accepted, const std::string& why_rejected);

  // Helpers of the steps.
  double evaluate_normal_equations_at(const State& at);
  double evaluate_normal_equations() { return evaluate_normal_equations_at(state_); }
  double evaluate_cost_at(const State& at);
  void restore_if_speculated();
  bool report(IterationSummary& it, Clock::time_point since);
  bool finish(Termination t, std::string message);
  std::span<double> tangent_vector(double value);
  static std::vector<FreeRun> free_runs(const ProblemLayout& layout);

  const ProblemLayout& layout_;
  Evaluator& evaluator_;
  linear::LinearSolver& solver_;
  State& state_;
  const SolverOptions& options_;
  SolveSummary& summary_;
  const Clock::time_point solve_start_;
  const Clock::time_point start_;
  const size_t n_;  // the tangent dimension
  std::ostream& log_;

  // H and g as evaluated, except that once the Jacobi scaling S is known H holds S H S for
  // an iterative solver (g stays unscaled): its steps are solved in scaled variables, where
  // CG's stopping test and preconditioner see a well-scaled matrix. A direct solver gets H
  // itself and the scaled system's damping carried back to the unscaled variables:
  // (S H S + D) δ' = −S g is (H + S⁻¹ D S⁻¹) δ = −g with δ = S δ', the same step up to
  // rounding (Cholesky's accuracy does not depend on a diagonal scaling), without scaling
  // every entry of H at every evaluation. Not zeroed first: every evaluation writes all of
  // H (Evaluator::normal_equations).
  linear::BlockSparseSymmetric H_;
  bool H_is_scaled_ = false;
  // The vectors of the tangent dimension, in one allocation (one huge page where they fit
  // in one, huge_page_allocator.h), handed out by tangent_vector().
  BigVector<double> tangent_storage_;
  size_t tangent_used_ = 0;
  std::span<double> g_, scale_, diag_, shift_, rhs_, step_scaled_, step_;
  // S² and 1/S² per entry, for a direct solver's damping S⁻² D/μ: multiplications in the
  // loop that runs every iteration, not two divisions per entry.
  std::span<double> scale2_, inverse_scale2_;
  std::vector<double> Hstep_;     // H δ', for an inexact step's model decrease
  bool diag_is_current_ = false;  // diag_ holds H's diagonal as H is now
  State candidate_;
  std::vector<FreeRun> runs_;

  // Speculative evaluation (SolverOptions::speculative_evaluation): the trial point's
  // normal equations overwrite g and H, and a step that is not taken evaluates them again
  // at the current point. (A second H would avoid that, but the assembly would then no
  // longer find the copy it last wrote in cache.)
  bool speculate_;          // at the next trial point
  bool speculated_ = false; // g and H are the trial point's

  double cost_ = 0;
  double radius_;
  double decrease_factor_ = 2.0;
  // The iteration in progress.
  IterationSummary it_;
  Clock::time_point iteration_start_;
  double candidate_cost_ = 0;
  double model_decrease_ = 0;
};

}  // namespace lsjit::detail
