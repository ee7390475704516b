#include "lsjit/runtime/solve/levenberg_marquardt.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <span>
#include <string>

namespace lsjit::detail {
namespace {

// ‖v‖∞, NaN if any entry is NaN (std::max would drop it).
double max_abs(std::span<const double> v) {
  double m = 0;
  for (double x : v) {
    if (std::isnan(x)) return x;
    m = std::max(m, std::abs(x));
  }
  return m;
}

// Four partial sums, so that the additions do not wait on each other (the vectors have a
// tangent dimension of entries, and every iteration makes several passes over them).
double dot(std::span<const double> a, std::span<const double> b) {
  double s[4] = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 4 <= a.size(); i += 4)
    for (int k = 0; k < 4; ++k) s[k] += a[i + k] * b[i + k];
  for (; i < a.size(); ++i) s[0] += a[i] * b[i];
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// Σ w_i x_i², with dot's partial sums.
double weighted_square_sum(std::span<const double> w, std::span<const double> x) {
  double s[4] = {0, 0, 0, 0};
  size_t i = 0;
  for (; i + 4 <= x.size(); i += 4)
    for (int k = 0; k < 4; ++k) s[k] += w[i + k] * x[i + k] * x[i + k];
  for (; i < x.size(); ++i) s[0] += w[i] * x[i] * x[i];
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// The first free variable whose gradient entries or diagonal of H are not finite, as
// "TYPE variable ID", or "" when all are. A NaN or inf anywhere in a variable's Jacobian
// shows in both (g_v = J_vᵀr, H_vv = J_vᵀJ_v), and every step computed from them would be
// NaN.
std::string first_non_finite_variable(const ProblemLayout& layout, std::span<const double> g,
                                      const linear::BlockSparseSymmetric& H, std::span<double> diag) {
  H.diagonal(diag.data());
  for (const FreeVariable& f : layout.free)
    for (uint32_t c = 0; c < f.tangent; ++c)
      if (!std::isfinite(g[f.offset + c]) || !std::isfinite(diag[f.offset + c])) {
        const TypeTable& t = layout.types[f.type];
        return t.type->name + " variable " + std::to_string(t.ids[f.row]);
      }
  return "";
}

// "linear solver: MESSAGE", and where a factorization names the block it stopped at, the
// variable and the usual cause: a gauge freedom (e.g. a pose graph with no pose held
// constant), which Gauss-Newton meets head on and LM's damping hides.
std::string linear_solver_failure(const ProblemLayout& layout, const linear::LinearSolveSummary& ls) {
  std::string why = "linear solver: " + ls.message;
  if (ls.bad_block < 0 || static_cast<size_t>(ls.bad_block) >= layout.free.size()) return why;
  const FreeVariable& f = layout.free[ls.bad_block];
  const TypeTable& t = layout.types[f.type];
  return why + ", at " + t.type->name + " variable " + std::to_string(t.ids[f.row]) +
         ". If nothing holds the problem in place there (a gauge freedom, e.g. a pose graph with "
         "no pose held constant) or no residual constrains it, hold a variable constant "
         "(Problem::set_constant) or add a prior";
}

}  // namespace

void levenberg_marquardt(const ProblemLayout& layout, Evaluator& evaluator,
                         linear::LinearSolver& solver, std::vector<std::vector<double>>& state,
                         const SolverOptions& options, SolveSummary& summary,
                         Clock::time_point solve_start) {
  LevenbergMarquardt(layout, evaluator, solver, state, options, summary, solve_start).minimize();
}

LevenbergMarquardt::LevenbergMarquardt(const ProblemLayout& layout, Evaluator& evaluator,
                                       linear::LinearSolver& solver, State& state,
                                       const SolverOptions& options, SolveSummary& summary,
                                       Clock::time_point solve_start)
    : layout_(layout), evaluator_(evaluator), solver_(solver), state_(state), options_(options),
      summary_(summary), solve_start_(solve_start), start_(Clock::now()),
      n_(static_cast<size_t>(layout.tangent_dim)), log_(options.log ? *options.log : std::cout),
      H_(linear::BlockSparseSymmetric::uninitialized(layout.pattern)), tangent_storage_(9 * n_),
      candidate_(state), runs_(free_runs(layout)), speculate_(options.speculative_evaluation),
      radius_(options.initial_trust_region_radius) {
  g_ = tangent_vector(0.0);
  scale_ = tangent_vector(1.0);
  diag_ = tangent_vector(0.0);
  shift_ = tangent_vector(0.0);
  rhs_ = tangent_vector(0.0);
  step_scaled_ = tangent_vector(0.0);
  step_ = tangent_vector(0.0);
  scale2_ = tangent_vector(1.0);
  inverse_scale2_ = tangent_vector(1.0);
}

// The algorithm. Each step that can end the solve sets the termination and says so.
void LevenbergMarquardt::minimize() {
  if (initialize()) return;
  if (iteration_zero()) return;
  for (int iteration = 1; !budget_exhausted(iteration); ++iteration) {
    begin_iteration(iteration);
    form_damped_system();
    const linear::LinearSolveSummary ls = compute_step();
    std::string why_rejected;
    const StepOutcome outcome = assess_step(ls, why_rejected);
    if (outcome == StepOutcome::Finished) return;
    const double previous_cost = cost_;
    bool accepted = outcome == StepOutcome::Successful;
    if (accepted && !move_to_candidate()) {
      accepted = false;
      why_rejected = "the gradient at the trial point is not finite";
    }
    // A rejected step's speculative evaluation was wasted: none until the next acceptance.
    speculate_ = options_.speculative_evaluation && accepted;
    if (accepted) {
      handle_successful_step(previous_cost);
    } else if (handle_unsuccessful_step(why_rejected)) {
      return;
    }
    if (end_iteration(accepted, why_rejected)) return;
  }
}

// The normal equations at the start. A non-finite cost or gradient there ends the solve
// with Failure and names what is not finite.
bool LevenbergMarquardt::initialize() {
  cost_ = evaluate_normal_equations();
  if (!std::isfinite(cost_)) {
    // The cost alone, to name a non-finite residual (the fused kernel only sums them). Only
    // here: a finite fused cost has finite residuals.
    const double c = evaluate_cost_at(state_);
    summary_.initial_cost = summary_.final_cost = c;
    summary_.termination = Termination::Failure;
    summary_.message = "the cost at the initial values is not finite" + evaluator_.why_cost_not_finite();
    return true;
  }
  summary_.initial_cost = summary_.final_cost = cost_;
  diag_is_current_ = true;  // first_non_finite_variable fills diag
  if (const std::string where = first_non_finite_variable(layout_, g_, H_, diag_); !where.empty()) {
    summary_.termination = Termination::Failure;
    summary_.message = "the gradient at the initial values is not finite (a derivative of a cost is "
                       "NaN or infinite there): " + where;
    return true;
  }
  if (options_.jacobi_scaling) apply_jacobi_scaling();
  return false;
}

// S = 1/(1 + sqrt(diag H)) at the start. An iterative solver gets S H S from now on (the
// evaluator scales as it assembles); a direct one keeps H and gets S² and 1/S² for its
// damping.
void LevenbergMarquardt::apply_jacobi_scaling() {
  for (size_t i = 0; i < n_; ++i) scale_[i] = 1.0 / (1.0 + std::sqrt(std::max(diag_[i], 0.0)));
  if (!solver_.direct()) {
    evaluator_.scale(scale_.data(), H_);
    H_is_scaled_ = true;
    diag_is_current_ = false;
    return;
  }
  for (size_t i = 0; i < n_; ++i) {
    scale2_[i] = scale_[i] * scale_[i];
    inverse_scale2_[i] = 1.0 / scale2_[i];
  }
}

bool LevenbergMarquardt::iteration_zero() {
  IterationSummary it0;
  it0.cost = cost_;
  it0.gradient_max_norm = max_abs(g_);
  it0.trust_region_radius = radius_;
  it0.step_accepted = true;
  if (!report(it0, start_)) return finish(Termination::UserStopped, "stopped by the iteration callback");
  if (n_ == 0) return finish(Termination::GradientTolerance, "no free variables");
  if (it0.gradient_max_norm <= options_.gradient_tolerance)
    return finish(Termination::GradientTolerance, "gradient tolerance reached at the initial point");
  return false;
}

bool LevenbergMarquardt::budget_exhausted(int iteration) {
  if (iteration > options_.max_iterations)
    return finish(Termination::MaxIterations,
                  "maximum number of iterations (" + std::to_string(options_.max_iterations) + ") reached");
  if (seconds_since(solve_start_) > options_.max_time_s) return finish(Termination::TimeLimit, "time limit reached");
  return false;
}

void LevenbergMarquardt::begin_iteration(int iteration) {
  iteration_start_ = Clock::now();
  it_ = IterationSummary{};
  it_.iteration = iteration;
  summary_.iterations = iteration;
  candidate_cost_ = 0;
  model_decrease_ = 0;
}

// The scaled system (S H S + D/μ) δ' = −S g, δ = S δ', D = diag(S H S) clamped: as it
// stands when H holds S H S, else as (H + S⁻² D/μ) δ = −g, so that step_scaled, rhs and
// shift are all in the variables the solver sees.
void LevenbergMarquardt::form_damped_system() {
  if (!diag_is_current_) H_.diagonal(diag_.data());
  diag_is_current_ = true;
  const double lo = options_.min_lm_diagonal, hi = options_.max_lm_diagonal, inverse_radius = 1.0 / radius_;
  if (options_.gauss_newton) {
    std::fill(shift_.begin(), shift_.end(), 0.0);
  } else if (H_is_scaled_) {
    for (size_t i = 0; i < n_; ++i) shift_[i] = std::clamp(diag_[i], lo, hi) * inverse_radius;
  } else {
    for (size_t i = 0; i < n_; ++i)
      shift_[i] = std::clamp(scale2_[i] * diag_[i], lo, hi) * inverse_radius * inverse_scale2_[i];
  }
  if (H_is_scaled_) {
    for (size_t i = 0; i < n_; ++i) rhs_[i] = -scale_[i] * g_[i];
  } else {
    for (size_t i = 0; i < n_; ++i) rhs_[i] = -g_[i];
  }
}

// Solves the damped system into step_scaled, and carries a solved step back to the
// unscaled variables in step.
linear::LinearSolveSummary LevenbergMarquardt::compute_step() {
  linear::LinearSolverOptions linear_options;
  linear_options.max_cg_iterations = options_.max_linear_iterations;
  linear_options.cg_relative_tolerance = options_.linear_relative_tolerance;
  linear_options.num_threads = options_.num_threads;
  linear_options.mixed_precision = options_.mixed_precision;
  linear_options.max_num_refinement_iterations = options_.max_num_refinement_iterations;
  const linear::LinearSolveSummary ls =
      solver_.solve(H_, shift_.data(), rhs_.data(), step_scaled_.data(), linear_options);
  summary_.linear_solver_s += ls.seconds;
  summary_.mixed_precision_solves += ls.mixed_precision;
  summary_.mixed_precision_fallbacks += ls.mixed_precision_fallback;
  it_.linear_iterations = ls.iterations;
  if (!ls.ok) return ls;
  if (H_is_scaled_) {
    for (size_t i = 0; i < n_; ++i) step_[i] = scale_[i] * step_scaled_[i];
  } else {
    std::copy(step_scaled_.begin(), step_scaled_.end(), step_.begin());
  }
  return ls;
}

// Whether the solved step is successful, unsuccessful (why_rejected says why), or ends
// the solve at the parameter or the function tolerance.
LevenbergMarquardt::StepOutcome LevenbergMarquardt::assess_step(const linear::LinearSolveSummary& ls,
                                                                 std::string& why_rejected) {
  if (!ls.ok) {
    why_rejected = linear_solver_failure(layout_, ls);
    return StepOutcome::Unsuccessful;
  }
  model_decrease_ = model_decrease(ls);
  it_.step_norm = std::sqrt(dot(step_, step_));
  if (parameter_tolerance_reached()) return StepOutcome::Finished;
  evaluate_candidate();
  if (!std::isfinite(candidate_cost_)) {
    why_rejected = "the cost at the trial point is not finite";
    return StepOutcome::Unsuccessful;
  }
  it_.relative_decrease = model_decrease_ > 0 ? (cost_ - candidate_cost_) / model_decrease_ : 0.0;
  if (function_tolerance_reached()) return StepOutcome::Finished;
  if (is_step_successful()) return StepOutcome::Successful;
  why_rejected = "the step does not decrease the cost enough";
  return StepOutcome::Unsuccessful;
}

// Decrease predicted by the Gauss–Newton model, −(gᵀδ + ½ δᵀHδ), in the solver's variables
// (scaled: rhs = −S g, δ'; or not: rhs = −g, δ): rhsᵀδ' − ½ δ'ᵀ(S H S)δ'. After a
// factorization, (S H S + diag(shift)) δ' = rhs to rounding, so δ'ᵀ(S H S)δ' = rhsᵀδ' −
// Σ shift δ'² and the decrease is ½(rhsᵀδ' + Σ shift δ'²): two nonnegative terms, no pass
// over H and no cancellation. An inexact (CG) step satisfies no such identity and gets
// the product with H.
double LevenbergMarquardt::model_decrease(const linear::LinearSolveSummary& ls) {
  if (ls.direct) return 0.5 * (dot(rhs_, step_scaled_) + weighted_square_sum(shift_, step_scaled_));
  Hstep_.resize(n_);
  H_.multiply(step_scaled_.data(), Hstep_.data());
  return dot(rhs_, step_scaled_) - 0.5 * dot(step_scaled_, Hstep_);
}

// |δ| <= parameter_tolerance (|x| + parameter_tolerance), |x| over the free variables.
bool LevenbergMarquardt::parameter_tolerance_reached() {
  double x_norm2 = 0;
  for (const FreeRun& r : runs_) {
    const int64_t ambient = layout_.types[r.type].type->ambient;
    const double* x = state_[r.type].data() + r.row * ambient;
    for (int64_t c = 0; c < r.count * ambient; ++c) x_norm2 += x[c] * x[c];
  }
  const double x_norm = std::sqrt(x_norm2);
  if (it_.step_norm > options_.parameter_tolerance * (x_norm + options_.parameter_tolerance)) return false;
  it_.trust_region_radius = radius_;
  it_.cost = cost_;
  it_.gradient_max_norm = max_abs(g_);
  report(it_, iteration_start_);
  return finish(Termination::ParameterTolerance, "parameter tolerance reached: |step| = " + significant(it_.step_norm));
}

// The trial point x ⊞ δ and its cost (with its normal equations when speculating).
void LevenbergMarquardt::evaluate_candidate() {
  for (size_t t = 0; t < state_.size(); ++t) candidate_[t] = state_[t];
  for (const FreeRun& r : runs_) {
    const VariableType& type = *layout_.types[r.type].type;
    const size_t row = size_t{r.row} * type.ambient;
    type.retract_run(state_[r.type].data() + row, step_.data() + r.offset, candidate_[r.type].data() + row, r.count);
  }
  speculated_ = speculate_;
  candidate_cost_ = speculated_ ? evaluate_normal_equations_at(candidate_) : evaluate_cost_at(candidate_);
}

// |cost change| <= function_tolerance · cost ends the solve, taking a (tiny) improvement.
bool LevenbergMarquardt::function_tolerance_reached() {
  if (std::abs(cost_ - candidate_cost_) > options_.function_tolerance * cost_) return false;
  it_.cost = cost_;
  it_.trust_region_radius = radius_;
  const double previous_cost = cost_;
  if (candidate_cost_ < cost_ && move_to_candidate()) {
    it_.cost_change = previous_cost - candidate_cost_;
    it_.cost = cost_;
    it_.step_accepted = true;
    ++summary_.successful_steps;
  } else {
    restore_if_speculated();
    ++summary_.unsuccessful_steps;
  }
  it_.gradient_max_norm = max_abs(g_);
  report(it_, iteration_start_);
  return finish(Termination::FunctionTolerance,
                "function tolerance reached: |cost change| / cost <= " + significant(options_.function_tolerance));
}

// Gauss–Newton takes any decrease; LM a ratio of actual to predicted decrease above
// min_relative_decrease.
bool LevenbergMarquardt::is_step_successful() const {
  return options_.gauss_newton ? candidate_cost_ < cost_ : it_.relative_decrease > options_.min_relative_decrease;
}

// Moves to the candidate and evaluates the normal equations there (or takes those
// evaluated speculatively). A candidate whose cost is finite but whose gradient or
// Gauss–Newton matrix is not (a derivative that overflows or is 0/0 there) is no point to
// step from, however low its cost: the move is undone (state, g and H as before) and the
// step counts as rejected.
bool LevenbergMarquardt::move_to_candidate() {
  state_.swap(candidate_);
  const double c = speculated_ ? candidate_cost_ : evaluate_normal_equations();
  speculated_ = false;
  if (std::isfinite(c) && first_non_finite_variable(layout_, g_, H_, diag_).empty()) {
    diag_is_current_ = true;
    cost_ = c;
    return true;
  }
  state_.swap(candidate_);
  evaluate_normal_equations();  // (diag no longer current)
  return false;
}

double LevenbergMarquardt::radius_growth(double relative_decrease, double very_successful_radius_growth) {
  const double r = 2.0 * relative_decrease - 1.0;
  double growth = 1.0 / std::max(1.0 / 3.0, 1.0 - r * r * r);
  if (relative_decrease > 0.75) growth = std::max(growth, very_successful_radius_growth);
  return growth;
}

void LevenbergMarquardt::handle_successful_step(double previous_cost) {
  it_.cost_change = previous_cost - candidate_cost_;
  ++summary_.successful_steps;
  it_.step_accepted = true;
  if (options_.gauss_newton) return;
  radius_ = std::min(options_.max_trust_region_radius,
                     radius_ * radius_growth(it_.relative_decrease, options_.very_successful_radius_growth));
  decrease_factor_ = 2.0;
}

// Shrinks the region (μ ← μ/ν, ν ← 2ν). Gauss–Newton has no region: a rejected step ends it.
bool LevenbergMarquardt::handle_unsuccessful_step(const std::string& why_rejected) {
  restore_if_speculated();
  ++summary_.unsuccessful_steps;
  if (options_.gauss_newton) {
    it_.cost = cost_;
    it_.gradient_max_norm = max_abs(g_);
    report(it_, iteration_start_);
    return finish(Termination::NoDecrease, "Gauss-Newton step rejected: " + why_rejected);
  }
  radius_ /= decrease_factor_;
  decrease_factor_ *= 2.0;
  return false;
}

// Reports the iteration, then the tolerances that end a solve after a step.
bool LevenbergMarquardt::end_iteration(bool accepted, const std::string& why_rejected) {
  it_.cost = cost_;
  it_.gradient_max_norm = max_abs(g_);
  it_.trust_region_radius = radius_;
  if (!report(it_, iteration_start_)) return finish(Termination::UserStopped, "stopped by the iteration callback");
  if (!std::isfinite(cost_)) return finish(Termination::Failure, "the cost became non-finite at an accepted point");
  if (accepted && it_.gradient_max_norm <= options_.gradient_tolerance)
    return finish(Termination::GradientTolerance,
                  "gradient tolerance reached: max |g| = " + significant(it_.gradient_max_norm));
  if (!accepted && radius_ < options_.min_trust_region_radius)
    return finish(Termination::TrustRegionTooSmall,
                  "trust region radius below its minimum; last rejection: " + why_rejected);
  return false;
}

double LevenbergMarquardt::evaluate_normal_equations_at(const State& at) {
  diag_is_current_ = false;
  const auto t0 = Clock::now();
  // Once the scaling is known the evaluator applies it block by block as H is assembled.
  const double c = evaluator_.normal_equations(at, g_.data(), H_, H_is_scaled_ ? scale_.data() : nullptr);
  summary_.jacobian_s += seconds_since(t0);
  ++summary_.normal_evaluations;
  return c;
}

double LevenbergMarquardt::evaluate_cost_at(const State& at) {
  const auto t0 = Clock::now();
  const double c = evaluator_.cost(at);
  summary_.residual_s += seconds_since(t0);
  ++summary_.residual_evaluations;
  return c;
}

// After a trial point that is not moved to: g and H of the current point again.
void LevenbergMarquardt::restore_if_speculated() {
  if (speculated_) evaluate_normal_equations();
  speculated_ = false;
}

// Records the iteration (timed from `since`) and logs it; false when the callback asks to
// stop.
bool LevenbergMarquardt::report(IterationSummary& it, Clock::time_point since) {
  it.iteration_s = seconds_since(since);
  it.cumulative_s = seconds_since(solve_start_);
  summary_.per_iteration.push_back(it);
  if (options_.verbose) {
    if (it.iteration == 0) log_ << iteration_header() << "\n";
    // Flushed per line: a run that is killed, or watched through a pipe or a file, shows
    // every iteration it finished.
    log_ << iteration_row(it) << std::endl;
  }
  return !options_.callback || options_.callback(it);
}

bool LevenbergMarquardt::finish(Termination t, std::string message) {
  summary_.termination = t;
  summary_.message = std::move(message);
  summary_.final_cost = cost_;
  return true;
}

std::span<double> LevenbergMarquardt::tangent_vector(double value) {
  const std::span<double> v(tangent_storage_.data() + tangent_used_, n_);
  tangent_used_ += n_;
  if (value != 0.0) std::fill(v.begin(), v.end(), value);
  return v;
}

std::vector<LevenbergMarquardt::FreeRun> LevenbergMarquardt::free_runs(const ProblemLayout& layout) {
  std::vector<FreeRun> runs;
  for (const FreeVariable& f : layout.free) {
    if (!runs.empty()) {
      FreeRun& r = runs.back();
      const int64_t tangent = layout.types[f.type].type->tangent;
      if (r.type == f.type && f.row == r.row + r.count && f.offset == r.offset + r.count * tangent) {
        ++r.count;
        continue;
      }
    }
    runs.push_back({f.type, f.row, f.offset, 1});
  }
  return runs;
}

}  // namespace lsjit::detail
