// SO(2), planar rotations, templated on the scalar so that the same code runs on doubles and
// traces with lsjit::Sym.
//
// Layout (fixed by the project):
//   params  (cos θ, sin θ)   ambient 2, a unit complex number
//   tangent (θ)              dimension 1
//
// exp(θ) = (cos θ, sin θ); log = atan2(sin, cos), in (-π, π]. Compose multiplies the complex
// numbers; inverse() is the conjugate and act()/matrix() use the components as they are, so
// both assume unit norm. Nothing normalizes (the solver renormalizes after retraction);
// normalized() divides by the norm. retract(δ) = g * exp(δ) (right perturbation) and
// local(h) = log(g⁻¹ h).
//
// The series and thresholds all groups share, with the reasoning behind them, are in
// series.h.
#pragma once

#include <cstddef>
#include <ostream>

#include "lsjit/ir/sym_eigen.h"
#include "lsjit/runtime/lie/series.h"

namespace lsjit {

template <class S>
class SO2 {
 public:
  using Scalar = S;
  static constexpr int kAmbient = 2;
  static constexpr int kTangent = 1;
  static constexpr int kDim = 2;  // of the points it acts on
  using Params = Eigen::Matrix<S, kAmbient, 1>;
  using Tangent = Eigen::Matrix<S, kTangent, 1>;
  using Point = Eigen::Matrix<S, kDim, 1>;
  using Matrix = Eigen::Matrix<S, kDim, kDim>;

  SO2() : z_(S(1.0), S(0.0)) {}
  static SO2 identity() { return SO2(); }

  static SO2 from_params(const Params& p) { return SO2(p, Raw{}); }
  static SO2 from_angle(const S& theta) {
    using std::cos;
    using std::sin;
    return SO2(Params(cos(theta), sin(theta)), Raw{});
  }

  static SO2 exp(const Tangent& xi) { return from_angle(xi(0)); }
  Tangent log() const {
    Tangent xi;
    xi(0) = angle();
    return xi;
  }
  S angle() const {
    using std::atan2;
    return atan2(z_(1), z_(0));
  }

  SO2 inverse() const { return SO2(Params(z_(0), -z_(1)), Raw{}); }
  SO2 operator*(const SO2& o) const {
    const S &a = z_(0), &b = z_(1), &c = o.z_(0), &d = o.z_(1);
    return SO2(Params(a * c - b * d, a * d + b * c), Raw{});
  }
  Point act(const Point& p) const {
    return Point(z_(0) * p(0) - z_(1) * p(1), z_(1) * p(0) + z_(0) * p(1));
  }
  Point operator*(const Point& p) const { return act(p); }

  // The rotation matrix [[cos, -sin], [sin, cos]].
  Matrix matrix() const {
    Matrix m;
    m << z_(0), -z_(1), z_(1), z_(0);
    return m;
  }
  Params params() const { return z_; }
  SO2 normalized() const {
    using std::sqrt;
    return SO2(Params(z_ / sqrt(z_.squaredNorm())), Raw{});
  }

  SO2 retract(const Tangent& delta) const { return *this * exp(delta); }
  Tangent local(const SO2& other) const { return (inverse() * other).log(); }

  template <class T>
  SO2<T> cast() const {
    return SO2<T>::from_params(z_.template cast<T>());
  }

 private:
  struct Raw {};
  SO2(const Params& z, Raw) : z_(z) {}
  Params z_;  // (cos θ, sin θ)
};

using SO2d = SO2<double>;

inline std::ostream& operator<<(std::ostream& os, const SO2<double>& g) {
  const auto p = g.params();
  return os << "SO2(cos=" << p(0) << ", sin=" << p(1) << ", theta=" << g.angle() << ")";
}

}  // namespace lsjit
