// The README's example, as written there: a user's own cost, traced, differentiated and
// printed through <lsjit/lsjit.h>.
#include <doctest/doctest.h>

#include <lsjit/lsjit.h>

#include <random>
#include <sstream>

#include "../support/jacobian_check.h"
#include "../support/random_inputs.h"

TEST_CASE("the README example traces, differentiates and prints") {
  auto between = lsjit::cost("se2_between",
      [](const auto& v, lsjit::SE2Var a, lsjit::SE2Var b, const auto& z, const auto& U) {
        return (U * (z.inverse() * v[a].inverse() * v[b]).log()).eval();
      });
  lsjit::ir::Trace traced = lsjit::trace(between, lsjit::SE2Var(0), lsjit::SE2Var(1),
                                         lsjit::SE2d(), Eigen::Matrix3d());
  lsjit::ir::Trace jacobian = lsjit::ir::differentiate(traced);  // residual + J, δ = 0
  const std::string text = lsjit::ir::print(jacobian);
  CHECK(text.find("stage=jacobian residuals=3") != std::string::npos);
  CHECK(text.find("J[x1](2,2) = %") != std::string::npos);

  std::mt19937_64 rng(5);
  for (int k = 0; k < 5; ++k)
    lsjit::testing::check_jacobian(traced, lsjit::testing::random_inputs(traced.signature, rng));
}

TEST_CASE("the README's solve example runs as written, single and batched adds alike") {
  auto between = lsjit::cost("se2_between",
      [](const auto& v, lsjit::SE2Var a, lsjit::SE2Var b, const auto& z, const auto& U) {
        return (U * (z.inverse() * v[a].inverse() * v[b]).log()).eval();
      });
  // A square of four poses, measured exactly; the initial values are perturbed.
  struct Edge {
    int64_t i, j;
    lsjit::SE2d z;
    Eigen::Matrix3d U;
  };
  std::vector<lsjit::SE2d> truth;
  for (int k = 0; k < 4; ++k) truth.push_back(lsjit::SE2d::from_xy_theta(k % 2, k / 2, 0.3 * k));
  std::vector<Edge> edges;
  for (auto [i, j] : {std::pair{0, 1}, {1, 3}, {3, 2}})
    edges.push_back({i, j, truth[i].inverse() * truth[j], Eigen::Matrix3d::Identity()});
  std::vector<int64_t> is{2}, js{0};
  std::vector<lsjit::SE2d> zs{truth[2].inverse() * truth[0]};
  std::vector<Eigen::Matrix3d> Us{Eigen::Matrix3d::Identity()};

  lsjit::Problem problem;
  for (const auto& e : edges)
    problem.add(between, lsjit::SE2Var(e.i), lsjit::SE2Var(e.j), e.z, e.U);
  problem.add(between, lsjit::SE2Var::batch(is), lsjit::SE2Var::batch(js), zs, Us);
  problem.set_constant(lsjit::SE2Var(0));
  lsjit::Values initial;
  for (int k = 0; k < 4; ++k)
    initial.set(lsjit::SE2Var(k), truth[k] * lsjit::SE2d::from_xy_theta(0.1, -0.1, 0.05 * k));
  initial.set(lsjit::SE2Var(0), truth[0]);
  lsjit::AnalyzedProblem analyzed = problem.analyze();
  std::ostringstream log;
  lsjit::SolverOptions options;
  options.verbose = true;
  options.log = &log;  // the README prints to std::cout
  lsjit::SolveResult r = analyzed.solve(initial, options);  // linear solver: Auto
  CAPTURE(r.summary.report());
  CHECK(analyzed.groups().size() == 1);  // single and batched adds share one kernel group
  CHECK(r.summary.final_cost < 1e-20);
  const lsjit::SE2d x3 = r.values.get(lsjit::SE2Var(3));
  CHECK((x3.params() - truth[3].params()).norm() < 1e-9);
}
