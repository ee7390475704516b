// Per-instance evaluation (runtime/evaluate/instance_evaluation.h): residuals and Jacobian blocks
// against the reference interpreter and against derivatives written by hand, instance
// costs under robust losses, the outliers of a robust solve, constraints, no recompiles,
// and bad input.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <string>

#include "../support/memory_cache.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/lsjit.h"

using namespace lsjit;

namespace {

// r = [sin(x0) + x1 - t0, x0·x1 - t1]: J = [[cos x0, 1], [x1, x0]].
auto fit = cost("instance_fit", [](const auto& v, VecVar<2> x, const auto& t) {
  const auto p = v[x];
  return std::array<Sym, 2>{sin(p(0)) + p(1) - t(0), p(0) * p(1) - t(1)};
});

// The message of the lsjit::Error that f throws ("" if none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A small SE2 pose graph: poses 0..4 (0 constant), a chain and two loop closures.
struct SmallSE2Graph {
  Problem problem;
  Values values;
  std::vector<std::pair<int, int>> edges{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 0}, {1, 3}};
  std::vector<SE2d> z;
  std::vector<Eigen::Matrix3d> U;
};

SmallSE2Graph pose_graph(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  SmallSE2Graph g;
  for (int i = 0; i < 5; ++i) g.values.set(SE2Var(i), SE2d::exp(Eigen::Vector3d(2 * u(rng), u(rng), 3 * u(rng))));
  for (const auto& [a, b] : g.edges) {
    g.z.push_back(SE2d::exp(Eigen::Vector3d(u(rng), u(rng), u(rng))));
    Eigen::Matrix3d U = Eigen::Matrix3d::Identity() * 2.0;
    U(0, 1) = 0.3 * u(rng);
    U(1, 2) = 0.2 * u(rng);
    g.U.push_back(U);
    g.problem.add(standard_costs::se2_between_cost(), SE2Var(a), SE2Var(b), g.z.back(), U);
  }
  g.problem.set_constant(SE2Var(0));
  return g;
}

template <class T>
std::vector<double> flat(const T& value) {
  std::vector<double> out(DataTraits<T>::kRows * DataTraits<T>::kCols);
  DataTraits<T>::flatten(value, out.data());
  return out;
}

}  // namespace

TEST_CASE("instance residuals and Jacobian blocks equal the reference interpreter's") {
  std::mt19937_64 rng(11);
  SmallSE2Graph g = pose_graph(rng);
  const AnalyzedProblem a = g.problem.analyze(lsjit::testing::analyze_with());
  REQUIRE(a.groups().size() == 1);
  const ir::Trace jac = ir::differentiate(
      lsjit::trace(standard_costs::se2_between_cost(), SE2Var(0), SE2Var(1), SE2d(), Eigen::Matrix3d::Zero()));
  // Out of order, one instance twice.
  const std::vector<CostInstance> which{{0, 4}, {0, 1}, {0, 5}, {0, 1}, {0, 0}};
  const std::vector<InstanceEvaluation> got = a.evaluate_instances(g.values, which);
  REQUIRE(got.size() == which.size());
  for (size_t k = 0; k < which.size(); ++k) {
    const size_t e = which[k].instance;
    CAPTURE(e);
    CHECK(got[k].which == which[k]);
    const auto [i, j] = g.edges[e];
    ir::InputValues in;
    for (int id : {i, j}) in.vars.push_back(flat(g.values.get(SE2Var(id))));
    in.data = {flat(g.z[e]), flat(g.U[e])};
    const ir::EvalResult ref = ir::evaluate(jac, in);
    REQUIRE(got[k].residuals.size() == 3);
    double s = 0;
    for (int r = 0; r < 3; ++r) {
      CHECK(got[k].residuals(r) == doctest::Approx(ref.residual[r]).epsilon(1e-12).scale(1e-12));
      s += ref.residual[r] * ref.residual[r];
    }
    CHECK(got[k].squared_norm == doctest::Approx(s).epsilon(1e-12));
    CHECK(got[k].cost == doctest::Approx(0.5 * s).epsilon(1e-12));
    CHECK(got[k].weight == 1.0);
    REQUIRE(got[k].blocks.size() == 2);
    for (int slot = 0; slot < 2; ++slot) {
      const JacobianBlock& b = got[k].blocks[slot];
      CHECK(b.type == "SE2");
      CHECK(b.id == (slot == 0 ? i : j));
      CHECK(b.constant == (b.id == 0));
      REQUIRE(b.jacobian.rows() == 3);
      REQUIRE(b.jacobian.cols() == 3);
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
          CHECK(b.jacobian(r, c) == doctest::Approx(ref.jacobian[slot][r * 3 + c]).epsilon(1e-11).scale(1e-11));
    }
  }
  // The instance costs add up to the problem's cost; without Jacobians the blocks are empty.
  const auto all = a.evaluate_instances(g.values, a.all_instances(), false);
  REQUIRE(all.size() == g.edges.size());
  double total = 0;
  for (const auto& e : all) {
    total += e.cost;
    CHECK(e.blocks.size() == 2);
    CHECK(e.blocks[0].jacobian.size() == 0);
  }
  CHECK(total == doctest::Approx(a.cost(g.values)).epsilon(1e-13));
}

