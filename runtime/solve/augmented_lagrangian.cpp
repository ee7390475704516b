#include "lsjit/runtime/solve/augmented_lagrangian.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "lsjit/runtime/solve/levenberg_marquardt.h"

namespace lsjit::detail {
namespace {

// A constraint group's runtime data: its own copy of the group's rows, whose multiplier and
// penalty columns this loop rewrites.
struct ConstraintGroup {
  uint32_t group;
  BigVector<double> data;  // a copy of the group's data, with this solve's multipliers and penalty
  std::vector<double> c;  // c(x), residual_dim per instance
};

}  // namespace

void augmented_lagrangian(const ProblemLayout& layout, Evaluator& evaluator,
                          linear::LinearSolver& solver, State& state, const SolverOptions& options,
                          SolveSummary& summary, std::chrono::steady_clock::time_point solve_start) {
  const ConstraintOptions& o = options.constraints;
  std::ostream& log = options.log ? *options.log : std::cout;
  std::vector<ConstraintGroup> groups;
  for (uint32_t g = 0; g < layout.groups.size(); ++g) {
    const KernelGroup& kg = layout.groups[g];
    if (kg.kind == ir::CostKind::LeastSquares) continue;
    groups.push_back({g, kg.data, std::vector<double>(static_cast<size_t>(kg.instances) * kg.residual_dim)});
  }
  double penalty = o.initial_penalty;
  auto write_penalty = [&] {
    for (ConstraintGroup& cg : groups) {
      const KernelGroup& kg = layout.groups[cg.group];
      for (int64_t i = 0; i < kg.instances; ++i)
        cg.data[i * kg.data_stride + kg.user_data_stride + kg.residual_dim] = penalty;
    }
  };
  write_penalty();
  for (ConstraintGroup& cg : groups) evaluator.set_group_data(cg.group, cg.data.data());

  SolverOptions inner_options = options;
  inner_options.min_lm_diagonal = std::max(options.min_lm_diagonal, o.inner_min_lm_diagonal);
  summary.initial_cost = evaluator.objective(state);
  double previous_violation = std::numeric_limits<double>::infinity();
  for (int outer = 1;; ++outer) {
    SolveSummary inner;
    levenberg_marquardt(layout, evaluator, solver, state, inner_options, inner, solve_start);
    summary.iterations += inner.iterations;
    summary.successful_steps += inner.successful_steps;
    summary.unsuccessful_steps += inner.unsuccessful_steps;
    summary.residual_evaluations += inner.residual_evaluations;
    summary.normal_evaluations += inner.normal_evaluations;
    summary.residual_s += inner.residual_s;
    summary.jacobian_s += inner.jacobian_s;
    summary.linear_solver_s += inner.linear_solver_s;
    summary.per_iteration.insert(summary.per_iteration.end(), inner.per_iteration.begin(),
                                 inner.per_iteration.end());
    if (inner.termination == Termination::Failure || inner.termination == Termination::UserStopped) {
      summary.termination = inner.termination;
      summary.message = "outer iteration " + std::to_string(outer) + ": " + inner.message;
      summary.final_cost = evaluator.objective(state);
      return;
    }

    // Violation (with the multipliers the inner solve used), then the multiplier update.
    double violation = 0;
    for (ConstraintGroup& cg : groups) {
      const KernelGroup& kg = layout.groups[cg.group];
      evaluator.constraint_values(state, cg.group, cg.c.data());
      const double sign = kg.kind == ir::CostKind::InequalityGe ? -1.0 : 1.0;
      for (int64_t i = 0; i < kg.instances; ++i)
        for (uint32_t k = 0; k < kg.residual_dim; ++k) {
          const double c = sign * cg.c[i * kg.residual_dim + k];
          double& lambda = cg.data[i * kg.data_stride + kg.user_data_stride + k];
          if (kg.kind == ir::CostKind::Equality) {
            violation = std::max(violation, std::abs(c));
            lambda = lambda + penalty * c;
          } else {
            violation = std::max(violation, std::abs(std::max(c, -lambda / penalty)));
            lambda = std::max(0.0, lambda + penalty * c);
          }
          lambda = std::clamp(lambda, -o.max_multiplier, o.max_multiplier);
        }
    }
    if (!std::isfinite(violation)) violation = std::numeric_limits<double>::infinity();
    const double objective = evaluator.objective(state);
    summary.outer_iterations.push_back({outer, objective, violation, penalty, inner.iterations, inner.termination});
    summary.constraint_violation = violation;
    summary.final_cost = objective;
    if (options.verbose) {
      char line[200];
      std::snprintf(line, sizeof line,
                    "outer %3d  objective % 14.6e  violation % 10.3e  penalty % 9.2e  inner iterations %d (%s)\n",
                    outer, objective, violation, penalty, inner.iterations,
                    std::string(termination_name(inner.termination)).c_str());
      log << line << std::flush;  // as LM's rows: visible even if the run is killed
    }
    if (violation <= o.violation_tolerance && converged(inner.termination)) {
      summary.termination = inner.termination;
      summary.message = "constraints satisfied (violation " + significant(violation) +
                        ") and the last inner solve converged: " + inner.message;
      return;
    }
    if (layout.tangent_dim == 0) {  // violated, and nothing can move: no outer loop helps
      summary.termination = Termination::Failure;
      summary.message = "the constraints are violated (violation " + significant(violation) +
                        ") and no variable is free to move: infeasible as given (hold fewer "
                        "variables constant)";
      return;
    }
    if (inner.termination == Termination::TimeLimit) {  // the whole solve's budget is spent
      summary.termination = Termination::TimeLimit;
      summary.message = "time limit reached in outer iteration " + std::to_string(outer) + " (constraint violation " +
                        significant(violation) + ")";
      return;
    }
    if (outer >= o.max_outer_iterations) {
      summary.termination = Termination::MaxIterations;
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "augmented Lagrangian: %d outer iterations, constraint violation %.3e > tolerance %.1e",
                    outer, violation, o.violation_tolerance);
      summary.message = buf;
      return;
    }
    if (violation > o.violation_reduction * previous_violation)
      penalty = std::min(o.max_penalty, penalty * o.penalty_factor);
    previous_violation = violation;
    write_penalty();
  }
}

}  // namespace lsjit::detail
