// SO(3), 3D rotations as unit quaternions, templated on the scalar so that it traces with
// lsjit::Sym.
//
// Layout (fixed by the project):
//   params  (qx, qy, qz, qw)   ambient 4: Eigen's Quaternion::coeffs() order, as in g2o files
//   tangent (ωx, ωy, ωz)       dimension 3: rotation vector, axis * angle
//
// exp(ω) = (ω sin(θ/2)/θ, cos(θ/2)) with θ = |ω|, using a series in θ² below
// θ² = lie_detail::kSmallAngle2 (see series.h for the thresholds and why).
// log: the quaternion is first flipped so that w >= 0 (q and -q are the same rotation), then
//   n = |v|, θ = 2 atan2(n, w) ∈ [0, π], ω = v θ/n,
// and, when n² < kSmallAngle2 w² (θ < ~2e-3), ω = v (2/w)(1 - r²/3 + r⁴/5 - r⁶/7), r = n/w,
// the series of the same atan. atan2 keeps it accurate up to and at θ = π (at exactly π the
// sign of ω is arbitrary, as it must be).
//
// Compose is the Hamilton product, not normalized (the solver renormalizes); inverse() is
// the conjugate, and act()/matrix() use Eigen's unit-quaternion formulas: all three assume
// unit norm. normalized() divides by the norm. retract(δ) = g * exp(δ) (right perturbation),
// local(h) = log(g⁻¹ h).
#pragma once

#include <ostream>

#include "lsjit/ir/sym_eigen.h"
#include "lsjit/runtime/lie/series.h"

namespace lsjit {
namespace lie_detail {

template <class S>
Eigen::Matrix<S, 3, 3> hat(const Eigen::Matrix<S, 3, 1>& w) {
  Eigen::Matrix<S, 3, 3> k;
  k << S(0.0), -w(2), w(1),  //
      w(2), S(0.0), -w(0),   //
      -w(1), w(0), S(0.0);
  return k;
}

template <class S>
Eigen::Matrix<S, 3, 1> cross(const Eigen::Matrix<S, 3, 1>& a, const Eigen::Matrix<S, 3, 1>& b) {
  return Eigen::Matrix<S, 3, 1>(a(1) * b(2) - a(2) * b(1), a(2) * b(0) - a(0) * b(2),
                                a(0) * b(1) - a(1) * b(0));
}

// cos(θ/2) and sin(θ/2)/θ of θ² = t: the quaternion exp coefficients.
template <class S>
void so3_exp_coefficients(const S& t, S* cos_half, S* sin_half_over_theta) {
  using std::cos;
  using std::sin;
  using std::sqrt;
  const auto small = t < S(kSmallAngle2);
  const S theta = sqrt(select(small, S(1.0), t));
  const S half = S(0.5) * theta;
  *cos_half = select(small, series(t, kCosHalf), cos(half));
  *sin_half_over_theta = select(small, series(t, kSinHalfOverTheta), sin(half) / theta);
}

// (θ - sin θ)/θ³ of θ² = t: the K² coefficient of the left Jacobian V(ω) = I + B K + C K².
template <class S>
S so3_left_jacobian_k2(const S& t) {
  using std::sin;
  using std::sqrt;
  const auto small = t < S(kSeriesAngle2);
  const S t_safe = select(small, S(1.0), t);
  const S theta = sqrt(t_safe);
  return select(small, series(t, kThetaMinusSinOverTheta3),
                (theta - sin(theta)) / (t_safe * theta));
}

// (1 - (θ/2) cot(θ/2))/θ² of θ² = t: the K² coefficient of V⁻¹(ω) = I - K/2 + D K².
// Finite for θ < 2π; it is 1/π² at θ = π.
template <class S>
S so3_left_jacobian_inverse_k2(const S& t) {
  using std::cos;
  using std::sin;
  using std::sqrt;
  const auto small = t < S(kSeriesAngle2);
  const S t_safe = select(small, S(1.0), t);
  const S half = S(0.5) * sqrt(t_safe);
  return select(small, series(t, kLeftJacobianInverseK2),
                (S(1.0) - half * cos(half) / sin(half)) / t_safe);
}

}  // namespace lie_detail

template <class S>
class SO3 {
 public:
  using Scalar = S;
  static constexpr int kAmbient = 4;
  static constexpr int kTangent = 3;
  static constexpr int kDim = 3;
  using Params = Eigen::Matrix<S, kAmbient, 1>;
  using Tangent = Eigen::Matrix<S, kTangent, 1>;
  using Point = Eigen::Matrix<S, kDim, 1>;
  using Matrix = Eigen::Matrix<S, kDim, kDim>;
  using Quaternion = Eigen::Quaternion<S>;

