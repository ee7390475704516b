// The built-in costs as cost objects, for Problem::add (the registry of builtin_costs.h
// exposes the same costs by name). Conventions are documented in builtin_costs.h.
//
//   problem.add(lsjit::standard_costs::se3_between_cost(), SE3Var(i), SE3Var(j), z, U);
//
// Each function returns a new Cost object of one closure type per function, so every call
// joins the same kernel group.
#pragma once

#include <limits>

#include "lsjit/runtime/cost.h"

namespace lsjit::standard_costs {

template <template <class> class G, class Var>
inline auto make_prior(const char* name) {
  return cost(name, [](const auto& v, Var x, const auto& prior, const auto& U) {
           return (U * (prior.inverse() * v[x]).log()).eval();
         }).named({"x"}, {"prior", "U"});
}

inline auto se2_between_cost() {
  return cost("se2_between",
              [](const auto& v, SE2Var a, SE2Var b, const auto& z, const auto& U) {
                using S = Sym;
                const SE2<S> xa = v[a], xb = v[b];
                const Eigen::Matrix<S, 2, 1> t_ab =
                    xa.rotation().matrix().transpose() * (xb.translation() - xa.translation());
                Eigen::Matrix<S, 3, 1> e;
                e.head<2>() = t_ab - z.translation();
                e(2) = (z.rotation().inverse() * xa.rotation().inverse() * xb.rotation()).log()(0);
                return (U * e).eval();
              })
      .named({"a", "b"}, {"z", "U"});
}

inline auto se3_between_cost() {
  return cost("se3_between",
              [](const auto& v, SE3Var a, SE3Var b, const auto& z, const auto& U) {
                using S = Sym;
                const SE3<S> xa = v[a], xb = v[b];
                const Eigen::Quaternion<S> qa = xa.rotation().quaternion();
                const Eigen::Quaternion<S> qb = xb.rotation().quaternion();
                const Eigen::Quaternion<S> q_ab = qa.conjugate() * qb;
                const Eigen::Matrix<S, 3, 1> p_ab =
                    qa.conjugate() * (xb.translation() - xa.translation());
                const Eigen::Quaternion<S> dq = z.rotation().quaternion() * q_ab.conjugate();
                Eigen::Matrix<S, 6, 1> e;
                e.head<3>() = p_ab - z.translation();
                e.tail<3>() = 2.0 * dq.vec();
                return (U * e).eval();
              })
      .named({"a", "b"}, {"z", "U"});
}

// Ceres' AngleAxisRotatePoint, with its small-angle branch chosen by select. The large
// branch divides by a guarded theta so that neither branch is NaN where it is not chosen.
template <class S>
inline Eigen::Matrix<S, 3, 1> angle_axis_rotate(const Eigen::Matrix<S, 3, 1>& w,
                                         const Eigen::Matrix<S, 3, 1>& p) {
  using std::cos;
  using std::sin;
  using std::sqrt;
  const S theta2 = w.squaredNorm();
  // Ceres takes Rodrigues' formula when theta2 > epsilon, the first-order one otherwise.
  const auto small = theta2 <= std::numeric_limits<double>::epsilon();
  const S theta = sqrt(select(small, S(1.0), theta2));
  const Eigen::Matrix<S, 3, 1> axis = w / theta;
  const S c = cos(theta), s = sin(theta);
  const Eigen::Matrix<S, 3, 1> axis_cross_p = axis.cross(p);
  const S tmp = axis.dot(p) * (1.0 - c);
  const Eigen::Matrix<S, 3, 1> rodrigues = p * c + axis_cross_p * s + axis * tmp;
  const Eigen::Matrix<S, 3, 1> first_order = p + w.cross(p);
  return select(small, first_order, rodrigues);
}

inline auto snavely_cost() {
  return cost("snavely_reprojection",
              [](const auto& v, VecVar<9> camera, VecVar<3> point, const auto& obs) {
                using S = Sym;
                const Eigen::Matrix<S, 9, 1> cam = v[camera];
                const Eigen::Matrix<S, 3, 1> X = v[point];
                const Eigen::Matrix<S, 3, 1> P =
                    angle_axis_rotate<S>(cam.template head<3>(), X) + cam.template segment<3>(3);
                const S xp = -P(0) / P(2), yp = -P(1) / P(2);
                const S r2 = xp * xp + yp * yp;
                const S distortion = 1.0 + r2 * (cam(7) + cam(8) * r2);
                Eigen::Matrix<S, 2, 1> r;
                r << cam(6) * distortion * xp - obs(0), cam(6) * distortion * yp - obs(1);
                return r;
              })
      .named({"camera", "point"}, {"obs"});
}

inline auto curve_fit_cost() {
  return cost("curve_fit",
              [](const auto& v, ScalarVar m, ScalarVar c, const auto& x, const auto& y) {
                return y - exp(v[m] * x + v[c]);
              })
      .named({"m", "c"}, {"x", "y"});
}

}  // namespace lsjit::standard_costs
