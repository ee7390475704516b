// What the Ceres interop tests share: the AutoDiff functors Ceres users write for the same
// costs as lsjit's built-ins (Ceres' bundle_adjuster, curve_fitting and pose_graph_3d
// examples, on lsjit's parameter layouts), a scaled comparison, and a quiet solver setup.
#pragma once

#include <ceres/ceres.h>
#include <ceres/rotation.h>
#include <doctest/doctest.h>

#include "lsjit/interop/ceres.h"

// Ceres includes glog, whose CHECK aborts the process on failure; these tests mean
// doctest's. Include this header after every Ceres header.
#undef CHECK
#define CHECK DOCTEST_CHECK

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace lsjit::testing {

// |a - b| relative to max(1, |a|, |b|): absolute near zero, relative for large entries.
inline double scaled_difference(double a, double b) {
  return std::abs(a - b) / std::max({1.0, std::abs(a), std::abs(b)});
}

// Ceres' SnavelyReprojectionError (bundle_adjuster), residual pred - observation.
struct SnavelyFunctor {
  double observed_x, observed_y;
  template <class T>
  bool operator()(const T* camera, const T* point, T* residuals) const {
    T p[3];
    ceres::AngleAxisRotatePoint(camera, point, p);
    p[0] += camera[3];
    p[1] += camera[4];
    p[2] += camera[5];
    const T xp = -p[0] / p[2];
    const T yp = -p[1] / p[2];
    const T r2 = xp * xp + yp * yp;
    const T distortion = 1.0 + r2 * (camera[7] + camera[8] * r2);
    residuals[0] = camera[6] * distortion * xp - observed_x;
    residuals[1] = camera[6] * distortion * yp - observed_y;
    return true;
  }
};

// Ceres' curve_fitting ExponentialResidual: y - exp(m x + c).
struct ExponentialFunctor {
  double x, y;
  template <class T>
  bool operator()(const T* m, const T* c, T* residual) const {
    using std::exp;
    residual[0] = y - exp(m[0] * x + c[0]);
    return true;
  }
};

// The curve of Ceres' curve_fitting example, y = exp(0.3 x + 0.1), with N(0, 0.2²) noise at
// `points` x evenly in [0, 5), drawn from std::mt19937(seed). With `outlier` nonzero, every
// 12th point from the 6th (i % 12 == 5) is that far off: gross outliers for a robust loss.
struct CurveData {
  std::vector<double> x, y;
};
inline CurveData curve_data(int points, unsigned seed, double outlier = 0) {
  CurveData d;
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.2);
  for (int i = 0; i < points; ++i) {
    const double x = 5.0 * i / points;
    d.x.push_back(x);
    d.y.push_back(std::exp(0.3 * x + 0.1) + noise(rng) + (i % 12 == 5 ? outlier : 0.0));
  }
  return d;
}

// Ceres' pose_graph_3d PoseGraph3dErrorTerm on lsjit's SE3 layout (one block of
// tx ty tz qx qy qz qw per pose), with r = U·e, U the upper Cholesky factor of Ω.
struct Se3BetweenFunctor {
  Eigen::Vector3d p_measured;
  Eigen::Quaterniond q_measured;
  Eigen::Matrix<double, 6, 6> U;
  template <class T>
  bool operator()(const T* a, const T* b, T* residual_ptr) const {
    const Eigen::Map<const Eigen::Matrix<T, 3, 1>> p_a(a), p_b(b);
    const Eigen::Map<const Eigen::Quaternion<T>> q_a(a + 3), q_b(b + 3);
    const Eigen::Quaternion<T> q_a_inverse = q_a.conjugate();
    const Eigen::Quaternion<T> q_ab = q_a_inverse * q_b;
    const Eigen::Matrix<T, 3, 1> p_ab = q_a_inverse * (p_b - p_a);
    const Eigen::Quaternion<T> delta_q = q_measured.template cast<T>() * q_ab.conjugate();
    Eigen::Matrix<T, 6, 1> e;
    e << p_ab - p_measured.template cast<T>(), T(2.0) * delta_q.vec();
    Eigen::Map<Eigen::Matrix<T, 6, 1>> residual(residual_ptr);
    residual = U.template cast<T>() * e;
    return true;
  }
};

// Deterministic and silent: one thread, no log output.
inline ceres::Solver::Options quiet_options(ceres::LinearSolverType linear_solver) {
  ceres::Solver::Options options;
  options.linear_solver_type = linear_solver;
  options.num_threads = 1;
  options.logging_type = ceres::SILENT;
  options.minimizer_progress_to_stdout = false;
  return options;
}

// Evaluates `f` at `parameters` with every Jacobian block requested; returns the residuals
// and fills `jacobians` (one row-major block per parameter block).
inline std::vector<double> evaluate_all(const ceres::CostFunction& f, const std::vector<const double*>& parameters,
                                        std::vector<std::vector<double>>& jacobians) {
  std::vector<double> residuals(f.num_residuals());
  jacobians.assign(parameters.size(), {});
  std::vector<double*> blocks;
  for (size_t i = 0; i < parameters.size(); ++i) {
    jacobians[i].assign(static_cast<size_t>(f.num_residuals()) * f.parameter_block_sizes()[i], 0.0);
    blocks.push_back(jacobians[i].data());
  }
  REQUIRE(f.Evaluate(parameters.data(), residuals.data(), blocks.data()));
  return residuals;
}

}  // namespace lsjit::testing
