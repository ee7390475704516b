// Lie groups on doubles against independent references (Eigen's quaternions and angle-axis,
// the matrix exponential and logarithm, explicit 2D formulas), round trips and group axioms
// at tiny angles and near π, Jacobians through the series switches (dual numbers), and
// tracing with Sym.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "lsjit/ir/interpreter.h"
#include "lsjit/runtime/lie/lie.h"
// After lie.h, which includes sym_eigen.h first.
#include <unsupported/Eigen/MatrixFunctions>

using lsjit::SE2d;
using lsjit::SE3d;
using lsjit::SO2d;
using lsjit::SO3d;

// ---------------------------------------------------------------------------------------
// A forward-mode dual number whose select blends both branches arithmetically, so that a
// NaN or infinity in the value or derivative of the branch that is *not* chosen shows up in
// the result: the strictest reading of "both branches are differentiated".
namespace dual {

template <class T>
struct Dual {
  T v = 0, d = 0;
  Dual() = default;
  Dual(double x) : v(x), d(0) {}  // NOLINT
  Dual(T value, T derivative, int) : v(value), d(derivative) {}
};
struct Bool {
  bool b;
};

template <class T>
Dual<T> make(T v, T d) {
  return Dual<T>(v, d, 0);
}
template <class T>
Dual<T> operator+(const Dual<T>& a, const Dual<T>& b) {
  return make(a.v + b.v, a.d + b.d);
}
template <class T>
Dual<T> operator-(const Dual<T>& a, const Dual<T>& b) {
  return make(a.v - b.v, a.d - b.d);
}
template <class T>
Dual<T> operator*(const Dual<T>& a, const Dual<T>& b) {
  return make(a.v * b.v, a.d * b.v + a.v * b.d);
}
template <class T>
Dual<T> operator/(const Dual<T>& a, const Dual<T>& b) {
  const T q = a.v / b.v;
  return make(q, (a.d - q * b.d) / b.v);
}
template <class T>
Dual<T> operator-(const Dual<T>& a) {
  return make(-a.v, -a.d);
}
template <class T>
Dual<T>& operator+=(Dual<T>& a, const Dual<T>& b) {
  return a = a + b;
}
template <class T>
Dual<T>& operator-=(Dual<T>& a, const Dual<T>& b) {
  return a = a - b;
}
template <class T>
Dual<T>& operator*=(Dual<T>& a, const Dual<T>& b) {
  return a = a * b;
}
template <class T>
Dual<T>& operator/=(Dual<T>& a, const Dual<T>& b) {
  return a = a / b;
}
#define DUAL_MIXED(OP)                           \
  template <class T>                             \
  auto operator OP(const Dual<T>& a, double b) { \
    return a OP Dual<T>(b);                      \
  }                                              \
  template <class T>                             \
  auto operator OP(double a, const Dual<T>& b) { \
    return Dual<T>(a) OP b;                      \
  }
DUAL_MIXED(+)
DUAL_MIXED(-)
DUAL_MIXED(*)
DUAL_MIXED(/)
#undef DUAL_MIXED
template <class T>
Bool operator<(const Dual<T>& a, const Dual<T>& b) {
  return {a.v < b.v};
}
template <class T>
Bool operator>(const Dual<T>& a, const Dual<T>& b) {
  return {a.v > b.v};
}

template <class T>
Dual<T> select(Bool c, const Dual<T>& a, const Dual<T>& b) {
  const T ca = c.b ? 1 : 0, cb = 1 - ca;
  return make(a.v * ca + b.v * cb, a.d * ca + b.d * cb);
}

template <class T>
Dual<T> sqrt(const Dual<T>& x) {
  using std::sqrt;
  const T s = sqrt(x.v);
  return make(s, x.d / (2 * s));
}
template <class T>
Dual<T> sin(const Dual<T>& x) {
  using std::cos;
  using std::sin;
  return make(sin(x.v), cos(x.v) * x.d);
}
template <class T>
Dual<T> cos(const Dual<T>& x) {
  using std::cos;
  using std::sin;
  return make(cos(x.v), -sin(x.v) * x.d);
}
template <class T>
Dual<T> atan2(const Dual<T>& y, const Dual<T>& x) {
  using std::atan2;
  return make(atan2(y.v, x.v), (x.v * y.d - y.v * x.d) / (x.v * x.v + y.v * y.v));
}

}  // namespace dual

