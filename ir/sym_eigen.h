// Makes lsjit::Sym an Eigen scalar, so fixed-size Eigen code traces: products, transpose,
// inverse of 2x2/3x3/4x4, cross, dot, norm, normalized, Quaternion<Sym>, AngleAxis<Sym>.
//
// Eigen decides a few things with `if` on scalar comparisons (normalized() tests the norm
// against 0, Quaternion::inverse() and the quaternion/AngleAxis/rotation-matrix
// conversions branch on signs). Those comparisons are traced, so the branches cannot be
// taken at trace time. For the types a cost uses (Matrix<Sym, N, 1> and Matrix<Sym, 1, N>
// up to N = 9, Quaternion<Sym>, AngleAxis<Sym>, Matrix<Sym, 3, 3>) this header replaces
// each such Eigen function by an explicit specialization that computes both branches and
// chooses with lsjit::select: the same values Eigen computes, branch-free. Calling one of
// them on an unevaluated expression (e.g. `(a - b).normalized()`) fails to compile with
// the SymBool message; evaluate into a Matrix first. Not supported: slerp,
// angularDistance, setFromTwoVectors, stableNorm.
//
// Include this header (lsjit/lsjit.h does) before any code instantiates those Eigen
// functions for Sym.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <limits>

#include "lsjit/ir/sym.h"

namespace Eigen {

template <>
struct NumTraits<lsjit::Sym> {
  using Real = lsjit::Sym;
  using NonInteger = lsjit::Sym;
  using Nested = lsjit::Sym;
  using Literal = lsjit::Sym;
  enum {
    IsComplex = 0,
    IsInteger = 0,
    IsSigned = 1,
    RequireInitialization = 1,
    ReadCost = 1,
    AddCost = 1,
    MulCost = 1,
  };
  static lsjit::Sym epsilon() { return std::numeric_limits<double>::epsilon(); }
  static lsjit::Sym dummy_precision() { return 1e-12; }
  static lsjit::Sym highest() { return std::numeric_limits<double>::max(); }
  static lsjit::Sym lowest() { return std::numeric_limits<double>::lowest(); }
  static lsjit::Sym infinity() { return std::numeric_limits<double>::infinity(); }
  static lsjit::Sym quiet_NaN() { return std::numeric_limits<double>::quiet_NaN(); }
  static constexpr int digits10() { return std::numeric_limits<double>::digits10; }
  static constexpr int digits() { return std::numeric_limits<double>::digits; }
  static constexpr int max_digits10() { return std::numeric_limits<double>::max_digits10; }
  static constexpr int min_exponent() { return std::numeric_limits<double>::min_exponent; }
  static constexpr int max_exponent() { return std::numeric_limits<double>::max_exponent; }
};

template <class BinaryOp>
struct ScalarBinaryOpTraits<lsjit::Sym, double, BinaryOp> {
  using ReturnType = lsjit::Sym;
};
template <class BinaryOp>
struct ScalarBinaryOpTraits<double, lsjit::Sym, BinaryOp> {
  using ReturnType = lsjit::Sym;
};

}  // namespace Eigen

namespace lsjit {

// Element-wise select on fixed-size Eigen matrices, for double (bool condition) and Sym
// (SymBool condition) alike.
template <class Cond, class DA, class DB>
auto select(const Cond& cond, const Eigen::MatrixBase<DA>& a, const Eigen::MatrixBase<DB>& b) {
  using Plain = typename DA::PlainObject;
  static_assert(std::is_same_v<Plain, typename DB::PlainObject>,
                "lsjit::select: both matrices must have the same type");
  Plain out;
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j) out(i, j) = select(cond, a(i, j), b(i, j));
  return out;
}

namespace detail {

template <class Vec>
Vec normalized_by_select(const Vec& v) {
  const Sym z = v.squaredNorm();
  const Sym n = sqrt(z);
  Vec out;
  for (Eigen::Index i = 0; i < v.size(); ++i) out(i) = select(z > 0.0, v(i) / n, v(i));
  return out;
}

// Eigen's quaternion-from-rotation-matrix (Shepperd's method) with its four branches
// computed and the one Eigen would take chosen by select.
inline Eigen::Matrix<Sym, 4, 1> quaternion_coeffs_from_matrix(const Eigen::Matrix<Sym, 3, 3>& m) {
  using V4 = Eigen::Matrix<Sym, 4, 1>;  // x y z w
  const Sym t = m.trace();
  V4 positive_trace;
  {
    const Sym s = sqrt(t + 1.0);
    const Sym w = 0.5 * s;
    const Sym r = 0.5 / s;
    positive_trace << (m(2, 1) - m(1, 2)) * r, (m(0, 2) - m(2, 0)) * r, (m(1, 0) - m(0, 1)) * r, w;
  }
  // Branch on the largest diagonal element i, with j = (i+1)%3, k = (j+1)%3.
  auto diagonal_case = [&m](int i) {
    const int j = (i + 1) % 3, k = (j + 1) % 3;
    const Sym s = sqrt(m(i, i) - m(j, j) - m(k, k) + 1.0);
    const Sym r = 0.5 / s;
    V4 q;
    q(i) = 0.5 * s;
    q(3) = (m(k, j) - m(j, k)) * r;
    q(j) = (m(j, i) + m(i, j)) * r;
    q(k) = (m(k, i) + m(i, k)) * r;
    return q;
  };
  // Eigen: i = 0; if (m(1,1) > m(0,0)) i = 1; if (m(2,2) > m(i,i)) i = 2.
  const SymBool one_over_zero = m(1, 1) > m(0, 0);
  const Sym largest_01 = select(one_over_zero, m(1, 1), m(0, 0));
  const SymBool two_largest = m(2, 2) > largest_01;
  const V4 first_two = select(one_over_zero, diagonal_case(1), diagonal_case(0));
  const V4 by_diagonal = select(two_largest, diagonal_case(2), first_two);
  return select(t > 0.0, positive_trace, by_diagonal);
}

}  // namespace detail
}  // namespace lsjit

