#include "ceres_pose_graph.h"

#include <ceres/autodiff_cost_function.h>
#include <ceres/problem.h>
#include <ceres/solver.h>
#include <ceres/types.h>

#include <chrono>
#include <memory>
#include <stdexcept>

#include "ceres_pose_graph_costs.h"

namespace lsjit::bench {
namespace {

using Clock = std::chrono::steady_clock;

// The manifolds outlive the problem (declared first) and are shared by every pose, so the
// problem borrows them; it owns the cost functions.
struct Built {
  Pose2Manifold pose2;
  ceres::EigenQuaternionManifold quaternion;
  std::unique_ptr<ceres::Problem> problem;
};

void add_se2(const CeresPoseGraphInput& in, double* poses, Built& b) {
  ceres::Problem& problem = *b.problem;
  for (size_t i = 0; i < in.from.size(); ++i) {
    const double* z = &in.measurements[3 * i];
    auto* f = new Se2BetweenFunctor{Eigen::Vector2d(z[0], z[1]), z[2],
                                    Eigen::Map<const Eigen::Matrix3d>(&in.sqrt_information[9 * i])};
    problem.AddResidualBlock(new ceres::AutoDiffCostFunction<Se2BetweenFunctor, 3, 3, 3>(f), nullptr,
                             poses + 3 * in.from[i], poses + 3 * in.to[i]);
  }
  const size_t n = in.poses.size() / 3;
  for (size_t k = 0; k < n; ++k)
    if (problem.HasParameterBlock(poses + 3 * k)) problem.SetManifold(poses + 3 * k, &b.pose2);
  for (int32_t k : in.constant)
    if (problem.HasParameterBlock(poses + 3 * k)) problem.SetParameterBlockConstant(poses + 3 * k);
}

// Ceres' pose_graph_3d layout: each pose is a translation block (3) and a quaternion block
// (4, x y z w as Eigen stores it), which is also how the input stores a pose.
void add_se3(const CeresPoseGraphInput& in, double* poses, Built& b) {
  ceres::Problem& problem = *b.problem;
  for (size_t i = 0; i < in.from.size(); ++i) {
    const double* z = &in.measurements[7 * i];
    auto* f = new Se3BetweenFunctor{Eigen::Vector3d(z[0], z[1], z[2]),
                                    Eigen::Quaterniond(z[6], z[3], z[4], z[5]),
                                    Eigen::Map<const Eigen::Matrix<double, 6, 6>>(&in.sqrt_information[36 * i])};
    double* a = poses + 7 * in.from[i];
    double* c = poses + 7 * in.to[i];
    problem.AddResidualBlock(new ceres::AutoDiffCostFunction<Se3BetweenFunctor, 6, 3, 4, 3, 4>(f),
                             nullptr, a, a + 3, c, c + 3);
  }
  const size_t n = in.poses.size() / 7;
  for (size_t k = 0; k < n; ++k)
    if (problem.HasParameterBlock(poses + 7 * k + 3)) problem.SetManifold(poses + 7 * k + 3, &b.quaternion);
  for (int32_t k : in.constant) {
    if (!problem.HasParameterBlock(poses + 7 * k)) continue;
    problem.SetParameterBlockConstant(poses + 7 * k);
    problem.SetParameterBlockConstant(poses + 7 * k + 3);
  }
}

}  // namespace

CeresPoseGraphResult solve_ceres_pose_graph(CeresPoseGraphInput& in) {
  if (in.dimension != 2 && in.dimension != 3) throw std::invalid_argument("dimension must be 2 or 3");
  CeresPoseGraphResult r;
  const auto start = Clock::now();
  Built b;
  ceres::Problem::Options problem_options;
  problem_options.manifold_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
  b.problem = std::make_unique<ceres::Problem>(problem_options);
  if (in.dimension == 2) add_se2(in, in.poses.data(), b);
  else add_se3(in, in.poses.data(), b);
  r.build_s = std::chrono::duration<double>(Clock::now() - start).count();

  // Everything not set here is Ceres' default: LEVENBERG_MARQUARDT trust region, its
  // radius schedule (from in.initial_trust_region_radius), function/gradient/parameter tolerances 1e-6/1e-10/1e-8, 50 iterations,
  // Jacobi scaling, the automatic (AMD) ordering.
  ceres::Solver::Options options;
  options.linear_solver_type = ceres::SPARSE_NORMAL_CHOLESKY;
  options.sparse_linear_algebra_library_type = ceres::SUITE_SPARSE;
  options.num_threads = 1;
  options.logging_type = ceres::SILENT;
  options.initial_trust_region_radius = in.initial_trust_region_radius;
  ceres::Solver::Summary summary;
  ceres::Solve(options, b.problem.get(), &summary);
  if (summary.termination_type == ceres::FAILURE) throw std::runtime_error("Ceres: " + summary.message);

  r.preprocessor_s = summary.preprocessor_time_in_seconds;
  r.residual_s = summary.residual_evaluation_time_in_seconds;
  r.jacobian_s = summary.jacobian_evaluation_time_in_seconds;
  r.linear_solver_s = summary.linear_solver_time_in_seconds;
  r.minimizer_s = summary.minimizer_time_in_seconds;
  r.postprocessor_s = summary.postprocessor_time_in_seconds;
  r.total_s = summary.total_time_in_seconds;
  r.iterations = summary.num_successful_steps + summary.num_unsuccessful_steps;
  r.linear_solves = summary.num_linear_solves;
  r.initial_cost = summary.initial_cost;
  r.final_cost = summary.final_cost;
  r.termination = ceres::TerminationTypeToString(summary.termination_type);
  return r;
}

}  // namespace lsjit::bench
