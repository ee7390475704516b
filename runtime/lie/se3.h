// SE(3), rigid motions, templated on the scalar so that it traces with lsjit::Sym.
//
// Layout (fixed by the project):
//   params  (tx, ty, tz, qx, qy, qz, qw)   ambient 7: g2o VERTEX_SE3:QUAT order, the
//                                          quaternion in Eigen's coeffs() order
//   tangent (ρx, ρy, ρz, ωx, ωy, ωz)       dimension 6: translation part first, as in the
//                                          g2o information matrix
//
// g maps p to R p + t. exp is the group exponential (as Sophus and jaxlie):
//   exp(ρ, ω) = (V(ω) ρ, Exp(ω)),   V = I + B K + C K²,   K = hat(ω),
//   B = (1 - cos θ)/θ² = 2 (sin(θ/2)/θ)²,   C = (θ - sin θ)/θ³,
// and log = (V⁻¹(ω) t, Log(R)) with
//   V⁻¹ = I - K/2 + D K²,   D = (1 - (θ/2) cot(θ/2))/θ²   (1/12 + θ²/720 + ... near 0).
// B reuses the quaternion coefficient sin(θ/2)/θ (no cancellation); C and D cancel for small
// θ and switch to series below θ² = lie_detail::kSeriesAngle2 (see series.h). D is finite up to
// and at θ = π (1/π²), and Log is SO3::log (stable near 0 and π), so log is too.
//
// Compose is (R1 R2, t1 + R1 t2), not normalized (the solver renormalizes); inverse() and
// act() assume a unit quaternion (see so3.h). retract(δ) = g * exp(δ) (right perturbation),
// local(h) = log(g⁻¹ h).
#pragma once

#include <ostream>

#include "lsjit/ir/sym_eigen.h"
#include "lsjit/runtime/lie/so3.h"

namespace lsjit {

template <class S>
class SE3 {
 public:
  using Scalar = S;
  static constexpr int kAmbient = 7;
  static constexpr int kTangent = 6;
  static constexpr int kDim = 3;
  using Params = Eigen::Matrix<S, kAmbient, 1>;
  using Tangent = Eigen::Matrix<S, kTangent, 1>;
  using Point = Eigen::Matrix<S, kDim, 1>;
  using Matrix = Eigen::Matrix<S, kDim + 1, kDim + 1>;  // homogeneous
  using Rotation = SO3<S>;

  SE3() : rotation_(), translation_(S(0.0), S(0.0), S(0.0)) {}
  SE3(const Rotation& rotation, const Point& translation)
      : rotation_(rotation), translation_(translation) {}
  static SE3 identity() { return SE3(); }

  static SE3 from_params(const Params& p) {
    return SE3(Rotation::from_params(p.template tail<4>()), p.template head<3>());
  }

  static SE3 exp(const Tangent& xi) {
    const Point rho = xi.template head<3>();
    const Point w = xi.template tail<3>();
    const S t = w.squaredNorm();
    S cos_half, sin_half_over_theta;
    lie_detail::so3_exp_coefficients(t, &cos_half, &sin_half_over_theta);
    const Rotation r = Rotation::from_params(
        typename Rotation::Params(sin_half_over_theta * w(0), sin_half_over_theta * w(1),
                                  sin_half_over_theta * w(2), cos_half));
    const S b = S(2.0) * sin_half_over_theta * sin_half_over_theta;
    const S c = lie_detail::so3_left_jacobian_k2(t);
    const Point wr = lie_detail::cross(w, rho);
    const Point wwr = lie_detail::cross(w, wr);
    return SE3(r, Point(rho + b * wr + c * wwr));
  }

  Tangent log() const {
    const Point w = rotation_.log();
    const S d = lie_detail::so3_left_jacobian_inverse_k2(S(w.squaredNorm()));
    const Point wt = lie_detail::cross(w, translation_);
    const Point wwt = lie_detail::cross(w, wt);
    const Point rho = translation_ - S(0.5) * wt + d * wwt;
    Tangent xi;
    xi << rho, w;
    return xi;
  }

  SE3 inverse() const {
    const Rotation r = rotation_.inverse();
    return SE3(r, Point(-r.act(translation_)));
  }
  SE3 operator*(const SE3& o) const {
    return SE3(rotation_ * o.rotation_, Point(translation_ + rotation_.act(o.translation_)));
  }
  Point act(const Point& p) const { return rotation_.act(p) + translation_; }
  Point operator*(const Point& p) const { return act(p); }

  // [[R, t], [0, 0, 0, 1]].
  Matrix matrix() const {
    Matrix m;
    m.template topLeftCorner<3, 3>() = rotation_.matrix();
    m.template topRightCorner<3, 1>() = translation_;
    m(3, 0) = S(0.0);
    m(3, 1) = S(0.0);
    m(3, 2) = S(0.0);
    m(3, 3) = S(1.0);
    return m;
  }
  Params params() const {
    Params p;
    p << translation_, rotation_.params();
    return p;
  }
  const Point& translation() const { return translation_; }
  const Rotation& rotation() const { return rotation_; }
  // The quaternion divided by its norm.
  SE3 normalized() const { return SE3(rotation_.normalized(), translation_); }

  SE3 retract(const Tangent& delta) const { return *this * exp(delta); }
  Tangent local(const SE3& other) const { return (inverse() * other).log(); }

  template <class T>
  SE3<T> cast() const {
    return SE3<T>::from_params(params().template cast<T>());
  }

 private:
  Rotation rotation_;
  Point translation_;
};

using SE3d = SE3<double>;

inline std::ostream& operator<<(std::ostream& os, const SE3<double>& g) {
  const auto p = g.params();
  return os << "SE3(t=[" << p(0) << ", " << p(1) << ", " << p(2) << "], q=[" << p(3) << ", " << p(4)
            << ", " << p(5) << ", " << p(6) << "])";
}

}  // namespace lsjit