namespace Eigen {

// normalized() / normalize() on plain Sym vectors.
#define LSJIT_SYM_NORMALIZED(R, C)                                                         \
  template <>                                                                              \
  inline const typename MatrixBase<Matrix<lsjit::Sym, R, C>>::PlainObject                  \
  MatrixBase<Matrix<lsjit::Sym, R, C>>::normalized() const {                               \
    return lsjit::detail::normalized_by_select(derived().eval());                          \
  }                                                                                        \
  template <>                                                                              \
  inline void MatrixBase<Matrix<lsjit::Sym, R, C>>::normalize() {                          \
    derived() = lsjit::detail::normalized_by_select(derived().eval());                     \
  }
LSJIT_SYM_NORMALIZED(2, 1)
LSJIT_SYM_NORMALIZED(3, 1)
LSJIT_SYM_NORMALIZED(4, 1)
LSJIT_SYM_NORMALIZED(5, 1)
LSJIT_SYM_NORMALIZED(6, 1)
LSJIT_SYM_NORMALIZED(7, 1)
LSJIT_SYM_NORMALIZED(8, 1)
LSJIT_SYM_NORMALIZED(9, 1)
LSJIT_SYM_NORMALIZED(1, 2)
LSJIT_SYM_NORMALIZED(1, 3)
LSJIT_SYM_NORMALIZED(1, 4)
#undef LSJIT_SYM_NORMALIZED

// Quaternion inverse: Eigen returns conjugate / |q|^2, or zero when |q|^2 is not > 0.
template <>
inline Quaternion<lsjit::Sym> QuaternionBase<Quaternion<lsjit::Sym>>::inverse() const {
  const lsjit::Sym n2 = this->squaredNorm();
  Quaternion<lsjit::Sym> q;
  const Quaternion<lsjit::Sym> c = this->conjugate();
  for (int i = 0; i < 4; ++i)
    q.coeffs()(i) = lsjit::select(n2 > 0.0, c.coeffs()(i) / n2, lsjit::Sym(0.0));
  return q;
}

namespace internal {
// Quaternion from a 3x3 rotation matrix (Quaternion(m), q = m, AngleAxis(m)).
template <>
struct quaternionbase_assign_impl<Matrix<lsjit::Sym, 3, 3>, 3, 3> {
  template <class Q>
  static inline void run(QuaternionBase<Q>& q, const Matrix<lsjit::Sym, 3, 3>& m) {
    q.coeffs() = lsjit::detail::quaternion_coeffs_from_matrix(m);
  }
};
}  // namespace internal

// AngleAxis from a quaternion, as Eigen computes it (angle in [0, pi] via |w|, axis sign
// following w, and the x axis with angle 0 for the identity).
template <>
template <>
inline AngleAxis<lsjit::Sym>& AngleAxis<lsjit::Sym>::operator=(
    const QuaternionBase<Quaternion<lsjit::Sym>>& q) {
  using lsjit::Sym;
  using lsjit::select;
  const Sym n = q.vec().norm();
  const lsjit::SymBool nonzero = n != 0.0;
  const lsjit::SymBool negative_w = q.w() < 0.0;
  m_angle = select(nonzero, 2.0 * atan2(n, abs(q.w())), Sym(0.0));
  for (int i = 0; i < 3; ++i) {
    const Sym along = select(negative_w, -q.vec()(i) / n, q.vec()(i) / n);
    m_axis(i) = select(nonzero, along, Sym(i == 0 ? 1.0 : 0.0));
  }
  return *this;
}

template <>
template <>
inline AngleAxis<lsjit::Sym>& AngleAxis<lsjit::Sym>::fromRotationMatrix(
    const MatrixBase<Matrix<lsjit::Sym, 3, 3>>& mat) {
  return *this = Quaternion<lsjit::Sym>(mat.derived());
}

}  // namespace Eigen
