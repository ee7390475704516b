// Ceres baseline of the bundle-adjustment benchmark: a BAL problem solved as Ceres'
// bundle_adjuster solves it (AutoDiff SnavelyFunctor of ceres_snavely.h, no loss, no
// parameter ordering given, so that Ceres finds the points as the elimination group itself,
// LEVENBERG_MARQUARDT with Ceres' defaults, one thread). Plain arrays in and out, so that
// lsjit headers and Ceres headers never meet.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lsjit::bench {

struct CeresBalInput {
  std::vector<int32_t> camera_index, point_index;  // per observation
  std::vector<double> xy;                          // 2 per observation
  std::vector<double> cameras;                     // 9 per camera (BAL order), solved in place
  std::vector<double> points;                      // 3 per point, solved in place
};

struct CeresBalOptions {
  // "dense_schur", "sparse_schur" (SuiteSparse) or "iterative_schur" (SCHUR_JACOBI, Ceres'
  // default eta = 0.1).
  std::string linear_solver = "dense_schur";
  int max_iterations = 20;
  // false: function, gradient and parameter tolerances 0, so that exactly max_iterations
  // iterations run (the scaling benchmark's fixed work).
  bool tolerances = true;
  // The first iteration whose cost is <= this is recorded (CeresBalResult::target_*).
  double target_cost = -1;
};

struct CeresBalResult {
  double build_s = 0;  // Problem construction (AddResidualBlock), outside total_s
  // Solver::Summary's times; linear_solver_s includes the Schur elimination.
  double preprocessor_s = 0, residual_s = 0, jacobian_s = 0, linear_solver_s = 0;
  double minimizer_s = 0, total_s = 0;
  double iterations_s = 0;  // iteration_time summed over iterations 1.. (not the initial point)
  int iterations = 0;       // successful + unsuccessful steps (lsjit's meaning)
  int successful_steps = 0;
  int linear_solves = 0;
  int residual_evaluations = 0, jacobian_evaluations = 0;  // Solver::Summary's counts
  int linear_iterations = 0;  // CG iterations summed (1 per solve for the direct solvers)
  double initial_cost = 0, final_cost = 0;
  std::string termination;       // Ceres' TerminationTypeToString
  int eliminated_blocks = 0;     // size of the first group of the ordering Ceres used
  std::string schur_structure;   // Summary::schur_structure_used, e.g. "2,3,9"
  int target_iteration = -1;     // first iteration with cost <= target_cost, or -1
  double target_s = 0;           // wall time from ceres::Solve's start to that iteration
};

CeresBalResult solve_ceres_bal(CeresBalInput& input, const CeresBalOptions& options);

}  // namespace lsjit::bench