  SO3() : q_(S(0.0), S(0.0), S(0.0), S(1.0)) {}
  static SO3 identity() { return SO3(); }

  static SO3 from_params(const Params& p) { return SO3(p, Raw{}); }
  static SO3 from_quaternion(const Quaternion& q) { return SO3(q.coeffs(), Raw{}); }
  // Through Eigen's Quaternion(Matrix3) (branch-free for Sym, see sym_eigen.h).
  static SO3 from_rotation_matrix(const Matrix& r) { return from_quaternion(Quaternion(r)); }

  static SO3 exp(const Tangent& w) {
    S c, s;
    lie_detail::so3_exp_coefficients(S(w.squaredNorm()), &c, &s);
    return SO3(Params(s * w(0), s * w(1), s * w(2), c), Raw{});
  }

  Tangent log() const {
    using std::atan2;
    using std::sqrt;
    const Params negated = -q_;
    const Params q = select(q_(3) < S(0.0), negated, q_);
    const Point v = q.template head<3>();
    const S& w = q(3);
    const S n2 = v.squaredNorm();
    const auto small = n2 < S(lie_detail::kSmallAngle2) * w * w;
    // Series of 2 atan(n/w)/n in r² = n²/w²; w is guarded where the series is not used.
    const S w_small = select(small, w, S(1.0));
    const S r2 = n2 / (w_small * w_small);
    const S scale_small = S(2.0) / w_small * lie_detail::series(r2, lie_detail::kAtanOverX);
    const S n = sqrt(select(small, S(1.0), n2));
    const S scale_large = S(2.0) * atan2(n, w) / n;
    const S scale = select(small, scale_small, scale_large);
    return Tangent(scale * v(0), scale * v(1), scale * v(2));
  }

  SO3 inverse() const { return SO3(Params(-q_(0), -q_(1), -q_(2), q_(3)), Raw{}); }
  SO3 operator*(const SO3& o) const {
    const Point v1 = q_.template head<3>(), v2 = o.q_.template head<3>();
    const S &w1 = q_(3), &w2 = o.q_(3);
    const Point c = lie_detail::cross(v1, v2);
    Params p;
    p << w1 * v2(0) + w2 * v1(0) + c(0), w1 * v2(1) + w2 * v1(1) + c(1),
        w1 * v2(2) + w2 * v1(2) + c(2), w1 * w2 - v1.dot(v2);
    return SO3(p, Raw{});
  }
  // Eigen's Quaternion * vector: p + w uv + v x uv with uv = 2 v x p.
  Point act(const Point& p) const {
    const Point v = q_.template head<3>();
    const Point uv = S(2.0) * lie_detail::cross(v, p);
    return p + q_(3) * uv + lie_detail::cross(v, uv);
  }
  Point operator*(const Point& p) const { return act(p); }

  // Eigen's Quaternion::toRotationMatrix.
  Matrix matrix() const {
    const S &x = q_(0), &y = q_(1), &z = q_(2), &w = q_(3);
    const S tx = S(2.0) * x, ty = S(2.0) * y, tz = S(2.0) * z;
    const S twx = tx * w, twy = ty * w, twz = tz * w;
    const S txx = tx * x, txy = ty * x, txz = tz * x;
    const S tyy = ty * y, tyz = tz * y, tzz = tz * z;
    Matrix m;
    m << S(1.0) - (tyy + tzz), txy - twz, txz + twy,  //
        txy + twz, S(1.0) - (txx + tzz), tyz - twx,   //
        txz - twy, tyz + twx, S(1.0) - (txx + tyy);
    return m;
  }
  Params params() const { return q_; }
  Quaternion quaternion() const { return Quaternion(q_(3), q_(0), q_(1), q_(2)); }
  SO3 normalized() const {
    using std::sqrt;
    return SO3(Params(q_ / sqrt(q_.squaredNorm())), Raw{});
  }

  // The skew-symmetric matrix of w: hat(w) p = w x p.
  static Matrix hat(const Point& w) { return lie_detail::hat(w); }

  SO3 retract(const Tangent& delta) const { return *this * exp(delta); }
  Tangent local(const SO3& other) const { return (inverse() * other).log(); }

  template <class T>
  SO3<T> cast() const {
    return SO3<T>::from_params(q_.template cast<T>());
  }

 private:
  struct Raw {};
  SO3(const Params& q, Raw) : q_(q) {}
  Params q_;  // (x, y, z, w)
};

using SO3d = SO3<double>;

inline std::ostream& operator<<(std::ostream& os, const SO3<double>& g) {
  const auto p = g.params();
  return os << "SO3(qx=" << p(0) << ", qy=" << p(1) << ", qz=" << p(2) << ", qw=" << p(3) << ")";
}

}  // namespace lsjit
