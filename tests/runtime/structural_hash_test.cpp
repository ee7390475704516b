// The structural hash is the static key of a trace: equal when only IDs, values or data
// differ; different when the op graph, a captured constant, a variable type or a data shape
// differs.
#include <doctest/doctest.h>

#include "lsjit/ir/differentiate.h"
#include "lsjit/ir/structural_hash.h"
#include "lsjit/runtime/builtin_costs.h"
#include "lsjit/runtime/cost.h"

using lsjit::ir::structural_hash;

namespace {

auto make_between() {
  return lsjit::cost("between", [](const auto& v, lsjit::SE2Var a, lsjit::SE2Var b, const auto& z,
                                   const auto& U) {
    return (U * (z.inverse() * v[a].inverse() * v[b]).log()).eval();
  });
}

// The same cost written inside a loop: one closure type, captured values differ.
auto make_scaled(double scale) {
  return lsjit::cost("scaled", [scale](const auto& v, lsjit::VecVar<2> x, const auto& target) {
    return ((v[x] - target) * scale).eval();
  });
}

}  // namespace

TEST_CASE("hash ignores variable IDs, values and data") {
  const auto c = make_between();
  Eigen::Matrix3d U1 = Eigen::Matrix3d::Identity(), U2 = 3 * Eigen::Matrix3d::Identity();
  const auto h1 = structural_hash(lsjit::trace(c, lsjit::SE2Var(0), lsjit::SE2Var(1), lsjit::SE2d(), U1));
  const auto h2 = structural_hash(lsjit::trace(c, lsjit::SE2Var(17), lsjit::SE2Var(4),
                                               lsjit::SE2d::exp(Eigen::Vector3d(1, 2, 3)), U2));
  CHECK(h1 == h2);
  CHECK(h1.hex().size() == 32);
}

TEST_CASE("hash ignores the names of the cost and of its slots") {
  const auto c = make_between();
  auto renamed = c.named({"p", "q"}, {"meas", "sqrt_info"});
  renamed.name = "other_name";
  const Eigen::Matrix3d U = Eigen::Matrix3d::Identity();
  CHECK(structural_hash(lsjit::trace(c, lsjit::SE2Var(0), lsjit::SE2Var(1), lsjit::SE2d(), U)) ==
        structural_hash(lsjit::trace(renamed, lsjit::SE2Var(0), lsjit::SE2Var(1), lsjit::SE2d(), U)));
}

TEST_CASE("hash is equal for the same closure type with equal captures, different otherwise") {
  std::vector<lsjit::Hash128> hashes;
  for (double scale : {2.0, 2.0, 3.0})
    hashes.push_back(structural_hash(
        lsjit::trace(make_scaled(scale), lsjit::VecVar<2>(0), Eigen::Vector2d(1, 2))));
  CHECK(hashes[0] == hashes[1]);
  CHECK(hashes[0] != hashes[2]);  // a captured constant is baked in
}

TEST_CASE("hash differs when a variable type differs") {
  // VecVar<1> and ScalarVar have the same sizes and retraction, so the op graphs are
  // identical; only the variable type tells them apart.
  const auto g = lsjit::cost("doubled", [](const auto& v, auto x) {
    auto y = v[x];
    y *= 2.0;
    return y;
  });
  const auto h_vec = structural_hash(lsjit::trace(g, lsjit::VecVar<1>(0)));
  const auto h_vec_again = structural_hash(lsjit::trace(g, lsjit::VecVar<1>(5)));
  const auto h_scalar = structural_hash(lsjit::trace(g, lsjit::ScalarVar(0)));
  CHECK(h_vec == h_vec_again);
  CHECK(lsjit::trace(g, lsjit::VecVar<1>(0)).graph == lsjit::trace(g, lsjit::ScalarVar(0)).graph);
  CHECK(h_vec != h_scalar);
}

TEST_CASE("hash differs when a data shape differs") {
  const auto c = lsjit::cost("weighted", [](const auto& v, lsjit::ScalarVar x, const auto& w) {
    return (w * v[x]).eval();
  });
  const auto h3 = structural_hash(lsjit::trace(c, lsjit::ScalarVar(0), Eigen::Vector3d()));
  const auto h2 = structural_hash(lsjit::trace(c, lsjit::ScalarVar(0), Eigen::Vector2d()));
  const auto h3b = structural_hash(lsjit::trace(c, lsjit::ScalarVar(1), Eigen::Vector3d(4, 5, 6)));
  CHECK(h3 != h2);
  CHECK(h3 == h3b);
}

TEST_CASE("hash differs when only the data's declared type differs, not its size") {
  // A 4-vector and an SE2 measurement are both 4 numbers; they are different static types.
  const auto c = lsjit::cost("first", [](const auto& v, lsjit::ScalarVar x, const auto& d) {
    return v[x] * 2.0;
  });
  const auto h_vec = structural_hash(lsjit::trace(c, lsjit::ScalarVar(0), Eigen::Vector4d()));
  const auto h_se2 = structural_hash(lsjit::trace(c, lsjit::ScalarVar(0), lsjit::SE2d()));
  CHECK(h_vec != h_se2);
}

TEST_CASE("hash differs when the op graph differs") {
  const auto a = lsjit::cost("f", [](const auto& v, lsjit::ScalarVar x) { return sin(v[x]); });
  const auto b = lsjit::cost("f", [](const auto& v, lsjit::ScalarVar x) { return cos(v[x]); });
  const auto c = lsjit::cost("f", [](const auto& v, lsjit::ScalarVar x) { return sin(v[x]) + 0.0; });
  const auto ha = structural_hash(lsjit::trace(a, lsjit::ScalarVar(0)));
  CHECK(ha != structural_hash(lsjit::trace(b, lsjit::ScalarVar(0))));
  CHECK(ha != structural_hash(lsjit::trace(c, lsjit::ScalarVar(0))));
}

TEST_CASE("hash differs by cost kind and stage") {
  const auto ls = lsjit::cost("f", [](const auto& v, lsjit::ScalarVar x) { return v[x] * v[x]; });
  auto eq = ls;
  eq.kind = lsjit::CostKind::Equality;
  const auto t = lsjit::trace(ls, lsjit::ScalarVar(0));
  CHECK(structural_hash(t) != structural_hash(lsjit::trace(eq, lsjit::ScalarVar(0))));
  CHECK(structural_hash(t) != structural_hash(lsjit::ir::differentiate(t)));
  CHECK(structural_hash(lsjit::ir::differentiate(t)) == structural_hash(lsjit::ir::differentiate(t)));
}

TEST_CASE("every built-in cost hashes differently and deterministically") {
  std::vector<lsjit::Hash128> seen;
  for (const auto& c : lsjit::builtin_costs()) {
    CAPTURE(c.name);
    const auto h = structural_hash(c.trace());
    CHECK(h == structural_hash(c.trace()));
    for (const auto& other : seen) CHECK(h != other);
    seen.push_back(h);
  }
}