namespace Eigen {
template <class T>
struct NumTraits<dual::Dual<T>> : GenericNumTraits<T> {
  using Real = dual::Dual<T>;
  using NonInteger = dual::Dual<T>;
  using Nested = dual::Dual<T>;
  using Literal = dual::Dual<T>;
  enum {
    IsComplex = 0,
    IsInteger = 0,
    IsSigned = 1,
    RequireInitialization = 1,
    ReadCost = 1,
    AddCost = 1,
    MulCost = 1,
  };
};
}  // namespace Eigen

namespace {


template <class A, class B>
double max_abs_diff(const A& a, const B& b) {
  return (a - b).cwiseAbs().maxCoeff();
}

// A Jacobian: dynamic size up to 7 x 6, stored inline.
using Jacobian = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 7, 6>;

bool all_finite(const Jacobian& m) {
  for (Eigen::Index i = 0; i < m.size(); ++i)
    if (!std::isfinite(m.data()[i])) return false;
  return true;
}

std::mt19937& rng() {
  static std::mt19937 gen(12345);
  return gen;
}
double uniform(double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng());
}
Eigen::Vector3d random_unit3() {
  Eigen::Vector3d v;
  do {
    v = Eigen::Vector3d(uniform(-1, 1), uniform(-1, 1), uniform(-1, 1));
  } while (v.norm() < 0.1 || v.norm() > 1.0);
  return v.normalized();
}
Eigen::Vector3d random_vec3(double scale = 2.0) {
  return Eigen::Vector3d(uniform(-scale, scale), uniform(-scale, scale), uniform(-scale, scale));
}
double random_sign() { return uniform(0, 1) < 0.5 ? -1.0 : 1.0; }

// Rotation angles that exercise every branch: 0, tiny, both sides of each series threshold
// (θ² = 1e-6 -> θ = 1e-3; the SO3 log switches near θ = 2e-3; θ² = 0.25 -> θ = 0.5),
// generic, and near π.
const std::vector<double> kAngles = {0.0,      1e-12,   1e-9,    1e-6,       1e-4,      9.99e-4,
                                     1.001e-3, 1.99e-3, 2.01e-3, 0.1,        0.4999,    0.5001,
                                     1.0,      2.0,     3.0,     std::numbers::pi - 1e-3, std::numbers::pi - 1e-6};

// A tangent of each group with rotation magnitude theta in a random direction.
SO2d::Tangent so2_tangent(double theta) { return SO2d::Tangent(random_sign() * theta); }
SE2d::Tangent se2_tangent(double theta) {
  return SE2d::Tangent(uniform(-2, 2), uniform(-2, 2), random_sign() * theta);
}
SO3d::Tangent so3_tangent(double theta) { return theta * random_unit3(); }
SE3d::Tangent se3_tangent(double theta) {
  SE3d::Tangent xi;
  xi << random_vec3(), theta * random_unit3();
  return xi;
}
template <class G>
typename G::Tangent tangent_of(double theta) {
  if constexpr (std::is_same_v<G, SO2d>)
    return so2_tangent(theta);
  else if constexpr (std::is_same_v<G, SE2d>)
    return se2_tangent(theta);
  else if constexpr (std::is_same_v<G, SO3d>)
    return so3_tangent(theta);
  else
    return se3_tangent(theta);
}
template <class G>
G random_element() {
  return G::exp(tangent_of<G>(uniform(0.0, std::numbers::pi - 0.01)));
}

// The Lie algebra element of xi as a matrix, for Eigen's matrix exponential (an
// independent reference for exp, and for log through the matrix logarithm).
template <class G>
Eigen::MatrixXd algebra(const typename G::Tangent& xi) {
  if constexpr (std::is_same_v<G, SO2d>) {
    Eigen::Matrix2d m;
    m << 0, -xi(0), xi(0), 0;
    return m;
  } else if constexpr (std::is_same_v<G, SE2d>) {
    Eigen::Matrix3d m;
    m << 0, -xi(2), xi(0), xi(2), 0, xi(1), 0, 0, 0;
    return m;
  } else if constexpr (std::is_same_v<G, SO3d>) {
    return SO3d::hat(xi);
  } else {
    Eigen::Matrix4d m = Eigen::Matrix4d::Zero();
    m.topLeftCorner<3, 3>() = SO3d::hat(xi.template tail<3>());
    m.topRightCorner<3, 1>() = xi.template head<3>();
    return m;
  }
}