TEST_CASE("instance Jacobians equal the derivative written by hand, and central differences") {
  Problem p;
  const std::vector<Eigen::Vector2d> x{{0.3, -1.2}, {2.0, 0.7}, {-0.4, 0.1}};
  const std::vector<Eigen::Vector2d> t{{0.1, 0.2}, {-1.0, 3.0}, {0.5, 0.5}, {2.0, -2.0}};
  Values v;
  for (int k = 0; k < 3; ++k) v.set(VecVar<2>(10 * k), x[k]);
  for (int k = 0; k < 4; ++k) p.add(fit, VecVar<2>(10 * (k % 3)), t[k]);
  const AnalyzedProblem a = p.analyze(lsjit::testing::analyze_with());
  const auto exact = a.evaluate_instances(v, a.all_instances());
  const auto fd = a.finite_difference_jacobians(v, a.all_instances());
  for (size_t k = 0; k < 4; ++k) {
    CAPTURE(k);
    const Eigen::Vector2d& p0 = x[k % 3];
    CHECK(exact[k].blocks[0].id == int64_t(10 * (k % 3)));
    CHECK(exact[k].residuals(0) == doctest::Approx(std::sin(p0(0)) + p0(1) - t[k](0)).epsilon(1e-14));
    CHECK(exact[k].residuals(1) == doctest::Approx(p0(0) * p0(1) - t[k](1)).epsilon(1e-14));
    RowMajorMatrix J(2, 2);
    J << std::cos(p0(0)), 1.0, p0(1), p0(0);
    CHECK((exact[k].blocks[0].jacobian - J).cwiseAbs().maxCoeff() <= 1e-15);
    CHECK((fd[k].blocks[0].jacobian - J).cwiseAbs().maxCoeff() <= 1e-8);
    CHECK(fd[k].residuals == exact[k].residuals);
  }
}

TEST_CASE("robust instance costs are ½ρ(‖r‖²), and a robust solve's outliers are listed") {
  // A line y = 2x - 1 through 20 points, three of them gross outliers.
  auto line = cost("instance_line", [](const auto& v, VecVar<2> ab, const auto& xy) {
    return v[ab](0) * xy(0) + v[ab](1) - xy(1);
  });
  const std::set<size_t> outliers{3, 11, 17};
  std::vector<Eigen::Vector2d> points;
  for (size_t k = 0; k < 20; ++k) {
    const double xk = 0.25 * static_cast<double>(k);
    const double noise = 0.01 * std::sin(7.0 * static_cast<double>(k));
    points.emplace_back(xk, 2 * xk - 1 + noise + (outliers.count(k) ? 6.0 : 0.0));
  }
  const Loss loss = CauchyLoss(0.5);
  Problem p;
  p.add(line, loss, VecVar<2>(0), points);
  const AnalyzedProblem a = p.analyze(lsjit::testing::analyze_with());
  Values initial;
  initial.set(VecVar<2>(0), Eigen::Vector2d(1.8, -0.8));
  SolverOptions o;
  o.max_iterations = 200;
  const SolveResult r = a.solve(initial, o);
  REQUIRE(converged(r.summary.termination));
  const Eigen::Vector2d ab = r.values.get(VecVar<2>(0));
  CHECK(ab(0) == doctest::Approx(2.0).epsilon(1e-2));

  const auto e = a.evaluate_instances(r.values, a.all_instances(), false);
  std::set<size_t> found;
  double total = 0;
  for (size_t k = 0; k < e.size(); ++k) {
    CAPTURE(k);
    const double res = ab(0) * points[k](0) + ab(1) - points[k](1);  // by hand
    double rho[3];
    loss.evaluate(res * res, rho);
    CHECK(e[k].residuals(0) == doctest::Approx(res).epsilon(1e-12).scale(10.0));  // terms of ~10 cancel
    CHECK(e[k].squared_norm == doctest::Approx(res * res).epsilon(1e-10).scale(1e-20));
    CHECK(e[k].cost == doctest::Approx(0.5 * rho[0]).epsilon(1e-10).scale(1e-20));
    CHECK(e[k].weight == doctest::Approx(rho[1]).epsilon(1e-10));
    total += e[k].cost;
    if (e[k].weight < 0.1) found.insert(k);
  }
  CHECK(found == outliers);
  CHECK(total == doctest::Approx(r.summary.final_cost).epsilon(1e-12));
}

