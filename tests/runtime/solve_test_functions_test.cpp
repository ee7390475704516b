// Classic unconstrained least-squares test problems (Moré, Garbow & Hillstrom, "Testing
// unconstrained optimization software", ACM TOMS 1981), solved from their standard starting
// points to their known minima. Residuals as in the paper; cost = ½Σr², so the paper's
// f values are halved.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "../support/rosenbrock.h"
#include "lsjit/lsjit.h"

using namespace lsjit;

namespace {

SolverOptions tight_solve() {
  SolverOptions o;
  o.linear_solver = LinearSolver::DenseCholesky;
  o.function_tolerance = 1e-15;
  o.gradient_tolerance = 1e-15;
  o.parameter_tolerance = 1e-15;
  o.max_iterations = 500;
  return o;
}

template <int N>
Eigen::Matrix<double, N, 1> solve_vec(Problem& problem, VecVar<N> x, Eigen::Matrix<double, N, 1> x0,
                                      SolveSummary* summary = nullptr) {
  Values initial;
  initial.set(x, x0);
  const SolveResult r = problem.analyze().solve(initial, tight_solve());
  CAPTURE(r.summary.report());
  CHECK(r.summary.usable());
  if (summary) *summary = r.summary;
  return r.values.get(x);
}

}  // namespace

TEST_CASE("Rosenbrock: minimum 0 at (1, 1) from (-1.2, 1)") {
  auto rosenbrock = lsjit::testing::rosenbrock_cost("rosenbrock");
  Problem problem;
  problem.add(rosenbrock, VecVar<2>(0));
  SolveSummary s;
  const Eigen::Vector2d x = solve_vec(problem, VecVar<2>(0), Eigen::Vector2d(-1.2, 1.0), &s);
  CHECK(x(0) == doctest::Approx(1.0).epsilon(1e-10));
  CHECK(x(1) == doctest::Approx(1.0).epsilon(1e-10));
  CHECK(s.final_cost < 1e-20);
  CHECK(s.initial_cost == doctest::Approx(0.5 * 24.2));
}

TEST_CASE("Freudenstein-Roth: a known minimum from (0.5, -2)") {
  auto fr = cost("freudenstein_roth", [](const auto& v, VecVar<2> x) {
    const auto p = v[x];
    return std::array<Sym, 2>{-13.0 + p(0) + ((5.0 - p(1)) * p(1) - 2.0) * p(1),
                              -29.0 + p(0) + ((p(1) + 1.0) * p(1) - 14.0) * p(1)};
  });
  Problem problem;
  problem.add(fr, VecVar<2>(0));
  SolveSummary s;
  const Eigen::Vector2d x = solve_vec(problem, VecVar<2>(0), Eigen::Vector2d(0.5, -2.0), &s);
  // The global minimum f = 0 at (5, 4), or the local one f = 48.98425367924... at
  // (11.41277898690, -0.8968052532745), which LM reaches from this start (as MINPACK does).
  if (s.final_cost < 1e-10) {
    CHECK(x(0) == doctest::Approx(5.0).epsilon(1e-9));
    CHECK(x(1) == doctest::Approx(4.0).epsilon(1e-9));
  } else {
    CHECK(s.final_cost == doctest::Approx(24.49212683962).epsilon(1e-11));
    // At a minimum with nonzero residuals the cost is flat to second order: a cost right
    // to 1e-11 places x to about its square root.
    CHECK(x(0) == doctest::Approx(11.41277898690).epsilon(1e-6));
    CHECK(x(1) == doctest::Approx(-0.8968052532745).epsilon(1e-6));
  }
}

TEST_CASE("Powell singular: minimum 0 at the origin from (3, -1, 0, 1)") {
  auto powell = cost("powell_singular", [](const auto& v, VecVar<4> x) {
    const auto p = v[x];
    const Sym a = p(1) - 2.0 * p(2), b = p(0) - p(3);
    return std::array<Sym, 4>{p(0) + 10.0 * p(1), std::sqrt(5.0) * (p(2) - p(3)), a * a,
                              std::sqrt(10.0) * b * b};
  });
  Problem problem;
  problem.add(powell, VecVar<4>(0));
  SolveSummary s;
  const Eigen::Vector4d x = solve_vec(problem, VecVar<4>(0), Eigen::Vector4d(3, -1, 0, 1), &s);
  // The Jacobian is singular at the minimum, so convergence is linear, not quadratic, and
  // the cost is quartic in |x| near it: it ends on the gradient tolerance.
  CHECK(s.final_cost < 1e-20);
  CHECK(x.norm() < 1e-4);
}

TEST_CASE("Bard: f = 8.21487e-3 from (1, 1, 1), data as a batch of 15 instances") {
  auto bard = cost("bard", [](const auto& v, VecVar<3> x, const auto& d) {
    const auto p = v[x];  // d = (y, u, v, w)
    return d(0) - (p(0) + d(1) / (d(2) * p(1) + d(3) * p(2)));
  });
  const double y[15] = {0.14, 0.18, 0.22, 0.25, 0.29, 0.32, 0.35, 0.39,
                        0.37, 0.58, 0.73, 0.96, 1.34, 2.10, 4.39};
  std::vector<Eigen::Vector4d> data;
  for (int i = 1; i <= 15; ++i) data.emplace_back(y[i - 1], i, 16 - i, std::min(i, 16 - i));
  Problem problem;
  problem.add(bard, VecVar<3>(0), data);  // one variable shared by 15 instances
  CHECK(problem.num_instances() == 15);
  SolveSummary s;
  const Eigen::Vector3d x = solve_vec(problem, VecVar<3>(0), Eigen::Vector3d(1, 1, 1), &s);
  CHECK(s.final_cost == doctest::Approx(0.5 * 8.21487730657e-3).epsilon(1e-9));
  CHECK(x(0) == doctest::Approx(0.0824105597).epsilon(1e-7));
  CHECK(x(1) == doctest::Approx(1.13303609).epsilon(1e-7));
  CHECK(x(2) == doctest::Approx(2.34369506).epsilon(1e-7));
}

