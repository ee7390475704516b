#include "lsjit/runtime/builtin_costs.h"

#include <limits>
#include <vector>

#include "lsjit/runtime/cost.h"

namespace lsjit {
namespace {

template <template <class> class G, class Var>
auto make_prior(const char* name) {
  return cost(name, [](const auto& v, Var x, const auto& prior, const auto& U) {
           return (U * (prior.inverse() * v[x]).log()).eval();
         }).named({"x"}, {"prior", "U"});
}

auto se2_between_cost() {
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

auto se3_between_cost() {
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
Eigen::Matrix<S, 3, 1> angle_axis_rotate(const Eigen::Matrix<S, 3, 1>& w,
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

auto snavely_cost() {
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

auto curve_fit_cost() {
  return cost("curve_fit",
              [](const auto& v, ScalarVar m, ScalarVar c, const auto& x, const auto& y) {
                return y - exp(v[m] * x + v[c]);
              })
      .named({"m", "c"}, {"x", "y"});
}

template <class C, class... Args>
BuiltinCost entry(const C& c, std::string description, Args... example_args) {
  return {c.name, std::move(description),
          [c, example_args...] { return lsjit::trace(c, example_args...); }};
}

std::vector<BuiltinCost> make_registry() {
  using Eigen::Matrix;
  std::vector<BuiltinCost> r;
  r.push_back(entry(make_prior<SO2, SO2Var>("so2_prior"), "prior on an SO2 rotation",
                    SO2Var(0), SO2d(), Matrix<double, 1, 1>::Zero()));
  r.push_back(entry(make_prior<SE2, SE2Var>("se2_prior"), "prior on an SE2 pose", SE2Var(0),
                    SE2d(), Matrix<double, 3, 3>::Zero()));
  r.push_back(entry(make_prior<SO3, SO3Var>("so3_prior"), "prior on an SO3 rotation",
                    SO3Var(0), SO3d(), Matrix<double, 3, 3>::Zero()));
  r.push_back(entry(make_prior<SE3, SE3Var>("se3_prior"), "prior on an SE3 pose", SE3Var(0),
                    SE3d(), Matrix<double, 6, 6>::Zero()));
  r.push_back(entry(se2_between_cost(), "g2o EDGE_SE2 between two SE2 poses", SE2Var(0),
                    SE2Var(1), SE2d(), Matrix<double, 3, 3>::Zero()));
  r.push_back(entry(se3_between_cost(), "g2o EDGE_SE3:QUAT between two SE3 poses", SE3Var(0),
                    SE3Var(1), SE3d(), Matrix<double, 6, 6>::Zero()));
  r.push_back(entry(snavely_cost(), "BAL reprojection through a Snavely camera", VecVar<9>(0),
                    VecVar<3>(1), Matrix<double, 2, 1>::Zero()));
  r.push_back(entry(curve_fit_cost(), "1-D curve fit y = exp(m x + c)", ScalarVar(0),
                    ScalarVar(1), 0.0, 0.0));
  return r;
}

}  // namespace

std::span<const BuiltinCost> builtin_costs() {
  static const std::vector<BuiltinCost> registry = make_registry();
  return registry;
}

const BuiltinCost* find_builtin_cost(std::string_view name) {
  for (const BuiltinCost& c : builtin_costs())
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace lsjit
