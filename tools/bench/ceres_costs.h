// Ceres baselines for the kernel benchmark: the same two costs as Ceres users write them
// (AutoDiffCostFunction over templated functors, as in Ceres' bundle_adjuster and
// pose_graph_3d examples), evaluated one residual block at a time with
// CostFunction::Evaluate and all at once with Problem::Evaluate. Ceres headers stay in
// ceres_costs.cpp, which is compiled -O3 -march=native like the hand-written code.
//
// All pointers are borrowed and must outlive the object; parameter arrays are the ones the
// Ceres problem is built on (Problem::Evaluate reads them).
#pragma once

#include <cstdint>
#include <memory>

namespace lsjit::bench {

// Snavely reprojection over `observations` observations: camera index, point index and
// (x, y) of each; cameras 9 doubles each, points 3 each (BAL order).
class CeresBal {
 public:
  CeresBal(int64_t observations, const int32_t* camera_index, const int32_t* point_index,
           const double* xy, double* cameras, double* points, int64_t num_cameras, int64_t num_points);
  ~CeresBal();
  // CostFunction::Evaluate with residuals and both Jacobians (ambient = tangent here) for
  // every observation in order; returns a checksum of what was written so the work is kept.
  double evaluate_blocks(double* residuals, double* jacobian_camera, double* jacobian_point);
  // Problem::Evaluate(cost, residuals, gradient = none, jacobian as CRSMatrix), one thread.
  double evaluate_problem();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The g2o SE3:QUAT between cost on `edges` edges: pose indices, the measurement as
// (tx, ty, tz, qx, qy, qz, qw) and the 6x6 square-root information U (column-major) of
// each; poses 7 doubles each in the same order (translation then quaternion, Ceres'
// pose_graph_3d layout as two blocks, with EigenQuaternionManifold on the quaternion).
class CeresSe3Between {
 public:
  CeresSe3Between(int64_t edges, const int32_t* from, const int32_t* to, const double* measurement,
                  const double* sqrt_information, double* poses, int64_t num_poses);
  ~CeresSe3Between();
  // Per block: residual (6) and the four ambient Jacobians 6x3 (p_a), 6x4 (q_a), 6x3 (p_b),
  // 6x4 (q_b), each row-major, one after the other: 84 doubles per edge.
  double evaluate_blocks(double* residuals, double* jacobians);
  // Problem::Evaluate with the Jacobian in the tangent space (the manifold applied).
  double evaluate_problem();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lsjit::bench
