// Traced test costs with two or three variable slots of different tangent dimensions, for
// what a single Euclidean variable (test_functions.h) cannot show: Jacobian blocks per
// slot, off-diagonal normal-equation blocks H[v,w], retractions that are not x + δ, slots
// the residual ignores, residual rows that read one slot only, constant residuals and
// constant Jacobian entries.
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "lsjit/ir/interpreter.h"
#include "lsjit/ir/sym.h"

namespace lsjit::testing {

struct MultiSlotFunction {
  std::string name;
  std::function<ir::Trace()> trace;
  // Valid inputs (unit quaternions and complexes, values in the functions' domains).
  std::function<ir::InputValues(std::mt19937_64&)> sample;
};

namespace multi_slot_detail {

using lsjit::Sym;
using Vec = std::vector<Sym>;

inline std::vector<double> uniform(std::mt19937_64& rng, size_t n, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

inline std::vector<double> unit(std::vector<double> v) {
  double n2 = 0;
  for (double x : v) n2 += x * x;
  for (double& x : v) x /= std::sqrt(n2);
  return v;
}

// A quaternion (w, x, y, z) of slot `slot` (ambient 4, tangent 3) retracted by a first-order
// exponential, q ⊞ δ = normalize(q ⊗ (1, δ/2)): smooth, and the identity at δ = 0.
inline std::vector<Sym> quaternion(Tracer& t, uint32_t slot) {
  const Sym w = t.var(slot, 0), x = t.var(slot, 1), y = t.var(slot, 2), z = t.var(slot, 3);
  const Sym a = t.tangent(slot, 0) * 0.5, b = t.tangent(slot, 1) * 0.5, c = t.tangent(slot, 2) * 0.5;
  std::vector<Sym> q = {w - x * a - y * b - z * c, x + w * a + y * c - z * b,
                        y + w * b + z * a - x * c, z + w * c + x * b - y * a};
  const Sym n = lsjit::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (Sym& e : q) e = e / n;
  return q;
}

// R(q) p for a unit quaternion q = (w, x, y, z).
inline Vec rotate(const std::vector<Sym>& q, const Vec& p) {
  const Sym &w = q[0], &x = q[1], &y = q[2], &z = q[3];
  return {(1 - 2 * (y * y + z * z)) * p[0] + 2 * (x * y - w * z) * p[1] + 2 * (x * z + w * y) * p[2],
          2 * (x * y + w * z) * p[0] + (1 - 2 * (x * x + z * z)) * p[1] + 2 * (y * z - w * x) * p[2],
          2 * (x * z - w * y) * p[0] + 2 * (y * z + w * x) * p[1] + (1 - 2 * (x * x + y * y)) * p[2]};
}

}  // namespace multi_slot_detail

inline std::vector<MultiSlotFunction> multi_slot_functions() {
  using namespace multi_slot_detail;
  std::vector<MultiSlotFunction> fs;

  // Three slots (tangent 3, 2, 1), every residual reads all of them: dense blocks.
  fs.push_back({"rotate_scale_point",
                [] {
                  ir::Signature sig;
                  sig.name = "rotate_scale_point";
                  sig.vars = {{"q", "Quat", 4, 3}, {"t", "Vec2", 2, 2}, {"s", "Scalar", 1, 1}};
                  sig.data = {{"z", "Vec3", 3, 1}};
                  Tracer tr(sig);
                  const std::vector<Sym> q = quaternion(tr, 0);
                  const Sym t0 = tr.var(1, 0) + tr.tangent(1, 0), t1 = tr.var(1, 1) + tr.tangent(1, 1);
                  const Sym s = tr.var(2, 0) + tr.tangent(2, 0);
                  const Vec p = rotate(q, {t0, t1, s});
                  Vec r;
                  for (uint32_t i = 0; i < 3; ++i) r.push_back(s * p[i] - tr.data(0, i));
                  r.push_back(t0 * t1 - s * s + lsjit::sin(q[1] * t0));
                  tr.set_residual(r);
                  return tr.finish();
                },
                [](std::mt19937_64& rng) {
                  ir::InputValues in;
                  in.vars = {unit(uniform(rng, 4, -1, 1)), uniform(rng, 2, -1, 1),
                             uniform(rng, 1, 0.5, 2)};
                  in.data = {uniform(rng, 3, -1, 1)};
                  return in;
                }});

  // An angle as a unit complex (tangent 1) and a point (tangent 3): rows that read one slot
  // only, a constant residual, a residual that is the constant 0, a constant Jacobian entry.
  fs.push_back({"angle_and_point",
                [] {
                  ir::Signature sig;
                  sig.name = "angle_and_point";
                  sig.vars = {{"th", "SO2", 2, 1}, {"x", "Vec3", 3, 3}};
                  sig.data = {{"p", "Vec2", 2, 1}};
                  Tracer tr(sig);
                  const Sym c0 = tr.var(0, 0), s0 = tr.var(0, 1), d = tr.tangent(0, 0);
                  const Sym c = c0 * lsjit::cos(d) - s0 * lsjit::sin(d);
                  const Sym s = s0 * lsjit::cos(d) + c0 * lsjit::sin(d);
                  Vec x;
                  for (uint32_t i = 0; i < 3; ++i) x.push_back(tr.var(1, i) + tr.tangent(1, i));
                  const Sym p0 = tr.data(0, 0), p1 = tr.data(0, 1);
                  tr.set_residual({c * x[0] - s * x[1] - p0,         // both slots
                                   lsjit::atan2(s, c) - p1,          // th only
                                   x[2] * x[2] - 2 + lsjit::exp(x[0]),  // x only
                                   Sym(1.5),                         // constant
                                   Sym(0.0),                         // the constant 0
                                   3 * x[1] - p0});                  // J[x] entry const 3
                  return tr.finish();
                },
                [](std::mt19937_64& rng) {
                  ir::InputValues in;
                  const double a = uniform(rng, 1, -3, 3)[0];
                  in.vars = {{std::cos(a), std::sin(a)}, uniform(rng, 3, -1, 1)};
                  in.data = {uniform(rng, 2, -1, 1)};
                  return in;
                }});

  // Rows that read a or b but never both, and a slot u the residual ignores: H[a,b], g[u]
  // and H[., u] are structurally zero.
  fs.push_back({"independent_blocks",
                [] {
                  ir::Signature sig;
                  sig.name = "independent_blocks";
                  sig.vars = {{"a", "Vec2", 2, 2}, {"u", "Scalar", 1, 1}, {"b", "Vec3", 3, 3}};
                  Tracer tr(sig);
                  Vec a, b;
                  for (uint32_t i = 0; i < 2; ++i) a.push_back(tr.var(0, i) + tr.tangent(0, i));
                  for (uint32_t i = 0; i < 3; ++i) b.push_back(tr.var(2, i) + tr.tangent(2, i));
                  tr.set_residual({a[0] * a[1], lsjit::sin(a[1]), b[0] * b[0] + b[1], b[2] * b[2],
                                   lsjit::hypot(a[0], 2.0)});
                  return tr.finish();
                },
                [](std::mt19937_64& rng) {
                  ir::InputValues in;
                  in.vars = {uniform(rng, 2, -1, 1), uniform(rng, 1, -1, 1), uniform(rng, 3, -1, 1)};
                  return in;
                }});
  return fs;
}

}  // namespace lsjit::testing