TEST_CASE("a constraint instance gives c(x) and its Jacobian, and no cost") {
  auto on_circle = cost("instance_circle", [](const auto& v, VecVar<2> p) { return v[p].squaredNorm() - 1.0; },
                        CostKind::Equality);
  Problem p;
  p.add(fit, VecVar<2>(0), Eigen::Vector2d(0.0, 0.0));
  p.add(on_circle, VecVar<2>(0));
  const AnalyzedProblem a = p.analyze(lsjit::testing::analyze_with());
  REQUIRE(a.groups().size() == 2);
  Values v;
  v.set(VecVar<2>(0), Eigen::Vector2d(0.6, 1.1));
  const size_t g = a.groups()[0].cost == "instance_circle" ? 0 : 1;
  const auto e = a.evaluate_instances(v, {{g, 0}});
  CHECK(e[0].residuals(0) == doctest::Approx(0.36 + 1.21 - 1.0).epsilon(1e-14));
  CHECK(e[0].cost == 0.0);
  CHECK(e[0].blocks[0].jacobian(0, 0) == doctest::Approx(1.2).epsilon(1e-14));
  CHECK(e[0].blocks[0].jacobian(0, 1) == doctest::Approx(2.2).epsilon(1e-14));
}

TEST_CASE("per-instance evaluation never recompiles: values, instances and their number are runtime") {
  compiler::KernelCache::Options o;
  o.use_disk = false;
  o.quiet = true;
  compiler::KernelCache cache(o);
  auto make = [&](int n) {
    Problem p;
    for (int k = 0; k < n; ++k) p.add(fit, VecVar<2>(k % 3), Eigen::Vector2d(0.1 * k, -0.2 * k));
    return p.analyze(lsjit::testing::analyze_with(cache));
  };
  const AnalyzedProblem small = make(4);
  CHECK(cache.stats().compiles == 2);  // residual and normal equations
  Values v;
  for (int k = 0; k < 3; ++k) v.set(VecVar<2>(k), Eigen::Vector2d(0.5 * k, 1.0 - k));
  small.evaluate_instances(v, {{0, 2}}, false);
  CHECK(cache.stats().compiles == 2);  // residuals: the solver's kernel
  small.evaluate_instances(v, {{0, 2}});
  CHECK(cache.stats().compiles == 3);  // the ResidualJacobian kernel, once
  CHECK(cache.stats().recompiles == 0);
  small.evaluate_instances(v, small.all_instances());
  small.check_gradients(v);
  v.set(VecVar<2>(1), Eigen::Vector2d(-3.0, 4.0));
  small.evaluate_instances(v, {{0, 3}, {0, 0}});
  const AnalyzedProblem large = make(50);  // more instances: same kernels
  large.evaluate_instances(v, large.all_instances());
  large.check_gradients(v, {{0, 49}});
  CHECK(cache.stats().compiles == 3);
  CHECK(cache.stats().recompiles == 0);
}

TEST_CASE("per-instance evaluation: bad input is an lsjit::Error that says what was expected") {
  Problem p;
  p.add(fit, VecVar<2>(0), Eigen::Vector2d(0.0, 0.0));
  p.add(fit, VecVar<2>(7), Eigen::Vector2d(1.0, 0.0));
  const AnalyzedProblem a = p.analyze(lsjit::testing::analyze_with());
  Values v;
  v.set(VecVar<2>(0), Eigen::Vector2d(1.0, 2.0));
  // Only the chosen instances' variables need values.
  CHECK(a.evaluate_instances(v, {{0, 0}}).size() == 1);
  CHECK(error_of([&] { a.evaluate_instances(v, {{0, 1}}); }) ==
        "lsjit::AnalyzedProblem::evaluate_instances: no value for Vec2 variable 7 (cost 'instance_fit' "
        "instance 1 uses it)");
  CHECK(error_of([&] { a.evaluate_instances(v, {{0, 2}}); }) ==
        "lsjit::AnalyzedProblem::evaluate_instances: instance 2 of group 0 (cost 'instance_fit') does not "
        "exist: the group has 2 instances");
  CHECK(error_of([&] { a.evaluate_instances(v, {{1, 0}}); }) ==
        "lsjit::AnalyzedProblem::evaluate_instances: group 1 does not exist: expected a group below 1 "
        "(AnalyzedProblem::groups())");
  v.set(VecVar<2>(7), Eigen::Vector2d(std::numeric_limits<double>::quiet_NaN(), 0.0));
  CHECK(error_of([&] { a.evaluate_instances(v, {{0, 1}}); }).find(
            "Vec2 variable 7 (cost 'instance_fit' instance 1 uses it) has parameter 0 = nan: expected finite "
            "values") != std::string::npos);
  CHECK(error_of([&] { a.finite_difference_jacobians(v, {{0, 0}}, 0.0); }) ==
        "lsjit::AnalyzedProblem::finite_difference_jacobians: relative_step is 0: expected a positive, "
        "finite step");
  CHECK(error_of([&] { a.check_gradients(v, {{0, 1}}); }).find("expected finite values") != std::string::npos);
}
