// Constrained least squares through the augmented Lagrangian: problems with known
// solutions (Hock & Schittkowski, "Test examples for nonlinear programming codes", 1981),
// active and inactive inequalities, and a constrained pose graph.
//
// HS objectives that are not sums of squares are written as ½r² with r = sqrt(2(f + C)):
// the same minimizer wherever f + C > 0, which holds on each problem's region.
#include <doctest/doctest.h>

#include <cmath>

#include "../support/memory_cache.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/lsjit.h"

using namespace lsjit;

namespace {

SolverOptions tight_constrained() {
  SolverOptions o;
  o.linear_solver = LinearSolver::DenseCholesky;
  o.function_tolerance = 1e-14;
  o.gradient_tolerance = 1e-14;
  o.parameter_tolerance = 1e-14;
  o.max_iterations = 500;
  o.constraints.violation_tolerance = 1e-10;
  return o;
}

template <int N>
Eigen::Matrix<double, N, 1> solve(Problem& p, const Eigen::Matrix<double, N, 1>& x0, SolveSummary* s) {
  Values v;
  v.set(VecVar<N>(0), x0);
  const SolveResult r = p.analyze(lsjit::testing::analyze_with()).solve(v, tight_constrained());
  CAPTURE(r.summary.report());
  CHECK(converged(r.summary.termination));
  CHECK(r.summary.constraint_violation <= 1e-10);
  *s = r.summary;
  return r.values.get(VecVar<N>(0));
}

// A point drawn to (3, 4) and held on the unit circle: its solution is (0.6, 0.8).
Problem circle_problem() {
  auto to_target = cost("to_target", [](const auto& v, VecVar<2> p, const auto& t) { return (v[p] - t).eval(); });
  auto on_circle = cost("on_circle", [](const auto& v, VecVar<2> p) { return v[p].squaredNorm() - 1.0; },
                        CostKind::Equality);
  Problem p;
  p.add(to_target, VecVar<2>(0), Eigen::Vector2d(3.0, 4.0));
  p.add(on_circle, VecVar<2>(0));
  return p;
}

}  // namespace

TEST_CASE("a point constrained to the unit circle lands at the nearest point") {
  Problem p = circle_problem();
  SolveSummary s;
  const Eigen::Vector2d x = solve<2>(p, Eigen::Vector2d(0.5, 0.1), &s);
  CHECK(x.norm() == doctest::Approx(1.0).epsilon(1e-10));  // on the circle, to the tolerance
  // Along the circle the objective is flat to second order at its minimum: a cost converged
  // to 1e-14 relative places the point to about 1e-7.
  CHECK(x(0) == doctest::Approx(0.6).epsilon(1e-6));
  CHECK(x(1) == doctest::Approx(0.8).epsilon(1e-6));
  CHECK(s.final_cost == doctest::Approx(0.5 * 16.0).epsilon(1e-9));  // |(3,4) - (0.6,0.8)|²/2
  CHECK(s.outer_iterations.size() >= 2);
}

TEST_CASE("iteration times count from the start of solve(), across the inner solves") {
  Values v;
  v.set(VecVar<2>(0), Eigen::Vector2d(0.5, 0.1));
  const SolveSummary s = circle_problem().analyze(lsjit::testing::analyze_with()).solve(v, tight_constrained()).summary;
  REQUIRE(s.outer_iterations.size() >= 2);
  REQUIRE(s.per_iteration.size() > s.outer_iterations.size());
  // Each inner solve's rows continue the clock of the one before (they restarted at 0).
  for (size_t k = 1; k < s.per_iteration.size(); ++k)
    CHECK(s.per_iteration[k].cumulative_s >= s.per_iteration[k - 1].cumulative_s);
  CHECK(s.per_iteration.back().cumulative_s <= s.solve_s);
  // The set-up comes before the first evaluation, which iteration 0's row includes.
  CHECK(s.setup_s > 0);
  CHECK(s.per_iteration.front().cumulative_s >= s.setup_s);
  CHECK(s.setup_s <= s.solve_s);
}

TEST_CASE("max_time_s is the whole constrained solve's budget, not each inner solve's") {
  Values v;
  v.set(VecVar<2>(0), Eigen::Vector2d(0.5, 0.1));
  SolverOptions o = tight_constrained();
  o.max_time_s = 0;  // spent before the first step
  const SolveSummary s = circle_problem().analyze(lsjit::testing::analyze_with()).solve(v, o).summary;
  CAPTURE(s.report());
  CHECK(s.termination == Termination::TimeLimit);
  CHECK(s.outer_iterations.size() == 1);  // not max_outer_iterations inner solves of no step
  CHECK(s.iterations == 0);
}

