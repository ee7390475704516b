// Bundle adjustment end to end: BAL files and synthetic problems with a known truth.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "../support/memory_cache.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/runtime/bal_problem.h"
#include "lsjit/runtime/io/synthetic.h"

using namespace lsjit;

namespace {

const std::filesystem::path kBal = std::filesystem::path(LSJIT_SHARED_DATA_DIR) / "bal";

// A generated problem of 6 cameras and 150 points, each seen 3 times.
BalLeastSquares small_generated_bal(uint64_t seed) {
  io::BalSpec spec;
  spec.cameras = 6;
  spec.points = 150;
  spec.observations_per_point = 3;
  spec.seed = seed;
  return make_bal_problem(io::generate_bal(spec).initial);
}

}  // namespace

TEST_CASE("dubrovnik-3-7 converges to zero cost") {
  if (!std::filesystem::exists(kBal / "dubrovnik-3-7-pre.txt")) {
    MESSAGE("skipped: " << (kBal / "dubrovnik-3-7-pre.txt").string() << " is absent");
    return;
  }
  // 19 observations (38 residuals) of 3 cameras and 7 points (48 parameters): a manifold of
  // exact solutions, which LM reaches once it has crossed the initial valley.
  BalLeastSquares p = make_bal_problem(io::read_bal(kBal / "dubrovnik-3-7-pre.txt"));
  SolverOptions o;
  o.max_iterations = 300;
  const SolveResult r = p.problem.analyze(lsjit::testing::analyze_with()).solve(p.initial, o);
  CAPTURE(r.summary.report());
  CHECK(converged(r.summary.termination));
  CHECK(r.summary.initial_cost == doctest::Approx(2764.21998).epsilon(1e-8));
  CHECK(r.summary.final_cost < 1e-12);
}

TEST_CASE("Ladybug-49: Ceres' schedule reaches Ceres 2.1's cost in its 20 iterations, the default in 17") {
  if (!std::filesystem::exists(kBal / "problem-49-7776-pre.txt")) {
    MESSAGE("skipped: " << (kBal / "problem-49-7776-pre.txt").string() << " is absent");
    return;
  }
  BalLeastSquares p = make_bal_problem(io::read_bal(kBal / "problem-49-7776-pre.txt"));
  const AnalyzedProblem analyzed = p.problem.analyze(lsjit::testing::analyze_with());
  constexpr double kCeresCostAfter20 = 13345.022;  // Ceres 2.1 DENSE_SCHUR, its defaults
  for (LinearSolver solver : {LinearSolver::DenseSchur, LinearSolver::SparseSchur}) {
    CAPTURE(linear_solver_name(solver));
    SolverOptions o;
    o.max_iterations = 20;
    o.linear_solver = solver;
    o.very_successful_radius_growth = 1;  // Nielsen's rule alone, as Ceres
    const SolveResult ceres_schedule = analyzed.solve(p.initial, o);
    CAPTURE(ceres_schedule.summary.report());
    CHECK(ceres_schedule.summary.initial_cost == doctest::Approx(850912.46).epsilon(1e-8));
    CHECK(ceres_schedule.summary.iterations == 20);
    CHECK(ceres_schedule.summary.final_cost == doctest::Approx(kCeresCostAfter20).epsilon(1e-6));

    o.very_successful_radius_growth = SolverOptions{}.very_successful_radius_growth;
    const SolveResult r = analyzed.solve(p.initial, o);
    CAPTURE(r.summary.report());
    int reached = -1;
    for (const IterationSummary& it : r.summary.per_iteration)
      if (reached < 0 && it.cost <= kCeresCostAfter20) reached = it.iteration;
    CHECK(reached > 0);
    CHECK(reached <= 17);
    CHECK(r.summary.final_cost < ceres_schedule.summary.final_cost);
    // docs/solving.md, "Bundle adjustment", quotes the default's cost after 20 iterations.
    CHECK(r.summary.final_cost == doctest::Approx(13344.470).epsilon(1e-7));
  }
}

