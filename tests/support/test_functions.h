// The traced test functions shared by the IR tests (finite differences, round trips) and
// the compiler's differential tests: together they use every op of the op table, Eigen's
// fixed-size algebra, Quaternion and AngleAxis. Each has the points where its branches and
// singularities are, plus a range for random points.
#pragma once

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "lsjit/ir/sym_eigen.h"

namespace lsjit::testing {

using lsjit::Sym;
using lsjit::SymBool;
using Vec = std::vector<Sym>;

struct TestFunction {
  std::string name;
  uint32_t inputs;
  std::function<Vec(const Vec& x, const Vec& p)> f;
  // Points to check at (each of size `inputs`); random points are added from [lo, hi].
  std::vector<std::vector<double>> points;
  double lo = -2, hi = 2;
};

inline constexpr uint32_t kData = 2;

// Traces f with x = vars + tangents (a Euclidean variable) and two data values p.
inline lsjit::ir::Trace trace_function(const TestFunction& t) {
  lsjit::ir::Signature sig;
  sig.name = t.name;
  sig.vars.push_back({"x", "Vec" + std::to_string(t.inputs), t.inputs, t.inputs});
  sig.data.push_back({"p", "Vec2", kData, 1});
  lsjit::Tracer tracer(sig);
  Vec x, p;
  for (uint32_t i = 0; i < t.inputs; ++i) x.push_back(tracer.var(0, i) + tracer.tangent(0, i));
  for (uint32_t i = 0; i < kData; ++i) p.push_back(tracer.data(0, i));
  tracer.set_residual(t.f(x, p));
  return tracer.finish();
}

template <int R, int C>
Eigen::Matrix<Sym, R, C> mat(const Vec& x, int offset = 0) {
  Eigen::Matrix<Sym, R, C> m;
  for (int i = 0; i < R * C; ++i) m(i / C, i % C) = x[offset + i];
  return m;
}

template <class Derived>
Vec flat(const Eigen::MatrixBase<Derived>& m) {
  Vec out;
  const auto e = m.eval();
  for (Eigen::Index i = 0; i < e.size(); ++i) out.push_back(e.data()[i]);
  return out;
}

inline constexpr double kPi = 3.14159265358979323846;

// A function's own points followed by `random` points drawn uniformly from [lo, hi].
inline std::vector<std::vector<double>> points_of(const TestFunction& t, int random,
                                                  std::mt19937_64& rng) {
  std::vector<std::vector<double>> points = t.points;
  std::uniform_real_distribution<double> u(t.lo, t.hi);
  for (int k = 0; k < random; ++k) {
    std::vector<double> pt(t.inputs);
    for (double& v : pt) v = u(rng);
    points.push_back(pt);
  }
  return points;
}

inline std::vector<TestFunction> test_functions() {
  std::vector<TestFunction> fs;
  auto add = [&fs](TestFunction t) { fs.push_back(std::move(t)); };
  add({"arithmetic", 3, [](const Vec& x, const Vec&) {
         return Vec{x[0] * x[1] + x[2] / x[0] - x[1], 2.0 * x[0] - x[2] / 3.0 + 1.0,
                    -x[1], 4 - x[0] * 2};
       }, {}, 0.5, 2});
  add({"compound_assignment", 3, [](const Vec& x, const Vec&) {
         Sym y = -x[0];
         y += x[1];
         y *= x[2];
         y /= x[0];
         y -= 3;
         y += 1.5;
         y *= 2;
         return Vec{y};
       }, {}, 0.5, 2});
  add({"sqrt_cbrt", 2, [](const Vec& x, const Vec&) {
         return Vec{lsjit::sqrt(x[0] * x[0] + x[1]), lsjit::cbrt(x[0] * x[1])};
       }, {{1.0, 0.5}, {-1.0, 2.0}}, 0.3, 2});
  add({"exp_expm1", 2, [](const Vec& x, const Vec&) {
         return Vec{lsjit::exp(x[0] * x[1]), lsjit::expm1(x[0]), lsjit::expm1(x[1] * 1e-3)};
       }, {}});
  add({"log_log1p", 2, [](const Vec& x, const Vec&) {
         return Vec{lsjit::log(x[0] * x[1]), lsjit::log1p(x[0]), lsjit::log1p(x[1] * 1e-4)};
       }, {}, 0.2, 3});
  add({"pow_forms", 2, [](const Vec& x, const Vec&) {
         return Vec{lsjit::pow(x[0], 2.5), lsjit::pow(x[0], x[1]), lsjit::pow(2.0, x[1]),
                    lsjit::pow(x[1], 0.5), lsjit::pow(x[0], -1.5)};
       }, {}, 0.3, 2});
  add({"integer_powers", 2, [](const Vec& x, const Vec&) {
         return Vec{lsjit::pow(x[0], 3), lsjit::pow(x[0], -2), lsjit::pow(x[1], 0) + x[1],
                    lsjit::pow(x[1], 1), lsjit::pow(x[0] + x[1], 7), lsjit::pow(x[1], 2)};
       }, {{-1.5, 0.7}}, 0.3, 2});
  add({"trig", 2, [](const Vec& x, const Vec&) {
         return Vec{lsjit::sin(x[0]) * lsjit::cos(x[1]), lsjit::tan(x[0] * 0.5),
                    lsjit::sin(-x[1]), lsjit::cos(-x[0])};
       }, {}});
  add({"inverse_trig", 2, [](const Vec& x, const Vec&) {
         return Vec{lsjit::asin(x[0]), lsjit::acos(x[1]), lsjit::atan(x[0] * 5)};
       }, {{0.0, 0.0}, {0.95, -0.95}}, -0.9, 0.9});
  add({"atan2", 2, [](const Vec& x, const Vec&) { return Vec{lsjit::atan2(x[0], x[1])}; },
       // quadrant edges: on the axes, and just off the branch cut at x < 0
       {{0.0, 1.0}, {1.0, 0.0}, {-1.0, 0.0}, {0.0, 1e-3}, {1e-3, -1.0}, {-1e-3, -1.0},
        {1.0, 1.0}, {-1.0, -1.0}, {1e-2, 1e-2}}});
  add({"hyperbolic", 2, [](const Vec& x, const Vec&) {
         return Vec{lsjit::sinh(x[0]), lsjit::cosh(x[1]), lsjit::tanh(x[0] * x[1])};
       }, {}});
  add({"abs_hypot", 2, [](const Vec& x, const Vec&) {
         return Vec{lsjit::abs(x[0]) * x[1], lsjit::hypot(x[0], x[1]), lsjit::fabs(x[1] - 3.0)};
       }, {{-1.0, 0.5}, {1.0, -0.5}, {1e-3, 1e-3}}});
  add({"floor_ceil_fmod", 2, [](const Vec& x, const Vec&) {
         return Vec{lsjit::floor(x[0]) * x[1] + lsjit::ceil(x[1]), lsjit::fmod(x[0], x[1]),
                    lsjit::fmod(-x[0], 0.7)};
       }, {{2.3, 0.6}, {-2.3, 0.6}, {1.7, -0.45}}, 0.05, 3});
  add({"min_max", 3, [](const Vec& x, const Vec&) {
         return Vec{lsjit::min(x[0], x[1]) * x[2], lsjit::max(x[0], x[1] * x[2]),
                    lsjit::fmin(x[2], 0.1), lsjit::fmax(x[2], -0.1)};
       }, {{1.0, 2.0, 0.3}, {2.0, 1.0, -0.5}}});
  add({"select_and_comparisons", 3, [](const Vec& x, const Vec&) {
         const SymBool a = x[0] < x[1], b = x[1] >= x[2], c = x[0] != x[2], d = x[0] == x[1];
         const SymBool e = x[2] <= 0.3, f = x[2] > -0.3;
         return Vec{lsjit::select(a && b, x[0] * x[1], x[2]),
                    lsjit::select(!(a || c), lsjit::sin(x[0]), x[1] * x[1]),
                    lsjit::select(d, 1.0, x[2]) + lsjit::select(e && f, x[0], -x[0])};
       }, {}});
  add({"data_inputs", 2, [](const Vec& x, const Vec& p) {
         return Vec{p[0] * x[0] + lsjit::sin(p[1] * x[1]), (x[0] - p[0]) * (x[1] - p[1])};
       }, {}});
  add({"chain", 2, [](const Vec& x, const Vec&) {
         Sym y = lsjit::sin(lsjit::exp(lsjit::log1p(x[0] * x[0])));
         for (int i = 0; i < 5; ++i) y = lsjit::cos(y * x[1]) + y;
         return Vec{y, y * y};
       }, {}});
  add({"shared_subexpressions", 3, [](const Vec& x, const Vec&) {
         const Sym s = lsjit::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
         return Vec{x[0] / s, x[1] / s, x[2] / s, s};
       }, {}, 0.2, 2});
  add({"eigen_inverse_3x3", 9, [](const Vec& x, const Vec&) {
         Eigen::Matrix<Sym, 3, 3> m = mat<3, 3>(x);
         m += Eigen::Matrix3d::Identity() * 4.0;
         return flat(m.inverse());
       }, {}, -1, 1});
  add({"eigen_inverse_4x4_and_2x2", 6, [](const Vec& x, const Vec&) {
         Eigen::Matrix<Sym, 4, 4> m = Eigen::Matrix<Sym, 4, 4>::Identity() * Sym(3.0);
         m.block<2, 3>(0, 1) = mat<2, 3>(x);
         m(3, 0) = x[0] * x[5];
         Eigen::Matrix<Sym, 2, 2> m2 = mat<2, 2>(x, 2) + Eigen::Matrix2d::Identity() * 3.0;
         Vec out = flat(m.inverse());
         for (const Sym& s : flat(m2.inverse())) out.push_back(s);
         return out;
       }, {}, -1, 1});
  add({"eigen_products_transpose", 6, [](const Vec& x, const Vec&) {
         const Eigen::Matrix<Sym, 2, 3> a = mat<2, 3>(x);
         const Eigen::Matrix<double, 3, 2> b = (Eigen::Matrix<double, 3, 2>() << 1, 2, 3, 4, 5, 6).finished();
         return flat((a * a.transpose()) * (a * b));
       }, {}});
  add({"eigen_cross_dot_norm_normalized", 6, [](const Vec& x, const Vec&) {
         const Eigen::Matrix<Sym, 3, 1> a = mat<3, 1>(x), b = mat<3, 1>(x, 3);
         const Eigen::Matrix<Sym, 3, 1> c = a.cross(b);
         Vec out = flat(c.normalized());
         out.push_back(a.dot(b));
         out.push_back(a.norm() * b.squaredNorm());
         Eigen::Matrix<Sym, 3, 1> d = b;
         d.normalize();
         for (const Sym& s : flat(d)) out.push_back(s);
         return out;
       }, {}});
  add({"quaternion_rotate_compose", 8, [](const Vec& x, const Vec&) {
         Eigen::Quaternion<Sym> q1(x[0], x[1], x[2], x[3]), q2(x[4], x[5], x[6], x[7]);
         q1.normalize();
         const Eigen::Quaternion<Sym> q = q1 * q2.normalized() * q2.inverse();
         const Eigen::Matrix<Sym, 3, 1> p(x[1], x[2], x[3]);
         Vec out = flat(q._transformVector(p));
         for (const Sym& s : flat(q.coeffs())) out.push_back(s);
         for (const Sym& s : flat(q1.toRotationMatrix())) out.push_back(s);
         return out;
       }, {}, 0.1, 1});
  add({"angle_axis_from_quaternion", 4, [](const Vec& x, const Vec&) {
         const Eigen::Quaternion<Sym> q = Eigen::Quaternion<Sym>(x[0], x[1], x[2], x[3]).normalized();
         const Eigen::AngleAxis<Sym> aa(q);
         return flat((aa.angle() * aa.axis()).eval());
       }, {{0.9, 0.1, -0.2, 0.3}, {-0.9, 0.1, -0.2, 0.3}, {1e-3, 0.6, 0.6, 0.5}}, 0.1, 1});
  add({"angle_axis_to_matrix_and_back", 3, [](const Vec& x, const Vec&) {
         const Eigen::Matrix<Sym, 3, 1> w = mat<3, 1>(x);
         const Sym angle = w.norm();
         const Eigen::AngleAxis<Sym> aa(angle, (w / angle).eval());
         const Eigen::Matrix<Sym, 3, 3> R = aa.toRotationMatrix();
         const Eigen::Quaternion<Sym> q(aa);
         Vec out = flat(R * Eigen::Vector3d(1, -2, 0.5));
         for (const Sym& s : flat(q.coeffs())) out.push_back(s);
         return out;
       }, {{0.3, -0.2, 0.1}, {kPi - 1e-3, 0.0, 0.0}}, 0.1, 1.5});
  add({"quaternion_from_rotation_matrix", 3, [](const Vec& x, const Vec&) {
         // A rotation matrix from angle-axis; the tests' points hit every one of Eigen's
         // four branches (trace > 0, and each diagonal element largest).
         const Eigen::Matrix<Sym, 3, 1> w = mat<3, 1>(x);
         const Sym angle = w.norm();
         const Eigen::Matrix<Sym, 3, 3> R = Eigen::AngleAxis<Sym>(angle, (w / angle).eval()).toRotationMatrix();
         const Eigen::Quaternion<Sym> q(R);
         const Eigen::AngleAxis<Sym> back(R);
         Vec out = flat(q.coeffs());
         out.push_back(back.angle());
         return out;
       }, {{0.3, 0.2, 0.1}, {3.0, 0.1, 0.2}, {0.1, 3.0, 0.2}, {0.1, 0.2, 3.0}}, 0.1, 1});
  return fs;
}

}  // namespace lsjit::testing
