// The g2o edge residuals as Ceres users write them (templated functors for
// AutoDiffCostFunction, after Ceres' pose_graph_2d and pose_graph_3d examples), with the
// conventions of docs/architecture.md, "Conventions": r = U·e with U the UPPER Cholesky
// factor of Ω (UᵀU = Ω). Ceres' examples multiply by the lower factor L instead; that is
// a different cost for a non-diagonal Ω, and the reference costs in docs/benchmarks-history.md are
// those of U.
//
// Private to the Ceres baselines (ceres_costs.cpp, ceres_pose_graph.cpp): includes Ceres.
#pragma once

#include <ceres/manifold.h>
#include <ceres/jet.h>

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cmath>

namespace lsjit::bench {

// Ceres' pose_graph_2d NormalizeAngle: into [-π, π). lsjit wraps into (-π, π]
// (docs/architecture.md, "Conventions"); the two differ only at exactly ±π, where the
// residual's square is the same.
template <class T>
T normalize_angle(const T& angle) {
  using std::floor;
  const T two_pi(2.0 * M_PI);
  return angle - two_pi * floor((angle + T(M_PI)) / two_pi);
}

// SE2 between on poses (x, y, θ): e = [R(θa)ᵀ(t_b − t_a) − d_t ; wrap(θb − θa − dθ)].
struct Se2BetweenFunctor {
  Eigen::Vector2d t_measured;
  double theta_measured;
  Eigen::Matrix3d U;
  template <class T>
  bool operator()(const T* a, const T* b, T* residual_ptr) const {
    using std::cos;
    using std::sin;
    const T c = cos(a[2]), s = sin(a[2]);
    const T dx = b[0] - a[0], dy = b[1] - a[1];
    Eigen::Matrix<T, 3, 1> e;
    e(0) = c * dx + s * dy - T(t_measured(0));
    e(1) = -s * dx + c * dy - T(t_measured(1));
    e(2) = normalize_angle(b[2] - a[2] - T(theta_measured));
    Eigen::Map<Eigen::Matrix<T, 3, 1>> residual(residual_ptr);
    residual = U.template cast<T>() * e;
    return true;
  }
};

// The (x, y, θ) pose as one parameter block: additive, with θ normalized after each step
// (what pose_graph_2d's AngleManifold does for its separate yaw block). One block of 3
// rather than the example's three blocks of 1 gives Ceres the same block structure as
// lsjit's SE2Var, so both orderings work on the same graph.
class Pose2Manifold : public ceres::Manifold {
 public:
  int AmbientSize() const override { return 3; }
  int TangentSize() const override { return 3; }
  bool Plus(const double* x, const double* delta, double* x_plus_delta) const override {
    x_plus_delta[0] = x[0] + delta[0];
    x_plus_delta[1] = x[1] + delta[1];
    x_plus_delta[2] = normalize_angle(x[2] + delta[2]);
    return true;
  }
  bool PlusJacobian(const double*, double* jacobian) const override { return identity(jacobian); }
  bool Minus(const double* y, const double* x, double* y_minus_x) const override {
    y_minus_x[0] = y[0] - x[0];
    y_minus_x[1] = y[1] - x[1];
    y_minus_x[2] = normalize_angle(y[2] - x[2]);
    return true;
  }
  bool MinusJacobian(const double*, double* jacobian) const override { return identity(jacobian); }

 private:
  static bool identity(double* j) {
    Eigen::Map<Eigen::Matrix3d>(j).setIdentity();
    return true;
  }
};

// Ceres' pose_graph_3d residual (translation and quaternion blocks): q_ab = q_a⁻¹q_b,
// p_ab = R(q_a)ᵀ(p_b − p_a), e = [p_ab − p_meas ; 2·vec(q_meas·q_ab⁻¹)].
struct Se3BetweenFunctor {
  Eigen::Vector3d p_measured;
  Eigen::Quaterniond q_measured;
  Eigen::Matrix<double, 6, 6> U;
  template <class T>
  bool operator()(const T* p_a_ptr, const T* q_a_ptr, const T* p_b_ptr, const T* q_b_ptr,
                  T* residual_ptr) const {
    Eigen::Map<const Eigen::Matrix<T, 3, 1>> p_a(p_a_ptr), p_b(p_b_ptr);
    Eigen::Map<const Eigen::Quaternion<T>> q_a(q_a_ptr), q_b(q_b_ptr);
    const Eigen::Quaternion<T> q_a_inverse = q_a.conjugate();
    const Eigen::Quaternion<T> q_ab = q_a_inverse * q_b;
    const Eigen::Matrix<T, 3, 1> p_ab = q_a_inverse * (p_b - p_a);
    const Eigen::Quaternion<T> delta_q = q_measured.template cast<T>() * q_ab.conjugate();
    Eigen::Map<Eigen::Matrix<T, 6, 1>> residual(residual_ptr);
    residual.template head<3>() = p_ab - p_measured.template cast<T>();
    residual.template tail<3>() = T(2.0) * delta_q.vec();
    residual.applyOnTheLeft(U.template cast<T>());
    return true;
  }
};

}  // namespace lsjit::bench