TEST_CASE("the radius after an accepted step: Nielsen's factor, at least very_successful_radius_growth when rho > 3/4") {
  BalLeastSquares p = small_generated_bal(4);
  const AnalyzedProblem analyzed = p.problem.analyze(lsjit::testing::analyze_with());
  for (double growth : {1.0, 2.0, 5.0}) {
    CAPTURE(growth);
    SolverOptions o;
    o.max_iterations = 10;
    o.function_tolerance = o.gradient_tolerance = o.parameter_tolerance = 0;
    o.linear_solver = LinearSolver::DenseSchur;
    o.very_successful_radius_growth = growth;
    const SolveResult r = analyzed.solve(p.initial, o);
    CAPTURE(r.summary.report());
    int very_successful = 0;
    for (size_t k = 1; k < r.summary.per_iteration.size(); ++k) {
      const IterationSummary& it = r.summary.per_iteration[k];
      if (!it.step_accepted) continue;
      CAPTURE(k);
      const double before = r.summary.per_iteration[k - 1].trust_region_radius;
      const double x = 2 * it.relative_decrease - 1;
      double expected = before / std::max(1.0 / 3.0, 1 - x * x * x);
      if (it.relative_decrease > 0.75) {
        expected = std::max(expected, before * growth);
        ++very_successful;
      }
      CHECK(it.trust_region_radius == doctest::Approx(std::min(expected, o.max_trust_region_radius)).epsilon(1e-12));
    }
    CHECK(very_successful > 0);
  }
}

TEST_CASE("every Schur path takes the steps of the full system, to the last digits") {
  BalLeastSquares p = small_generated_bal(9);
  const AnalyzedProblem analyzed = p.problem.analyze(lsjit::testing::analyze_with());
  SolverOptions o;
  o.max_iterations = 8;
  o.linear_solver = LinearSolver::DenseCholesky;
  o.linear_relative_tolerance = 1e-14;
  const SolveResult full = analyzed.solve(p.initial, o);
  for (LinearSolver solver : {LinearSolver::DenseSchur, LinearSolver::SparseSchur, LinearSolver::IterativeSchur}) {
    CAPTURE(linear_solver_name(solver));
    o.linear_solver = solver;
    const SolveResult r = analyzed.solve(p.initial, o);
    CHECK(r.summary.iterations == full.summary.iterations);
    REQUIRE(r.summary.per_iteration.size() == full.summary.per_iteration.size());
    for (size_t k = 0; k < r.summary.per_iteration.size(); ++k) {
      CAPTURE(k);
      CHECK(r.summary.per_iteration[k].step_norm ==
            doctest::Approx(full.summary.per_iteration[k].step_norm).epsilon(1e-9));
      CHECK(r.summary.per_iteration[k].cost == doctest::Approx(full.summary.per_iteration[k].cost).epsilon(1e-9));
    }
  }
  // A pose graph has nothing to eliminate: the Schur solvers say so.
  Problem chain;
  auto between = cost("chain_between", [](const auto& v, VecVar<2> a, VecVar<2> b) { return (v[b] - v[a]).eval(); });
  chain.add(between, VecVar<2>(0), VecVar<2>(1));
  Values v;
  v.set(VecVar<2>(0), Eigen::Vector2d(0, 0));
  v.set(VecVar<2>(1), Eigen::Vector2d(1, 0));
  o.linear_solver = LinearSolver::DenseSchur;
  const SolveResult r = chain.analyze(lsjit::testing::analyze_with()).solve(v, o);
  CHECK(r.summary.termination == Termination::Failure);
  CHECK(r.summary.message.find("needs a variable type to eliminate") != std::string::npos);
}

TEST_CASE("a synthetic bundle adjustment is recovered up to the similarity BA cannot observe") {
  io::BalSpec spec;
  spec.cameras = 8;
  spec.points = 200;
  spec.observations_per_point = 4;
  spec.pixel_sigma = 0;
  spec.seed = 5;
  const io::GeneratedBal g = io::generate_bal(spec);
  BalLeastSquares p = make_bal_problem(g.initial);
  SolverOptions o;
  o.max_iterations = 200;
  o.function_tolerance = 1e-14;
  o.parameter_tolerance = 1e-14;
  const SolveResult r = p.problem.analyze(lsjit::testing::analyze_with()).solve(p.initial, o);
  CAPTURE(r.summary.report());
  CHECK(r.summary.final_cost < 1e-14 * r.summary.initial_cost);
  // Without pixel noise the solution reprojects exactly, so its structure is the truth up
  // to a similarity: every distance ratio is one global scale.
  io::BalProblem solved = g.initial;
  update_bal(solved, r.values);
  const double scale = (solved.points[1] - solved.points[0]).norm() /
                       (g.truth.points[1] - g.truth.points[0]).norm();
  double worst = 0;
  for (size_t k = 2; k < solved.points.size(); ++k) {
    const double ratio = (solved.points[k] - solved.points[0]).norm() /
                         (g.truth.points[k] - g.truth.points[0]).norm();
    worst = std::max(worst, std::abs(ratio / scale - 1.0));
  }
  CHECK(worst < 1e-6);
}
