// Ceres baseline of the end-to-end pose-graph benchmark: a g2o pose graph solved by Ceres
// as its users would (AutoDiff functors of ceres_pose_graph_costs.h, LEVENBERG_MARQUARDT,
// SPARSE_NORMAL_CHOLESKY on SuiteSparse, Ceres' default tolerances, one thread).
// Plain arrays in and out, so that lsjit headers and Ceres headers never meet.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lsjit::bench {

struct CeresPoseGraphInput {
  int dimension = 3;                    // 2: poses (x, y, θ); 3: (tx, ty, tz, qx, qy, qz, qw)
  std::vector<double> poses;            // 3 or 7 per pose; the solve updates them in place
  std::vector<int32_t> from, to;        // pose indices of each edge
  std::vector<double> measurements;     // per edge: (dx, dy, dθ) or (tx, ty, tz, qx, qy, qz, qw)
  std::vector<double> sqrt_information; // per edge: U, 3x3 or 6x6, column-major
  std::vector<int32_t> constant;        // pose indices held constant
  double initial_trust_region_radius = 1e4;  // Ceres' default unless a run asks otherwise
};

struct CeresPoseGraphResult {
  double build_s = 0;  // Problem construction (AddResidualBlock, SetManifold, ...)
  // Solver::Summary's times.
  double preprocessor_s = 0, residual_s = 0, jacobian_s = 0, linear_solver_s = 0;
  double minimizer_s = 0, postprocessor_s = 0, total_s = 0;
  int iterations = 0;  // successful + unsuccessful steps (lsjit's meaning)
  int linear_solves = 0;
  double initial_cost = 0, final_cost = 0;
  std::string termination;  // Ceres' TerminationTypeToString
};

CeresPoseGraphResult solve_ceres_pose_graph(CeresPoseGraphInput& input);

}  // namespace lsjit::bench
