#include "lsjit/runtime/solve/levenberg_marquardt.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <span>
#include <string>

namespace lsjit::detail {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

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
// tangent dimension of entries: 23,769 on Ladybug-49, several passes per iteration).
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

// Free variables of one type in consecutive rows with consecutive step offsets, taken
// together by the step's retraction and the parameter norm (in the order of layout.free,
// so the sums and results are those of a loop over the variables).
struct FreeRun {
  uint32_t type;
  uint32_t row;
  int64_t offset;
  int64_t count;
};

std::vector<FreeRun> free_runs(const ProblemLayout& layout) {
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

}  // namespace

void levenberg_marquardt(const ProblemLayout& layout, Evaluator& evaluator,
                         linear::LinearSolver& solver, std::vector<std::vector<double>>& state,
                         const SolverOptions& options, SolveSummary& summary,
                         Clock::time_point solve_start) {
  const auto start = Clock::now();
  std::ostream& log = options.log ? *options.log : std::cout;
  const size_t n = static_cast<size_t>(layout.tangent_dim);

  // H and g as evaluated, except that once the Jacobi scaling S is known H holds S H S for
  // an iterative solver (g stays unscaled): its steps are solved in scaled variables, where
  // CG's stopping test and preconditioner see a well-scaled matrix. A direct solver gets H
  // itself and the scaled system's damping carried back to the unscaled variables:
  // (S H S + D) δ' = −S g is (H + S⁻¹ D S⁻¹) δ = −g with δ = S δ', the same step up to
  // rounding (Cholesky's accuracy does not depend on a diagonal scaling), without scaling
  // every entry of H at every evaluation (6% of a Ladybug-49 dense_schur solve).
  // Not zeroed first: every evaluation writes all of H (Evaluator::normal_equations).
  linear::BlockSparseSymmetric H = linear::BlockSparseSymmetric::uninitialized(layout.pattern);
  bool H_is_scaled = false;
  // The vectors of the tangent dimension, in one allocation: on Ladybug-49 nine vectors of
  // 23,769 doubles were 420 fresh 4 KiB pages, 0.8 ms of set-up; one BigVector is one
  // 2 MiB huge page there (huge_page_allocator.h).
  BigVector<double> tangent_storage(9 * n);
  size_t tangent_used = 0;
  auto tangent_vector = [&](double value) {
    const std::span<double> v(tangent_storage.data() + tangent_used, n);
    tangent_used += n;
    if (value != 0.0) std::fill(v.begin(), v.end(), value);
    return v;
  };
  const std::span<double> g = tangent_vector(0.0), scale = tangent_vector(1.0), diag = tangent_vector(0.0),
                          shift = tangent_vector(0.0), rhs = tangent_vector(0.0),
                          step_scaled = tangent_vector(0.0), step = tangent_vector(0.0);
  // S² and 1/S² per entry, for a direct solver's damping S⁻² D/μ: multiplications in the
  // loop that runs every iteration, not two divisions per entry.
  const std::span<double> scale2 = tangent_vector(1.0), inverse_scale2 = tangent_vector(1.0);
  std::vector<double> Hstep;  // H δ', for an inexact step's model decrease: sized on first use
  bool diag_is_current = false;  // diag holds H's diagonal as H is now
  std::vector<std::vector<double>> candidate = state;

  // Speculative evaluation (SolverOptions::speculative_evaluation): the trial point's normal
  // equations overwrite g and H, and a step that is not taken evaluates them again at the
  // current point. (A second H to keep them in instead was no faster on Ladybug-49: with two
  // copies of H in turn, the assembly no longer found the one it wrote in cache.)
  bool speculate = options.speculative_evaluation;  // at the next trial point
  bool speculated = false;                          // g and H are the trial point's

  auto evaluate_normal_equations_at = [&](const std::vector<std::vector<double>>& at) {
    diag_is_current = false;
    const auto t0 = Clock::now();
    // Once the scaling is known the evaluator applies it block by block as H is assembled.
    const double c = evaluator.normal_equations(at, g.data(), H, H_is_scaled ? scale.data() : nullptr);
    summary.jacobian_s += seconds_since(t0);
    ++summary.normal_evaluations;
    return c;
  };
  auto evaluate_normal_equations = [&] { return evaluate_normal_equations_at(state); };
  auto evaluate_cost_at = [&](const std::vector<std::vector<double>>& at) {
    const auto t0 = Clock::now();
    const double c = evaluator.cost(at);
    summary.residual_s += seconds_since(t0);
    ++summary.residual_evaluations;
    return c;
  };
  // After a trial point that is not moved to: g and H of the current point again.
  auto restore_if_speculated = [&] {
    if (speculated) evaluate_normal_equations();
    speculated = false;
  };

  double cost = evaluate_normal_equations();
  if (!std::isfinite(cost)) {
    // The cost alone, to name a non-finite residual (the fused kernel only sums them). Only
    // here: a finite fused cost has finite residuals, and evaluating them again at the
    // start of every solve cost 0.2% of a Ladybug-49 solve.
    const double c = evaluate_cost_at(state);
    summary.initial_cost = summary.final_cost = c;
    summary.termination = Termination::Failure;
    summary.message = "the cost at the initial values is not finite" + evaluator.why_cost_not_finite();
    return;
  }
  summary.initial_cost = summary.final_cost = cost;
  diag_is_current = true;  // first_non_finite_variable fills diag
  if (const std::string where = first_non_finite_variable(layout, g, H, diag); !where.empty()) {
    summary.termination = Termination::Failure;
    summary.message = "the gradient at the initial values is not finite (a derivative of a cost is "
                      "NaN or infinite there): " + where;
    return;
  }

  if (options.jacobi_scaling) {
    for (size_t i = 0; i < n; ++i) scale[i] = 1.0 / (1.0 + std::sqrt(std::max(diag[i], 0.0)));
    if (!solver.direct()) {
      evaluator.scale(scale.data(), H);  // from now on the evaluator scales as it assembles
      H_is_scaled = true;
      diag_is_current = false;
    } else {
      for (size_t i = 0; i < n; ++i) {
        scale2[i] = scale[i] * scale[i];
        inverse_scale2[i] = 1.0 / scale2[i];
      }
    }
  }

  const std::vector<FreeRun> runs = free_runs(layout);

  double radius = options.initial_trust_region_radius;
  double decrease_factor = 2.0;
  auto report = [&](const IterationSummary& it) {
    summary.per_iteration.push_back(it);
    if (options.verbose) {
      if (it.iteration == 0) log << iteration_header() << "\n";
      // Flushed per line: a run that is killed, or watched through a pipe or a file, shows
      // every iteration it finished.
      log << iteration_row(it) << std::endl;
    }
    return !options.callback || options.callback(it);
  };
  auto finish = [&](Termination t, std::string message) {
    summary.termination = t;
    summary.message = std::move(message);
    summary.final_cost = cost;
  };

  // Moves to the candidate and evaluates the normal equations there (or takes those
  // evaluated speculatively, whose cost is candidate_cost). A candidate whose cost is
  // finite but whose gradient or Gauss–Newton matrix is not (a derivative that overflows
  // or is 0/0 there) is no point to step from, however low its cost: the move is undone
  // (state, g and H as before) and the step counts as rejected.
  auto move_to_candidate = [&](double candidate_cost) {
    state.swap(candidate);
    const double c = speculated ? candidate_cost : evaluate_normal_equations();
    speculated = false;
    if (std::isfinite(c) && first_non_finite_variable(layout, g, H, diag).empty()) {
      diag_is_current = true;
      cost = c;
      return true;
    }
    state.swap(candidate);
    evaluate_normal_equations();  // (diag no longer current)
    return false;
  };

  IterationSummary it0;
  it0.cost = cost;
  it0.gradient_max_norm = max_abs(g);
  it0.trust_region_radius = radius;
  it0.step_accepted = true;
  it0.iteration_s = seconds_since(start);
  it0.cumulative_s = seconds_since(solve_start);
  if (!report(it0)) return finish(Termination::UserStopped, "stopped by the iteration callback");
  if (n == 0) return finish(Termination::GradientTolerance, "no free variables");
  if (it0.gradient_max_norm <= options.gradient_tolerance)
    return finish(Termination::GradientTolerance, "gradient tolerance reached at the initial point");

  for (int iteration = 1;; ++iteration) {
    if (iteration > options.max_iterations)
      return finish(Termination::MaxIterations,
                    "maximum number of iterations (" + std::to_string(options.max_iterations) + ") reached");
    if (seconds_since(solve_start) > options.max_time_s)
      return finish(Termination::TimeLimit, "time limit reached");
    const auto iteration_start = Clock::now();
    IterationSummary it;
    it.iteration = iteration;
    summary.iterations = iteration;

    // The step of the scaled system (S H S + D/μ) δ' = −S g, δ = S δ', D = diag(S H S)
    // clamped: solved as it stands when H holds S H S, else as (H + S⁻² D/μ) δ = −g, so
    // that step_scaled, rhs and shift below are all in the variables the solver saw.
    if (!diag_is_current) H.diagonal(diag.data());
    diag_is_current = true;
    const double lo = options.min_lm_diagonal, hi = options.max_lm_diagonal, inverse_radius = 1.0 / radius;
    if (options.gauss_newton) {
      std::fill(shift.begin(), shift.end(), 0.0);
    } else if (H_is_scaled) {
      for (size_t i = 0; i < n; ++i) shift[i] = std::clamp(diag[i], lo, hi) * inverse_radius;
    } else {
      for (size_t i = 0; i < n; ++i)
        shift[i] = std::clamp(scale2[i] * diag[i], lo, hi) * inverse_radius * inverse_scale2[i];
    }
    if (H_is_scaled) {
      for (size_t i = 0; i < n; ++i) rhs[i] = -scale[i] * g[i];
    } else {
      for (size_t i = 0; i < n; ++i) rhs[i] = -g[i];
    }
    linear::LinearSolverOptions linear_options;
    linear_options.max_cg_iterations = options.max_linear_iterations;
    linear_options.cg_relative_tolerance = options.linear_relative_tolerance;
    linear_options.num_threads = options.num_threads;
    linear_options.mixed_precision = options.mixed_precision;
    linear_options.max_num_refinement_iterations = options.max_num_refinement_iterations;
    const linear::LinearSolveSummary ls =
        solver.solve(H, shift.data(), rhs.data(), step_scaled.data(), linear_options);
    summary.linear_solver_s += ls.seconds;
    summary.mixed_precision_solves += ls.mixed_precision;
    summary.mixed_precision_fallbacks += ls.mixed_precision_fallback;
    it.linear_iterations = ls.iterations;

    bool accepted = false;
    double candidate_cost = 0, model_decrease = 0;
    std::string why_rejected;
    if (ls.ok) {
      if (H_is_scaled) {
        for (size_t i = 0; i < n; ++i) step[i] = scale[i] * step_scaled[i];
      } else {
        std::copy(step_scaled.begin(), step_scaled.end(), step.begin());
      }
      // Decrease predicted by the Gauss–Newton model, −(gᵀδ + ½ δᵀHδ), in the solver's
      // variables (scaled: rhs = −S g, δ'; or not: rhs = −g, δ): rhsᵀδ' − ½ δ'ᵀ(S H S)δ'.
      // After a factorization, (S H S + diag(shift)) δ' = rhs to rounding, so δ'ᵀ(S H S)δ' =
      // rhsᵀδ' − Σ shift δ'² and the decrease is ½(rhsᵀδ' + Σ shift δ'²): two nonnegative
      // terms, no product with H (a pass over it: 4-5% of a Ladybug-49 solve) and no
      // cancellation. An inexact (CG) step satisfies no such identity and gets the product.
      if (ls.direct) {
        model_decrease = 0.5 * (dot(rhs, step_scaled) + weighted_square_sum(shift, step_scaled));
      } else {
        Hstep.resize(n);
        H.multiply(step_scaled.data(), Hstep.data());
        model_decrease = dot(rhs, step_scaled) - 0.5 * dot(step_scaled, Hstep);
      }
      it.step_norm = std::sqrt(dot(step, step));

      double x_norm2 = 0;
      for (const FreeRun& r : runs) {
        const int64_t ambient = layout.types[r.type].type->ambient;
        const double* x = state[r.type].data() + r.row * ambient;
        for (int64_t c = 0; c < r.count * ambient; ++c) x_norm2 += x[c] * x[c];
      }
      const double x_norm = std::sqrt(x_norm2);
      if (it.step_norm <= options.parameter_tolerance * (x_norm + options.parameter_tolerance)) {
        it.trust_region_radius = radius;
        it.cost = cost;
        it.gradient_max_norm = max_abs(g);
        it.iteration_s = seconds_since(iteration_start);
        it.cumulative_s = seconds_since(solve_start);
        report(it);
        return finish(Termination::ParameterTolerance, "parameter tolerance reached: |step| = " +
                                                           significant(it.step_norm));
      }

      for (size_t t = 0; t < state.size(); ++t) candidate[t] = state[t];
      for (const FreeRun& r : runs) {
        const VariableType& type = *layout.types[r.type].type;
        const size_t row = size_t{r.row} * type.ambient;
        type.retract_run(state[r.type].data() + row, step.data() + r.offset, candidate[r.type].data() + row, r.count);
      }
      speculated = speculate;
      candidate_cost = speculated ? evaluate_normal_equations_at(candidate) : evaluate_cost_at(candidate);

      if (!std::isfinite(candidate_cost)) {
        why_rejected = "the cost at the trial point is not finite";
      } else {
        it.relative_decrease = model_decrease > 0 ? (cost - candidate_cost) / model_decrease : 0.0;
        if (std::abs(cost - candidate_cost) <= options.function_tolerance * cost) {
          it.cost = cost;
          it.trust_region_radius = radius;
          it.iteration_s = seconds_since(iteration_start);
          it.cumulative_s = seconds_since(solve_start);
          const double previous_cost = cost;
          if (candidate_cost < cost && move_to_candidate(candidate_cost)) {  // take the (tiny) improvement
            it.cost_change = previous_cost - candidate_cost;
            it.cost = cost;
            it.step_accepted = true;
            ++summary.successful_steps;
          } else {
            restore_if_speculated();
            ++summary.unsuccessful_steps;
          }
          it.gradient_max_norm = max_abs(g);
          report(it);
          return finish(Termination::FunctionTolerance,
                        "function tolerance reached: |cost change| / cost <= " +
                            significant(options.function_tolerance));
        }
        accepted = options.gauss_newton ? candidate_cost < cost
                                        : it.relative_decrease > options.min_relative_decrease;
        if (!accepted) why_rejected = "the step does not decrease the cost enough";
      }
    } else {
      why_rejected = linear_solver_failure(layout, ls);
    }

    const double previous_cost = cost;
    if (accepted && !move_to_candidate(candidate_cost)) {
      accepted = false;
      why_rejected = "the gradient at the trial point is not finite";
    }
    // A rejected step's speculative evaluation was wasted: none until the next acceptance.
    speculate = options.speculative_evaluation && accepted;
    if (accepted) {
      it.cost_change = previous_cost - candidate_cost;
      ++summary.successful_steps;
      it.step_accepted = true;
      if (!options.gauss_newton) {
        const double r = 2.0 * it.relative_decrease - 1.0;
        double growth = 1.0 / std::max(1.0 / 3.0, 1.0 - r * r * r);
        if (it.relative_decrease > 0.75) growth = std::max(growth, options.very_successful_radius_growth);
        radius = std::min(options.max_trust_region_radius, radius * growth);
        decrease_factor = 2.0;
      }
    } else {
      restore_if_speculated();
      ++summary.unsuccessful_steps;
      if (options.gauss_newton) {
        it.cost = cost;
        it.gradient_max_norm = max_abs(g);
        it.iteration_s = seconds_since(iteration_start);
        it.cumulative_s = seconds_since(solve_start);
        report(it);
        return finish(Termination::NoDecrease, "Gauss-Newton step rejected: " + why_rejected);
      }
      radius /= decrease_factor;
      decrease_factor *= 2.0;
    }
    it.cost = cost;
    it.gradient_max_norm = max_abs(g);
    it.trust_region_radius = radius;
    it.iteration_s = seconds_since(iteration_start);
    it.cumulative_s = seconds_since(solve_start);
    if (!report(it)) return finish(Termination::UserStopped, "stopped by the iteration callback");
    if (!std::isfinite(cost))
      return finish(Termination::Failure, "the cost became non-finite at an accepted point");
    if (accepted && it.gradient_max_norm <= options.gradient_tolerance)
      return finish(Termination::GradientTolerance, "gradient tolerance reached: max |g| = " +
                                                        significant(it.gradient_max_norm));
    if (!accepted && radius < options.min_trust_region_radius)
      return finish(Termination::TrustRegionTooSmall,
                    "trust region radius below its minimum; last rejection: " + why_rejected);
  }
}

}  // namespace lsjit::detail