// Forward-mode Jacobian of f (a generic lambda from a tangent-sized vector of Dual<T> to an
// Eigen vector of Dual<T>) at 0.
template <class T, int N, class F>
Jacobian jacobian(const F& f) {
  using D = dual::Dual<T>;
  Jacobian J;
  for (int j = 0; j < N; ++j) {
    Eigen::Matrix<D, N, 1> delta;
    for (int i = 0; i < N; ++i) delta(i) = dual::make<T>(0, i == j ? 1 : 0);
    const auto y = f(delta);
    if (j == 0) J.resize(y.size(), N);
    for (Eigen::Index i = 0; i < y.size(); ++i) J(i, j) = static_cast<double>(y(i).d);
  }
  return J;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Against independent references.

TEST_CASE("SO2 agrees with angles and 2D rotation matrices") {
  for (double theta : {0.0, 1e-9, 0.3, -1.2, 2.5, std::numbers::pi - 1e-9, -std::numbers::pi + 1e-6}) {
    const SO2d r = SO2d::from_angle(theta);
    CHECK(std::abs(r.angle() - theta) < 1e-15);
    CHECK(std::abs(r.log()(0) - theta) < 1e-15);
    CHECK(max_abs_diff(SO2d::exp(SO2d::Tangent(theta)).params(), r.params()) == 0.0);
    Eigen::Matrix2d m;
    m << std::cos(theta), -std::sin(theta), std::sin(theta), std::cos(theta);
    CHECK(max_abs_diff(r.matrix(), m) < 1e-16);
    const Eigen::Vector2d p(0.7, -1.3);
    CHECK(max_abs_diff(r.act(p), m * p) < 1e-15);
    CHECK(max_abs_diff(r * p, m * p) < 1e-15);
    CHECK(std::abs(r.inverse().angle() + theta) < 1e-15);
    const SO2d s = SO2d::from_angle(0.4);
    CHECK(std::abs(std::remainder((r * s).angle() - (theta + 0.4), 2 * std::numbers::pi)) < 1e-15);
    CHECK(max_abs_diff(algebra<SO2d>(SO2d::Tangent(theta)).exp(), r.matrix()) < 1e-14);
  }
  // log wraps into (-π, π].
  CHECK(std::abs(SO2d::from_angle(std::numbers::pi + 0.5).angle() - (0.5 - std::numbers::pi)) < 1e-14);
  // normalized divides by the norm.
  const SO2d scaled = SO2d::from_params(Eigen::Vector2d(3.0, 4.0));
  CHECK(max_abs_diff(scaled.normalized().params(), Eigen::Vector2d(0.6, 0.8)) < 1e-16);
  CHECK(scaled.params()(0) == 3.0);  // from_params stores as given
}

TEST_CASE("SE2 agrees with explicit 2D formulas") {
  const double x = 1.5, y = -0.7, th = 0.9;
  const SE2d g = SE2d::from_xy_theta(x, y, th);
  const double c = std::cos(th), s = std::sin(th);
  CHECK(max_abs_diff(g.params(), Eigen::Vector4d(x, y, c, s)) == 0.0);
  const Eigen::Vector2d p(0.3, 2.0);
  const Eigen::Vector2d gp(c * p(0) - s * p(1) + x, s * p(0) + c * p(1) + y);
  CHECK(max_abs_diff(g.act(p), gp) < 1e-15);
  CHECK(max_abs_diff(g * p, gp) < 1e-15);

  const double x2 = -0.2, y2 = 0.4, th2 = -2.1;
  const SE2d h = SE2d::from_xy_theta(x2, y2, th2);
  const SE2d gh = g * h;
  CHECK(std::abs(gh.translation()(0) - (x + c * x2 - s * y2)) < 1e-15);
  CHECK(std::abs(gh.translation()(1) - (y + s * x2 + c * y2)) < 1e-15);
  CHECK(std::abs(gh.rotation().angle() - (th + th2)) < 1e-15);

  const SE2d gi = g.inverse();
  CHECK(std::abs(gi.translation()(0) - (-c * x - s * y)) < 1e-15);
  CHECK(std::abs(gi.translation()(1) - (s * x - c * y)) < 1e-15);
  CHECK(std::abs(gi.rotation().angle() + th) < 1e-15);

  Eigen::Matrix3d m;
  m << c, -s, x, s, c, y, 0, 0, 1;
  CHECK(max_abs_diff(g.matrix(), m) == 0.0);

  // exp: t = (1/ω) [[sin ω, -(1 - cos ω)], [1 - cos ω, sin ω]] v, and the matrix exponential.
  for (double w : {0.7, -2.9, 0.5001, -0.4999, 3.1}) {
    const Eigen::Vector2d v(0.8, -1.1);
    const SE2d e = SE2d::exp(SE2d::Tangent(v(0), v(1), w));
    Eigen::Matrix2d vm;
    vm << std::sin(w), -(1 - std::cos(w)), 1 - std::cos(w), std::sin(w);
    CHECK(max_abs_diff(e.translation(), (vm / w) * v) < 1e-15);
    CHECK(std::abs(e.rotation().angle() - w) < 1e-15);
    CHECK(max_abs_diff(algebra<SE2d>(SE2d::Tangent(v(0), v(1), w)).exp(), e.matrix()) < 1e-14);
  }
  // Near 0 the translation is v + (ω/2) (-vy, vx) + O(ω²).
  {
    const double w = 1e-9;
    const SE2d e = SE2d::exp(SE2d::Tangent(0.8, -1.1, w));
    CHECK(max_abs_diff(e.translation(),
                       Eigen::Vector2d(0.8 + 0.5 * w * 1.1, -1.1 + 0.5 * w * 0.8)) < 1e-16);
  }
}

TEST_CASE("SO3 agrees with Eigen's quaternions and angle-axis") {
  for (double theta : kAngles) {
    for (int k = 0; k < 5; ++k) {
      const Eigen::Vector3d axis = random_unit3();
      const Eigen::Vector3d w = theta * axis;
      const Eigen::Quaterniond q_ref(Eigen::AngleAxisd(theta, axis));
      const SO3d r = SO3d::exp(w);
      INFO("theta = " << theta << ", r = " << r);
      CHECK(max_abs_diff(r.params(), q_ref.coeffs()) < 1e-15);
      CHECK(max_abs_diff(r.matrix(), q_ref.toRotationMatrix()) < 1e-14);
      CHECK(max_abs_diff(r.quaternion().coeffs(), q_ref.coeffs()) < 1e-15);
      const Eigen::Vector3d p = random_vec3();
      CHECK(max_abs_diff(r.act(p), q_ref * p) < 1e-14);
      CHECK(max_abs_diff(r * p, q_ref * p) < 1e-14);
      CHECK(max_abs_diff(algebra<SO3d>(w).exp(), r.matrix()) < 1e-14);

      // log of Eigen's quaternion, against the rotation vector it was made from (relative
      // accuracy at tiny angles) and against AngleAxis.
      const Eigen::Vector3d l = SO3d::from_quaternion(q_ref).log();
      CHECK((l - w).norm() <= 2e-15 * theta + 1e-300);
      const Eigen::AngleAxisd aa(q_ref);
      CHECK(max_abs_diff(l, aa.angle() * aa.axis()) < 1e-14);
      // q and -q are the same rotation.
      const SO3d neg = SO3d::from_params(-q_ref.coeffs());
      CHECK((neg.log() - w).norm() <= 2e-15 * theta + 1e-300);
      // from_rotation_matrix.
      const SO3d fm = SO3d::from_rotation_matrix(q_ref.toRotationMatrix());
      CHECK(max_abs_diff(fm.matrix(), q_ref.toRotationMatrix()) < 1e-14);
    }
  }
  // At exactly π the sign of the rotation vector is arbitrary; the rotation is not.
  const Eigen::Vector3d axis = random_unit3();
  const SO3d half_turn = SO3d::from_quaternion(Eigen::Quaterniond(Eigen::AngleAxisd(std::numbers::pi, axis)));
  const Eigen::Vector3d l = half_turn.log();
  CHECK(std::abs(l.norm() - std::numbers::pi) < 1e-15);
  CHECK(std::abs(std::abs(l.normalized().dot(axis)) - 1.0) < 1e-15);
  CHECK(max_abs_diff(SO3d::exp(l).matrix(), half_turn.matrix()) < 1e-15);
  // normalized divides by the norm; from_params stores as given.
  const SO3d scaled = SO3d::from_params(Eigen::Vector4d(0.0, 0.0, 2.0, 2.0));
  CHECK(scaled.params()(3) == 2.0);
  CHECK(max_abs_diff(scaled.normalized().params(),
                     Eigen::Vector4d(0, 0, std::sqrt(0.5), std::sqrt(0.5))) < 1e-15);
}

TEST_CASE("SE3 agrees with R p + t and the matrix exponential/logarithm") {
  for (double theta : kAngles) {
    for (int k = 0; k < 5; ++k) {
      const SE3d::Tangent xi = se3_tangent(theta);
      const SE3d g = SE3d::exp(xi);
      INFO("theta = " << theta << ", g = " << g);
      const Eigen::Quaterniond q(Eigen::AngleAxisd(theta, xi.tail<3>().normalized()));
      if (theta > 0) CHECK(max_abs_diff(g.rotation().params(), q.coeffs()) < 1e-15);
      const Eigen::Matrix3d R = q.toRotationMatrix();
      const Eigen::Vector3d p = random_vec3();
      CHECK(max_abs_diff(g.act(p), R * p + g.translation()) < 1e-14);
      CHECK(max_abs_diff(g * p, R * p + g.translation()) < 1e-14);
      const Eigen::Matrix4d ref = algebra<SE3d>(xi).exp();
      CHECK(max_abs_diff(g.matrix(), ref) < 1e-13);
      // Matrix logarithm as a reference for log, away from π where it is ill-conditioned.
      if (theta < 3.0) {
        const Eigen::Matrix4d lm = ref.log();
        SE3d::Tangent xi_ref;
        xi_ref << lm.topRightCorner<3, 1>(), lm(2, 1), lm(0, 2), lm(1, 0);
        CHECK(max_abs_diff(g.log(), xi_ref) < 1e-12);
      }
    }
  }
  const SE3d g(SO3d::exp(Eigen::Vector3d(0.1, -0.2, 0.3)), Eigen::Vector3d(1, 2, 3));
  SE3d::Params p;
  p << g.translation(), g.rotation().params();
  CHECK(max_abs_diff(g.params(), p) == 0.0);
}

// ---------------------------------------------------------------------------------------
// Round trips and group axioms, for all four groups.

TEST_CASE_TEMPLATE("log(exp(xi)) == xi and exp(log(g)) == g, near 0 and near pi", G, SO2d, SE2d,
                   SO3d, SE3d) {
  for (double theta : kAngles) {
    for (int k = 0; k < 10; ++k) {
      const typename G::Tangent xi = tangent_of<G>(theta);
      const G g = G::exp(xi);
      INFO("theta = " << theta << ", g = " << g << ", xi = " << xi.transpose());
      const typename G::Tangent l = g.log();
      CHECK(max_abs_diff(l, xi) < 1e-12);
      // The rotation part to relative accuracy.
      const auto w = xi.template tail < G::kTangent == 6 ? 3 : 1 > ();
      const auto lw = l.template tail < G::kTangent == 6 ? 3 : 1 > ();
      CHECK((lw - w).norm() <= 2e-15 * theta + 1e-300);
      const G back = G::exp(l);
      CHECK(max_abs_diff(back.params(), g.params()) < 1e-14);
      // retract/local.
      const G h = random_element<G>();
      CHECK(max_abs_diff(h.local(h.retract(xi)), xi) < 1e-12);
    }
  }
  // A random element that is not of exp's making, for SO3: either sign of the quaternion.
  if constexpr (std::is_same_v<G, SO3d>) {
    for (int k = 0; k < 50; ++k) {
      Eigen::Vector4d q(uniform(-1, 1), uniform(-1, 1), uniform(-1, 1), uniform(-1, 1));
      const G g = G::from_params(q.normalized());
      CHECK(max_abs_diff(G::exp(g.log()).matrix(), g.matrix()) < 1e-14);
      CHECK(g.log().norm() <= std::numbers::pi + 1e-15);
    }
  }
}

TEST_CASE_TEMPLATE("group axioms", G, SO2d, SE2d, SO3d, SE3d) {
  for (int k = 0; k < 50; ++k) {
    const G a = random_element<G>(), b = random_element<G>(), c = random_element<G>();
    const G e = G::identity();
    INFO("a = " << a << ", b = " << b);
    const auto I = decltype(a.matrix())::Identity();
    CHECK(max_abs_diff((a * a.inverse()).matrix(), I) < 1e-14);
    CHECK(max_abs_diff((a.inverse() * a).matrix(), I) < 1e-14);
    CHECK(max_abs_diff(((a * b) * c).params(), (a * (b * c)).params()) < 1e-14);
    CHECK(max_abs_diff((a * e).params(), a.params()) == 0.0);
    CHECK(max_abs_diff((e * a).params(), a.params()) == 0.0);
    CHECK(max_abs_diff(G().params(), e.params()) == 0.0);
    CHECK(max_abs_diff(e.matrix(), I) == 0.0);
    CHECK(max_abs_diff((a * b).matrix(), a.matrix() * b.matrix()) < 1e-14);
    CHECK(max_abs_diff(a.inverse().matrix(), a.matrix().inverse()) < 1e-14);
    CHECK(max_abs_diff(G::from_params(a.params()).params(), a.params()) == 0.0);
    CHECK(max_abs_diff(a.template cast<double>().params(), a.params()) == 0.0);
    CHECK(max_abs_diff(G::exp(G::Tangent::Zero()).params(), e.params()) == 0.0);
    CHECK(max_abs_diff(e.log(), G::Tangent::Zero()) == 0.0);
    CHECK(max_abs_diff(a.retract(G::Tangent::Zero()).params(), a.params()) < 1e-16);
    CHECK(max_abs_diff(a.local(a), G::Tangent::Zero()) < 1e-15);
    // act agrees with the (homogeneous) matrix and with composition.
    constexpr int n = G::kDim;
    const typename G::Point p = G::Point::Random();
    const auto m = a.matrix();
    typename G::Point mp;
    if constexpr (G::Matrix::RowsAtCompileTime == n) {
      mp = m * p;
    } else {
      mp = m.template topLeftCorner<n, n>() * p + m.template topRightCorner<n, 1>();
    }
    CHECK(max_abs_diff(a.act(p), mp) < 1e-14);
    CHECK(max_abs_diff((a * b).act(p), a.act(b.act(p))) < 1e-14);
    CHECK(max_abs_diff(a.inverse().act(a.act(p)), p) < 1e-14);
  }
}

// ---------------------------------------------------------------------------------------
// Derivatives. Dual numbers stand in for the symbolic differentiation of a trace: select
// blends both branches, so any NaN or infinity in the unselected branch fails the test.

namespace {

// Jacobians at the interesting points of one group: of exp (at xi), of log (at exp(xi), by
// right perturbation) and of retract at 0 (what the solver differentiates).
template <template <class> class G, class T>
std::vector<Jacobian> group_jacobians(const typename G<double>::Tangent& xi) {
  constexpr int N = G<double>::kTangent;
  const G<double> g = G<double>::exp(xi);
  std::vector<Jacobian> out;
  out.push_back(jacobian<T, N>([&](const auto& delta) {
    using D = typename std::decay_t<decltype(delta)>::Scalar;
    const Eigen::Matrix<D, N, 1> x = xi.template cast<D>() + delta;
    return G<D>::exp(x).params();
  }));
  out.push_back(jacobian<T, N>([&](const auto& delta) {
    using D = typename std::decay_t<decltype(delta)>::Scalar;
    return g.template cast<D>().retract(delta).log();
  }));
  out.push_back(jacobian<T, N>([&](const auto& delta) {
    using D = typename std::decay_t<decltype(delta)>::Scalar;
    return g.template cast<D>().retract(delta).params();
  }));
  out.push_back(jacobian<T, N>([&](const auto& delta) {
    using D = typename std::decay_t<decltype(delta)>::Scalar;
    const G<D> h = G<D>::exp(xi.template cast<D>());
    return h.local(G<D>::exp(xi.template cast<D>() + delta));
  }));
  return out;
}

template <template <class> class G>
void check_group_jacobians() {
  for (double theta : kAngles) {
    for (int k = 0; k < 4; ++k) {
      const typename G<double>::Tangent xi = tangent_of<G<double>>(theta);
      INFO("theta = " << theta << ", xi = " << xi.transpose());
      const auto jd = group_jacobians<G, double>(xi);
      const auto jl = group_jacobians<G, long double>(xi);
      for (size_t i = 0; i < jd.size(); ++i) {
        INFO("jacobian " << i << "\n" << jd[i]);
        CHECK(all_finite(jd[i]));
        // Double against long double through the same branches: what the closed forms lose
        // to cancellation near the series thresholds.
        CHECK(max_abs_diff(jd[i], jl[i]) < 1e-14);
      }
    }
  }
}

// SO(3)'s right Jacobian Jr(ω) = I - B K + C K² and its inverse I + K/2 + D K², computed
// independently (long double closed forms, or the leading series terms for tiny θ).
Eigen::Matrix3d so3_right_jacobian(const Eigen::Vector3d& w, bool inverse) {
  const long double t = w.squaredNorm(), th = std::sqrt(t);
  long double b, c, d;
  if (th < 1e-2L) {
    b = 0.5L - t / 24 + t * t / 720;
    c = 1.0L / 6 - t / 120 + t * t / 5040;
    d = 1.0L / 12 + t / 720 + t * t / 30240;
  } else {
    b = (1 - std::cos(th)) / t;
    c = (th - std::sin(th)) / (t * th);
    d = (1 - (th / 2) * std::cos(th / 2) / std::sin(th / 2)) / t;
  }
  const Eigen::Matrix3d K = SO3d::hat(w);
  const Eigen::Matrix3d I = Eigen::Matrix3d::Identity();
  return inverse ? Eigen::Matrix3d(I + 0.5 * K + double(d) * K * K)
                 : Eigen::Matrix3d(I - double(b) * K + double(c) * K * K);
}

}  // namespace

TEST_CASE("Jacobians are finite in both branches and accurate across the series switches") {
  check_group_jacobians<lsjit::SO2>();
  check_group_jacobians<lsjit::SE2>();
  check_group_jacobians<lsjit::SO3>();
  check_group_jacobians<lsjit::SE3>();
}

TEST_CASE("SO3 Jacobians match the closed-form right Jacobian and its inverse") {
  for (double theta : kAngles) {
    for (int k = 0; k < 4; ++k) {
      const Eigen::Vector3d w = so3_tangent(theta);
      INFO("theta = " << theta);
      const auto j = group_jacobians<lsjit::SO3, double>(w);
      // d/dδ log(exp(ω) exp(δ)) = Jr⁻¹(ω); d/dδ log(exp(ω)⁻¹ exp(ω + δ)) = Jr(ω).
      CHECK(max_abs_diff(j[1], so3_right_jacobian(w, true)) < 1e-13);
      CHECK(max_abs_diff(j[3], so3_right_jacobian(w, false)) < 1e-13);
    }
  }
  // At the identity, exp's Jacobian is exactly [I/2; 0] and log's is exactly I.
  const auto j0 = group_jacobians<lsjit::SO3, double>(Eigen::Vector3d::Zero());
  Eigen::Matrix<double, 4, 3> half;
  half << 0.5 * Eigen::Matrix3d::Identity(), Eigen::RowVector3d::Zero();
  CHECK(max_abs_diff(j0[0], half) == 0.0);
  CHECK(max_abs_diff(j0[1], Eigen::Matrix3d::Identity()) == 0.0);
}

// ---------------------------------------------------------------------------------------
// Tracing.

namespace {

lsjit::ir::Signature two_var_signature(const std::string& type, uint32_t ambient, uint32_t tangent,
                                       uint32_t dim) {
  lsjit::ir::Signature s;
  s.name = "lie_" + type;
  s.vars.push_back({"a", type, ambient, tangent});
  s.vars.push_back({"b", type, ambient, tangent});
  s.data.push_back({"p", "Vec", dim, 1});
  return s;
}

// Evaluates a traced graph with the reference interpreter (tangent perturbations are 0).
std::vector<double> evaluate(const lsjit::ir::Trace& trace,
                             const std::vector<std::vector<double>>& vars,
                             const std::vector<std::vector<double>>& data) {
  return lsjit::ir::evaluate(trace, {vars, data, {}}).residual;
}

// The cost traced below, generic over the scalar.
template <template <class> class G, class S>
std::vector<S> lie_cost(const G<S>& a, const G<S>& b, const typename G<S>::Point& p) {
  const G<S> ab = a.inverse() * b;
  const typename G<S>::Tangent r = a.local(b);
  const typename G<S>::Tangent r2 = G<S>::exp(r).log();
  const typename G<S>::Point q = ab.act(p) + (b * p);
  const auto m = (ab * G<S>::identity()).matrix();
  const auto n = a.normalized().params();
  std::vector<S> out;
  for (int i = 0; i < r.size(); ++i) out.push_back(r(i) + r2(i));
  for (int i = 0; i < q.size(); ++i) out.push_back(q(i));
  out.push_back(m(0, 0) + m(1, 0));
  out.push_back(n(0));
  return out;
}

template <template <class> class G>
void check_trace(const std::string& type) {
  using Gd = G<double>;
  using Gs = G<lsjit::Sym>;
  const Gd a = random_element<Gd>(), b = random_element<Gd>();
  const typename Gd::Point p = Gd::Point::Random();

  lsjit::Tracer tracer(two_var_signature(type, Gd::kAmbient, Gd::kTangent, Gd::kDim));
  typename Gs::Params pa, pb;
  typename Gs::Tangent da, db;
  typename Gs::Point ps;
  for (int i = 0; i < Gd::kAmbient; ++i) pa(i) = tracer.var(0, i), pb(i) = tracer.var(1, i);
  for (int i = 0; i < Gd::kTangent; ++i) da(i) = tracer.tangent(0, i), db(i) = tracer.tangent(1, i);
  for (int i = 0; i < Gd::kDim; ++i) ps(i) = tracer.data(0, i);
  const Gs as = Gs::from_params(pa).retract(da);
  const Gs bs = Gs::from_params(pb).retract(db);
  std::vector<lsjit::Sym> residual = lie_cost<G, lsjit::Sym>(as, bs, ps);
  // Constants from a double group, and the default constructor, inside the trace.
  const Gs c = a.template cast<lsjit::Sym>();
  residual.push_back((c * Gs()).log()(0));
  tracer.set_residual(residual);
  const lsjit::ir::Trace trace = tracer.finish();
  CHECK(trace.graph.op_count() > 50);
  CHECK(trace.signature.residual_dim == residual.size());

  // The graph computes what the double code computes.
  std::vector<double> expected = lie_cost<G, double>(a, b, p);
  expected.push_back(a.log()(0));
  auto as_vec = [](const auto& m) { return std::vector<double>(m.data(), m.data() + m.size()); };
  const std::vector<double> got =
      evaluate(trace, {as_vec(a.params()), as_vec(b.params())}, {as_vec(p)});
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK(got[i] == doctest::Approx(expected[i]).epsilon(1e-13));
}

}  // namespace

TEST_CASE("the groups trace with Sym") {
  check_trace<lsjit::SO2>("SO2");
  check_trace<lsjit::SE2>("SE2");
  check_trace<lsjit::SO3>("SO3");
  check_trace<lsjit::SE3>("SE3");
}

TEST_CASE("SO3::from_rotation_matrix and quaternion() trace with Sym") {
  lsjit::ir::Signature s;
  s.name = "so3_matrix";
  s.vars.push_back({"a", "SO3", 4, 3});
  lsjit::Tracer tracer(s);
  lsjit::SO3<lsjit::Sym>::Params pa;
  for (int i = 0; i < 4; ++i) pa(i) = tracer.var(0, i);
  const auto r = lsjit::SO3<lsjit::Sym>::from_params(pa);
  const auto back = lsjit::SO3<lsjit::Sym>::from_rotation_matrix(r.matrix());
  const auto q = lsjit::SO3<lsjit::Sym>::from_quaternion(r.quaternion());
  const auto l = back.local(q);
  tracer.set_residual({l(0), l(1), l(2)});
  CHECK(tracer.finish().graph.op_count() > 50);
}
