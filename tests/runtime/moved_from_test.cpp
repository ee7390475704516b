// Public types used after they were moved from: each either behaves as an empty object
// (Problem, Values) or throws lsjit::Error naming what happened (AnalyzedProblem), never
// crashes.
#include <doctest/doctest.h>

#include <utility>

#include "lsjit/lsjit.h"

using namespace lsjit;

namespace {

auto moved_prior = cost("moved_prior", [](const auto& v, VecVar<2> a, const auto& z) {
  return (v[a] - z).eval();
});

Problem one_prior_problem() {
  Problem p;
  p.add(moved_prior, VecVar<2>(0), Eigen::Vector2d(1, 2));
  return p;
}

Values one_value() {
  Values v;
  v.set(VecVar<2>(0), Eigen::Vector2d(0, 0));
  return v;
}

}  // namespace

TEST_CASE("moved from: every method of a moved-from AnalyzedProblem throws lsjit::Error") {
  AnalyzedProblem a = one_prior_problem().analyze();
  const Values v = one_value();
  AnalyzedProblem b = std::move(a);
  CHECK(b.solve(v).summary.usable());  // the object moved to holds the analysis

  const auto moved = [](auto&& call) {
    try {
      call();
    } catch (const Error& e) {
      return std::string(e.what()).find("moved from") != std::string::npos;
    }
    return false;
  };
  CHECK(moved([&] { (void)a.solve(v); }));
  CHECK(moved([&] { (void)a.cost(v); }));
  CHECK(moved([&] { (void)a.evaluate(v, true); }));
  CHECK(moved([&] { (void)a.gauss_newton_matrix(v); }));
  CHECK(moved([&] { (void)a.free_variables(); }));
  CHECK(moved([&] { (void)a.all_instances(); }));
  CHECK(moved([&] { (void)a.evaluate_instances(v, {{0, 0}}); }));
  CHECK(moved([&] { (void)a.finite_difference_jacobians(v, {{0, 0}}); }));
  CHECK(moved([&] { (void)a.check_gradients(v); }));
  CHECK(moved([&] { (void)a.groups(); }));
  CHECK(moved([&] { (void)a.num_instances(); }));
  CHECK(moved([&] { (void)a.tangent_dim(); }));
  CHECK(moved([&] { (void)a.trace_s(); }));
  CHECK(moved([&] { (void)a.compile_s(); }));

  // Assigning a new analysis makes it usable again.
  a = std::move(b);
  CHECK(a.solve(v).summary.usable());
  CHECK(moved([&] { (void)b.cost(v); }));
}

TEST_CASE("moved from: a moved-from Problem is empty and can be filled again") {
  Problem a = one_prior_problem();
  Problem b = std::move(a);
  CHECK(b.num_instances() == 1);
  CHECK(a.num_instances() == 0);
  // Empty: nothing to solve, so the solve reports no free variables.
  const SolveResult empty = a.analyze().solve(one_value());
  CHECK(empty.summary.usable());
  CHECK(empty.summary.residual_blocks == 0);
  a.add(moved_prior, VecVar<2>(0), Eigen::Vector2d(3, 4));
  CHECK(a.num_instances() == 1);
  const SolveResult r = a.analyze().solve(one_value());
  CHECK((r.values.get(VecVar<2>(0)) - Eigen::Vector2d(3, 4)).norm() < 1e-6);  // LM stops at its tolerances

  Problem c;
  c = std::move(b);
  CHECK(c.num_instances() == 1);
  CHECK(b.num_instances() == 0);
}

TEST_CASE("moved from: a moved-from Values holds no values") {
  Values a = one_value();
  Values b = std::move(a);
  CHECK(b.has(VecVar<2>(0)));
  CHECK(a.empty());
  a.set(VecVar<2>(0), Eigen::Vector2d(5, 6));
  CHECK(a.get(VecVar<2>(0)).isApprox(Eigen::Vector2d(5, 6)));
}