TEST_CASE("Box 3-D: minimum 0 at (1, 10, 1) from (0, 10, 20)") {
  auto box = cost("box3d", [](const auto& v, VecVar<3> x, const auto& t) {
    const auto p = v[x];
    return exp(-t * p(0)) - exp(-t * p(1)) - p(2) * (exp(-t) - exp(-10.0 * t));
  });
  std::vector<double> t;
  for (int i = 1; i <= 10; ++i) t.push_back(0.1 * i);
  Problem problem;
  problem.add(box, VecVar<3>(0), t);
  SolveSummary s;
  const Eigen::Vector3d x = solve_vec(problem, VecVar<3>(0), Eigen::Vector3d(0, 10, 20), &s);
  CHECK(s.final_cost < 1e-24);
  CHECK(x(0) == doctest::Approx(1.0).epsilon(1e-8));
  CHECK(x(1) == doctest::Approx(10.0).epsilon(1e-8));
  CHECK(x(2) == doctest::Approx(1.0).epsilon(1e-8));
}

TEST_CASE("Brown badly scaled: minimum 0 at (1e6, 2e-6) from (1, 1)") {
  auto brown = cost("brown_badly_scaled", [](const auto& v, ScalarVar a, ScalarVar b) {
    const Sym x = v[a], y = v[b];
    return std::array<Sym, 3>{x - 1e6, y - 2e-6, x * y - 2.0};
  });
  Problem problem;
  problem.add(brown, ScalarVar(0), ScalarVar(1));
  Values initial;
  initial.set(ScalarVar(0), 1.0);
  initial.set(ScalarVar(1), 1.0);
  const SolveResult r = problem.analyze().solve(initial, tight_solve());
  CAPTURE(r.summary.report());
  CHECK(r.summary.final_cost < 1e-20);
  CHECK(r.values.get(ScalarVar(0)) == doctest::Approx(1e6).epsilon(1e-12));
  CHECK(r.values.get(ScalarVar(1)) == doctest::Approx(2e-6).epsilon(1e-9));
}

TEST_CASE("Beale: minimum 0 at (3, 0.5) from (1, 1)") {
  auto beale = cost("beale", [](const auto& v, VecVar<2> x, const auto& d) {
    const auto p = v[x];  // d = (y_i, i)
    return d(0) - p(0) * (1.0 - pow(p(1), d(1)));
  });
  Problem problem;
  problem.add(beale, VecVar<2>(0),
              std::vector<Eigen::Vector2d>{{1.5, 1.0}, {2.25, 2.0}, {2.625, 3.0}});
  SolveSummary s;
  const Eigen::Vector2d x = solve_vec(problem, VecVar<2>(0), Eigen::Vector2d(1, 1), &s);
  CHECK(s.final_cost < 1e-24);
  CHECK(x(0) == doctest::Approx(3.0).epsilon(1e-10));
  CHECK(x(1) == doctest::Approx(0.5).epsilon(1e-10));
}

TEST_CASE("Wood: minimum 0 at (1, 1, 1, 1) from (-3, -1, -3, -1)") {
  auto wood = cost("wood", [](const auto& v, VecVar<4> x) {
    const auto p = v[x];
    return std::array<Sym, 6>{10.0 * (p(1) - p(0) * p(0)), 1.0 - p(0),
                              std::sqrt(90.0) * (p(3) - p(2) * p(2)), 1.0 - p(2),
                              std::sqrt(10.0) * (p(1) + p(3) - 2.0), (p(1) - p(3)) / std::sqrt(10.0)};
  });
  Problem problem;
  problem.add(wood, VecVar<4>(0));
  SolveSummary s;
  const Eigen::Vector4d x = solve_vec(problem, VecVar<4>(0), Eigen::Vector4d(-3, -1, -3, -1), &s);
  CHECK(s.final_cost < 1e-24);
  for (int i = 0; i < 4; ++i) CHECK(x(i) == doctest::Approx(1.0).epsilon(1e-10));
}

TEST_CASE("Helical valley: minimum 0 at (1, 0, 0) from (-1, 0, 0)") {
  auto helical = cost("helical_valley", [](const auto& v, VecVar<3> x) {
    const auto p = v[x];
    // θ = atan(x2/x1)/2π, plus ½ when x1 < 0 (the paper's branch, not atan2's).
    const Sym theta = atan(p(1) / p(0)) / (2.0 * std::numbers::pi) + select(p(0) < 0.0, Sym(0.5), Sym(0.0));
    return std::array<Sym, 3>{10.0 * (p(2) - 10.0 * theta),
                              10.0 * (sqrt(p(0) * p(0) + p(1) * p(1)) - 1.0), p(2)};
  });
  Problem problem;
  problem.add(helical, VecVar<3>(0));
  SolveSummary s;
  const Eigen::Vector3d x = solve_vec(problem, VecVar<3>(0), Eigen::Vector3d(-1, 0, 0), &s);
  CHECK(s.final_cost < 1e-24);
  CHECK(x(0) == doctest::Approx(1.0).epsilon(1e-10));
  CHECK(std::abs(x(1)) < 1e-10);
  CHECK(std::abs(x(2)) < 1e-10);
}