TEST_CASE("HS6: min (1 - x1)^2 s.t. 10 (x2 - x1^2) = 0, solution (1, 1)") {
  auto f = cost("hs6_f", [](const auto& v, VecVar<2> x) { return 1.0 - v[x](0); });
  auto c = cost("hs6_c", [](const auto& v, VecVar<2> x) { return 10.0 * (v[x](1) - v[x](0) * v[x](0)); },
                CostKind::Equality);
  Problem p;
  p.add(f, VecVar<2>(0));
  p.add(c, VecVar<2>(0));
  SolveSummary s;
  const Eigen::Vector2d x = solve<2>(p, Eigen::Vector2d(-1.2, 1.0), &s);
  CHECK(x(0) == doctest::Approx(1.0).epsilon(1e-7));
  CHECK(x(1) == doctest::Approx(1.0).epsilon(1e-7));
  CHECK(s.final_cost < 1e-14);
}

TEST_CASE("HS7: min log(1 + x1^2) - x2 s.t. (1 + x1^2)^2 + x2^2 = 4, solution (0, sqrt 3)") {
  auto f = cost("hs7_f", [](const auto& v, VecVar<2> x) {
    return sqrt(2.0 * (log(1.0 + v[x](0) * v[x](0)) - v[x](1) + 10.0));
  });
  auto c = cost("hs7_c", [](const auto& v, VecVar<2> x) {
    const Sym a = 1.0 + v[x](0) * v[x](0);
    return a * a + v[x](1) * v[x](1) - 4.0;
  }, CostKind::Equality);
  Problem p;
  p.add(f, VecVar<2>(0));
  p.add(c, VecVar<2>(0));
  SolveSummary s;
  const Eigen::Vector2d x = solve<2>(p, Eigen::Vector2d(2.0, 2.0), &s);
  CHECK(std::abs(x(0)) < 1e-6);
  CHECK(x(1) == doctest::Approx(std::sqrt(3.0)).epsilon(1e-8));
  CHECK(s.final_cost - 10.0 == doctest::Approx(-std::sqrt(3.0)).epsilon(1e-8));
}

