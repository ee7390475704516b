#include "ceres_bal.h"

#include <ceres/autodiff_cost_function.h>
#include <ceres/iteration_callback.h>
#include <ceres/problem.h>
#include <ceres/solver.h>
#include <ceres/types.h>

#include <chrono>
#include <stdexcept>

#include "lsjit/common/clock.h"

#include "ceres_snavely.h"

namespace lsjit::bench {
namespace {

// Records when the cost first reaches the target. Ceres calls it after every iteration,
// the initial point included; the clock starts just before ceres::Solve, so the time
// includes the preprocessor, as Ceres' total does.
class TargetCallback : public ceres::IterationCallback {
 public:
  TargetCallback(double target, Clock::time_point start, CeresBalResult& result)
      : target_(target), start_(start), result_(result) {}
  ceres::CallbackReturnType operator()(const ceres::IterationSummary& it) override {
    if (result_.target_iteration < 0 && it.cost <= target_) {
      result_.target_iteration = it.iteration;
      result_.target_s = seconds_since(start_);
    }
    return ceres::SOLVER_CONTINUE;
  }

 private:
  double target_;
  Clock::time_point start_;
  CeresBalResult& result_;
};

ceres::LinearSolverType solver_type(const std::string& name) {
  if (name == "dense_schur") return ceres::DENSE_SCHUR;
  if (name == "sparse_schur") return ceres::SPARSE_SCHUR;
  if (name == "iterative_schur") return ceres::ITERATIVE_SCHUR;
  throw std::invalid_argument("Ceres BAL: unknown linear solver " + name);
}

}  // namespace

CeresBalResult solve_ceres_bal(CeresBalInput& in, const CeresBalOptions& opts) {
  CeresBalResult r;
  const auto build_start = Clock::now();
  ceres::Problem problem;  // owns the cost functions
  for (size_t i = 0; i < in.camera_index.size(); ++i) {
    auto* cost = new ceres::AutoDiffCostFunction<SnavelyFunctor, 2, 9, 3>(
        new SnavelyFunctor{in.xy[2 * i], in.xy[2 * i + 1]});
    problem.AddResidualBlock(cost, nullptr, in.cameras.data() + 9 * size_t(in.camera_index[i]),
                             in.points.data() + 3 * size_t(in.point_index[i]));
  }
  r.build_s = seconds_since(build_start);

  // Not set here, Ceres' defaults: LEVENBERG_MARQUARDT and its radius schedule, Jacobi
  // scaling, eta = 0.1 for ITERATIVE_SCHUR, the automatic Schur ordering (points first).
  ceres::Solver::Options options;
  options.linear_solver_type = solver_type(opts.linear_solver);
  options.preconditioner_type = ceres::SCHUR_JACOBI;
  options.sparse_linear_algebra_library_type = ceres::SUITE_SPARSE;
  options.num_threads = 1;
  options.max_num_iterations = opts.max_iterations;
  options.logging_type = ceres::SILENT;
  if (!opts.tolerances) {
    options.function_tolerance = 0;
    options.gradient_tolerance = 0;
    options.parameter_tolerance = 0;
  }
  const auto start = Clock::now();
  TargetCallback callback(opts.target_cost, start, r);
  options.callbacks.push_back(&callback);
  ceres::Solver::Summary summary;
  ceres::Solve(options, &problem, &summary);
  if (summary.termination_type == ceres::FAILURE) throw std::runtime_error("Ceres: " + summary.message);

  r.preprocessor_s = summary.preprocessor_time_in_seconds;
  r.residual_s = summary.residual_evaluation_time_in_seconds;
  r.jacobian_s = summary.jacobian_evaluation_time_in_seconds;
  r.linear_solver_s = summary.linear_solver_time_in_seconds;
  r.minimizer_s = summary.minimizer_time_in_seconds;
  r.total_s = summary.total_time_in_seconds;
  // Counted from the log rather than num_successful_steps, which may include the initial
  // point depending on the Ceres version.
  for (const ceres::IterationSummary& it : summary.iterations) {
    if (it.iteration == 0) continue;
    ++r.iterations;
    r.successful_steps += it.step_is_successful;
    r.iterations_s += it.iteration_time_in_seconds;
    r.linear_iterations += it.linear_solver_iterations;
  }
  r.linear_solves = summary.num_linear_solves;
  r.residual_evaluations = summary.num_residual_evaluations;
  r.jacobian_evaluations = summary.num_jacobian_evaluations;
  r.initial_cost = summary.initial_cost;
  r.final_cost = summary.final_cost;
  r.termination = ceres::TerminationTypeToString(summary.termination_type);
  if (!summary.linear_solver_ordering_used.empty())
    r.eliminated_blocks = summary.linear_solver_ordering_used.front();
  r.schur_structure = summary.schur_structure_used;
  return r;
}

}  // namespace lsjit::bench
