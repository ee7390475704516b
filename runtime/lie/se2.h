// SE(2), planar rigid motions, templated on the scalar so that it traces with lsjit::Sym.
//
// Layout (fixed by the project):
//   params  (x, y, cos θ, sin θ)   ambient 4: translation, then the unit complex rotation
//   tangent (vx, vy, ω)            dimension 3: the order of the g2o SE2 information matrix
//                                  (x, y, θ)
//
// g maps p to R p + t. exp is the group exponential with the left Jacobian V of SO(2):
//   exp(v, ω) = (V(ω) v, Exp(ω)),  V(ω) = [[A, -B], [B, A]],  A = sin ω/ω,  B = (1 - cos ω)/ω
// log inverts it with θ = atan2(sin, cos) ∈ (-π, π] and
//   V⁻¹(θ) = [[a, b], [-b, a]],  a = (θ/2) cot(θ/2),  b = θ/2,
// both stable up to θ = ±π. A and a use a series in θ² below θ² = lie_detail::kSeriesAngle2
// (see series.h for the thresholds); B is computed as 2 sin²(ω/2)/ω, which does not cancel.
//
// Compose is (R1 R2, t1 + R1 t2), multiplying the rotations' complex numbers without
// normalizing (the solver renormalizes); inverse() uses the conjugate rotation, so it and
// act() assume a unit rotation. retract(δ) = g * exp(δ) (right perturbation), local(h) =
// log(g⁻¹ h).
#pragma once

#include <ostream>

#include "lsjit/ir/sym_eigen.h"
#include "lsjit/runtime/lie/so2.h"

namespace lsjit {

template <class S>
class SE2 {
 public:
  using Scalar = S;
  static constexpr int kAmbient = 4;
  static constexpr int kTangent = 3;
  static constexpr int kDim = 2;
  using Params = Eigen::Matrix<S, kAmbient, 1>;
  using Tangent = Eigen::Matrix<S, kTangent, 1>;
  using Point = Eigen::Matrix<S, kDim, 1>;
  using Matrix = Eigen::Matrix<S, kDim + 1, kDim + 1>;  // homogeneous
  using Rotation = SO2<S>;

  SE2() : rotation_(), translation_(S(0.0), S(0.0)) {}
  SE2(const Rotation& rotation, const Point& translation)
      : rotation_(rotation), translation_(translation) {}
  static SE2 identity() { return SE2(); }

  static SE2 from_params(const Params& p) {
    return SE2(Rotation::from_params(typename Rotation::Params(p(2), p(3))), Point(p(0), p(1)));
  }
  static SE2 from_xy_theta(const S& x, const S& y, const S& theta) {
    return SE2(Rotation::from_angle(theta), Point(x, y));
  }

  static SE2 exp(const Tangent& xi) {
    using std::sin;
    const S& w = xi(2);
    const S t = w * w;
    const auto small = t < S(lie_detail::kSeriesAngle2);
    const S w_safe = select(small, S(1.0), w);
    const S half_sin = sin(S(0.5) * w_safe);
    const S a =
        select(small, lie_detail::series(t, lie_detail::kSinOverTheta), sin(w_safe) / w_safe);
    const S b = select(small, w * lie_detail::series(t, lie_detail::kOneMinusCosOverTheta2),
                       S(2.0) * half_sin * half_sin / w_safe);
    return SE2(Rotation::from_angle(w), Point(a * xi(0) - b * xi(1), b * xi(0) + a * xi(1)));
  }

  Tangent log() const {
    using std::cos;
    using std::sin;
    const S theta = rotation_.angle();
    const S t = theta * theta;
    const auto small = t < S(lie_detail::kSeriesAngle2);
    const S half = S(0.5) * select(small, S(1.0), theta);
    const S a = select(small, lie_detail::series(t, lie_detail::kHalfThetaCotHalfTheta),
                       half * cos(half) / sin(half));
    const S b = S(0.5) * theta;
    const Point& p = translation_;
    Tangent xi;
    xi << a * p(0) + b * p(1), a * p(1) - b * p(0), theta;
    return xi;
  }

  SE2 inverse() const {
    const Rotation r = rotation_.inverse();
    const Point t = r.act(translation_);
    return SE2(r, Point(-t(0), -t(1)));
  }
  SE2 operator*(const SE2& o) const {
    const Point rt = rotation_.act(o.translation_);
    return SE2(rotation_ * o.rotation_, Point(translation_(0) + rt(0), translation_(1) + rt(1)));
  }
  Point act(const Point& p) const {
    const Point rp = rotation_.act(p);
    return Point(rp(0) + translation_(0), rp(1) + translation_(1));
  }
  Point operator*(const Point& p) const { return act(p); }

  // [[R, t], [0, 0, 1]].
  Matrix matrix() const {
    Matrix m;
    const auto r = rotation_.matrix();
    m << r(0, 0), r(0, 1), translation_(0),  //
        r(1, 0), r(1, 1), translation_(1),   //
        S(0.0), S(0.0), S(1.0);
    return m;
  }
  Params params() const {
    const auto z = rotation_.params();
    Params p;
    p << translation_(0), translation_(1), z(0), z(1);
    return p;
  }
  const Point& translation() const { return translation_; }
  const Rotation& rotation() const { return rotation_; }
  // The rotation's complex number divided by its norm.
  SE2 normalized() const { return SE2(rotation_.normalized(), translation_); }

  SE2 retract(const Tangent& delta) const { return *this * exp(delta); }
  Tangent local(const SE2& other) const { return (inverse() * other).log(); }

  template <class T>
  SE2<T> cast() const {
    return SE2<T>::from_params(params().template cast<T>());
  }

 private:
  Rotation rotation_;
  Point translation_;
};

using SE2d = SE2<double>;

inline std::ostream& operator<<(std::ostream& os, const SE2<double>& g) {
  const auto p = g.params();
  return os << "SE2(x=" << p(0) << ", y=" << p(1) << ", cos=" << p(2) << ", sin=" << p(3)
            << ", theta=" << g.rotation().angle() << ")";
}

}  // namespace lsjit