TEST_CASE("HS27: min 0.01 (x1 - 1)^2 + (x2 - x1^2)^2 s.t. x1 + x3^2 + 1 = 0, solution (-1, 1, 0)") {
  auto f = cost("hs27_f", [](const auto& v, VecVar<3> x) {
    const auto p = v[x];
    return std::array<Sym, 2>{0.1 * (p(0) - 1.0), p(1) - p(0) * p(0)};
  });
  auto c = cost("hs27_c", [](const auto& v, VecVar<3> x) { return v[x](0) + v[x](2) * v[x](2) + 1.0; },
                CostKind::Equality);
  Problem p;
  p.add(f, VecVar<3>(0));
  p.add(c, VecVar<3>(0));
  SolveSummary s;
  const Eigen::Vector3d x = solve<3>(p, Eigen::Vector3d(2.0, 2.0, 2.0), &s);
  CHECK(x(0) == doctest::Approx(-1.0).epsilon(1e-6));
  CHECK(x(1) == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(std::abs(x(2)) < 1e-3);  // x3 enters only squared: the constraint fixes x3² to 1e-6
  CHECK(2.0 * s.final_cost == doctest::Approx(0.04).epsilon(1e-7));
}

TEST_CASE("HS71: min x1 x4 (x1 + x2 + x3) + x3 with a product inequality, a sphere equality and "
          "bounds as inequalities, solution f = 17.0140173") {
  auto f = cost("hs71_f", [](const auto& v, VecVar<4> x) {
    const auto p = v[x];
    return sqrt(2.0 * (p(0) * p(3) * (p(0) + p(1) + p(2)) + p(2)));
  });
  auto product = cost("hs71_product", [](const auto& v, VecVar<4> x) {
    const auto p = v[x];
    return p(0) * p(1) * p(2) * p(3) - 25.0;
  }, CostKind::InequalityGe);
  auto sphere = cost("hs71_sphere", [](const auto& v, VecVar<4> x) { return v[x].squaredNorm() - 40.0; },
                     CostKind::Equality);
  auto bounds = cost("hs71_bounds", [](const auto& v, VecVar<4> x) {
    const auto p = v[x];
    std::array<Sym, 8> c;
    for (int i = 0; i < 4; ++i) {
      c[2 * i] = 1.0 - p(i);      // 1 <= x_i
      c[2 * i + 1] = p(i) - 5.0;  // x_i <= 5
    }
    return c;
  }, CostKind::InequalityLe);
  Problem p;
  p.add(f, VecVar<4>(0));
  p.add(product, VecVar<4>(0));
  p.add(sphere, VecVar<4>(0));
  p.add(bounds, VecVar<4>(0));
  SolveSummary s;
  const Eigen::Vector4d x = solve<4>(p, Eigen::Vector4d(1.0, 5.0, 5.0, 1.0), &s);
  CHECK(s.final_cost == doctest::Approx(17.0140173).epsilon(1e-7));
  const Eigen::Vector4d expected(1.0, 4.7429994, 3.8211503, 1.3794082);
  CHECK((x - expected).norm() < 1e-5);
}

TEST_CASE("inequalities: an active one binds, an inactive one leaves the unconstrained minimum") {
  auto pull = cost("pull_to_2", [](const auto& v, ScalarVar x) { return v[x] - 2.0; });
  auto at_most = cost("at_most", [](const auto& v, ScalarVar x, const auto& bound) { return v[x] - bound; },
                      CostKind::InequalityLe);
  for (double bound : {1.0, 3.0}) {
    CAPTURE(bound);
    Problem p;
    p.add(pull, ScalarVar(0));
    p.add(at_most, ScalarVar(0), bound);  // the bound is data: both solves share kernels
    Values v;
    v.set(ScalarVar(0), 0.0);
    const SolveResult r = p.analyze(lsjit::testing::analyze_with()).solve(v, tight_constrained());
    CAPTURE(r.summary.report());
    CHECK(converged(r.summary.termination));
    CHECK(r.values.get(ScalarVar(0)) == doctest::Approx(std::min(bound, 2.0)).epsilon(1e-9));
  }
}

TEST_CASE("a pose graph with one pose constrained to a given position") {
  io::PoseGraphSpec spec;
  spec.dimension = 2;
  spec.poses = 60;
  spec.loop_closures = 10;
  spec.seed = 4;
  const io::GeneratedPoseGraph g = io::generate_pose_graph(spec);
  PoseGraphProblem pg = make_pose_graph_problem(g.graph);
  auto pinned = cost("pinned_position", [](const auto& v, SE2Var x, const auto& where) {
    return (v[x].translation() - where).eval();
  }, CostKind::Equality);
  const int64_t id = g.graph.vertex_ids[30];
  const Eigen::Vector2d where = g.truth2[30].translation() + Eigen::Vector2d(0.5, -0.25);
  pg.problem.add(pinned, SE2Var(id), where);
  const SolveResult r = pg.problem.analyze(lsjit::testing::analyze_with()).solve(pg.initial, tight_constrained());
  CAPTURE(r.summary.report());
  CHECK(converged(r.summary.termination));
  CHECK((r.values.get(SE2Var(id)).translation() - where).norm() < 1e-9);
  CHECK(r.summary.constraint_violation <= 1e-10);
  // Unconstrained, the pose would sit elsewhere: the constraint did something.
  const SolveResult free = make_pose_graph_problem(g.graph).problem.analyze(lsjit::testing::analyze_with()).solve(pg.initial, tight_constrained());
  CHECK((free.values.get(SE2Var(id)).translation() - where).norm() > 0.1);
  CHECK(r.summary.final_cost > free.summary.final_cost);
}

TEST_CASE("multipliers and penalties are runtime data: new bounds and solves never recompile") {
  compiler::KernelCache cache(lsjit::testing::memory_only());  // its own, to count compiles
  const AnalyzeOptions a = lsjit::testing::analyze_with(cache);
  auto pull = cost("pull_to_2", [](const auto& v, ScalarVar x) { return v[x] - 2.0; });
  auto at_most = cost("at_most", [](const auto& v, ScalarVar x, const auto& bound) { return v[x] - bound; },
                      CostKind::InequalityLe);
  Problem p;
  p.add(pull, ScalarVar(0));
  p.add(at_most, ScalarVar(0), 1.0);
  Values v;
  v.set(ScalarVar(0), 0.0);
  CHECK(p.analyze(a).solve(v, tight_constrained()).summary.outer_iterations.size() >= 2);
  const uint64_t compiles = cache.stats().compiles;
  CHECK(compiles == 5);  // pull: residual, normal equations; at_most: constraint, both modes
  cache.set_fail_on_recompile(true);
  Problem q;
  q.add(pull, ScalarVar(3));
  q.add(at_most, ScalarVar(3), 0.5);
  v.set(ScalarVar(3), 0.0);
  SolverOptions other = tight_constrained();
  other.constraints.initial_penalty = 100.0;
  const SolveResult r = q.analyze(a).solve(v, other);
  CHECK(r.values.get(ScalarVar(3)) == doctest::Approx(0.5).epsilon(1e-9));
  CHECK(cache.stats().compiles == compiles);
}

TEST_CASE("constraints with nothing free: satisfied converges at once, violated is infeasible") {
  for (const double x : {1.0, 2.0}) {  // on the circle, then off it
    CAPTURE(x);
    Problem p = circle_problem();
    p.set_constant(VecVar<2>(0));
    Values v;
    v.set(VecVar<2>(0), Eigen::Vector2d(x, 0.0));
    const SolveSummary s = p.analyze(lsjit::testing::analyze_with()).solve(v, tight_constrained()).summary;
    CAPTURE(s.message);
    CHECK(s.outer_iterations.size() == 1);  // not 50 outer iterations of nothing
    if (x == 1.0) {
      CHECK(s.termination == Termination::GradientTolerance);
      CHECK(s.message.find("no free variables") != std::string::npos);
      CHECK(s.constraint_violation == 0);
    } else {
      CHECK(s.termination == Termination::Failure);
      CHECK(s.message.find("infeasible") != std::string::npos);
      CHECK(s.constraint_violation == doctest::Approx(3.0));  // |(2, 0)|² - 1
    }
  }
}
