// LinearSolver::Auto, the default: the solver chosen from the analyzed structure, and the
// summary says which one ran and why. Before it, the default was sparse Cholesky of the full
// system, 4x slower than Ceres on BAL problems where dense_schur is 5x faster.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/lsjit.h"
#include "lsjit/runtime/bal_problem.h"
#include "lsjit/runtime/io/synthetic.h"
#include "lsjit/runtime/pose_graph_problem.h"

// A named namespace keeps the using-directive out of the files a unity build puts after
// this one (tests/CMakeLists.txt); LinearSolver is qualified because lsjit::linear has one too.
namespace linear_solver_auto_test {
using namespace lsjit;

namespace {

compiler::KernelCache& cache() {
  static compiler::KernelCache* c = [] {
    compiler::KernelCache::Options o;
    o.use_disk = false;
    o.quiet = true;
    return new compiler::KernelCache(o);
  }();
  return *c;
}

SolveSummary solve_auto(const Problem& problem, const Values& initial, int max_iterations = 50) {
  AnalyzeOptions a;
  a.cache = &cache();
  SolverOptions o;  // linear_solver defaults to Auto
  o.max_iterations = max_iterations;
  return problem.analyze(a).solve(initial, o).summary;
}

auto scalar_offset = cost("auto_offset", [](const auto& v, ScalarVar x, const auto& t) { return v[x] - t; });
auto scalar_pair = cost("auto_pair", [](const auto& v, ScalarVar x, ScalarVar y, const auto& d) {
  return v[x] - v[y] - d;
});

}  // namespace

TEST_CASE("linear solver auto: the default option") {
  CHECK(SolverOptions{}.linear_solver == lsjit::LinearSolver::Auto);
  CHECK(lsjit::linear_solver_from_name("auto") == lsjit::LinearSolver::Auto);
}

TEST_CASE("linear solver auto: bundle adjustment eliminates the points, dense or sparse by the cameras") {
  for (const auto& [cameras, expected] : {std::pair{8, "dense_schur"}, std::pair{240, "sparse_schur"}}) {
    io::BalSpec spec;
    spec.cameras = cameras;
    spec.points = cameras == 8 ? 60 : 400;
    spec.observations_per_point = 3;
    const io::GeneratedBal generated = io::generate_bal(spec);
    const BalLeastSquares p = make_bal_problem(generated.initial);
    const SolveSummary s = solve_auto(p.problem, p.initial, cameras == 8 ? 50 : 2);
    CAPTURE(s.linear_solver_reason);
    CHECK(s.usable());
    CHECK(s.linear_solver == expected);
    const size_t reduced = s.tangent_dim - 3 * static_cast<size_t>(spec.points);  // the free cameras
    CHECK(reduced > 9 * static_cast<size_t>(cameras) - 20);
    CHECK(s.linear_solver_reason.find("the reduced system has " + std::to_string(reduced) + " scalars") !=
          std::string::npos);
    CHECK(s.report().find(std::string(expected) + " (auto: ") != std::string::npos);
    CHECK(s.json().find("\"linear_solver_reason\": \"" + std::to_string(spec.points)) != std::string::npos);
  }
}

TEST_CASE("linear solver auto: a pose graph gets sparse Cholesky, a small problem dense") {
  io::PoseGraphSpec spec;
  spec.dimension = 2;
  spec.poses = 50;
  spec.loop_closures = 5;
  const io::GeneratedPoseGraph generated = io::generate_pose_graph(spec);
  const PoseGraphProblem p = make_pose_graph_problem(generated.graph);
  const SolveSummary s = solve_auto(p.problem, p.initial);
  CAPTURE(s.linear_solver_reason);
  CHECK(s.usable());
  CHECK(s.linear_solver == "sparse_cholesky");  // 49 free SE2 poses: 147 scalars
  CHECK(s.linear_solver_reason.find("147 scalars") != std::string::npos);

  // A chain of 20 scalars: no type is eliminable (a cost has two), and it is small.
  Problem chain;
  Values initial;
  for (int i = 0; i < 20; ++i) {
    chain.add(scalar_offset, ScalarVar(i), double(i));
    if (i > 0) chain.add(scalar_pair, ScalarVar(i), ScalarVar(i - 1), 1.0);
    initial.set(ScalarVar(i), 0.0);
  }
  const SolveSummary small = solve_auto(chain, initial);
  CHECK(small.linear_solver == "dense_cholesky");

  // Only one eliminable type and nothing else: no reduced system, so no Schur solver.
  Problem alone;
  alone.add(scalar_offset, ScalarVar(0), 4.0);
  Values one;
  one.set(ScalarVar(0), 0.0);
  CHECK(solve_auto(alone, one).linear_solver == "dense_cholesky");
}

TEST_CASE("linear solver auto: a solver named in the options runs as named, with no reason") {
  Problem p;
  p.add(scalar_offset, ScalarVar(0), 4.0);
  Values v;
  v.set(ScalarVar(0), 0.0);
  AnalyzeOptions a;
  a.cache = &cache();
  SolverOptions o;
  o.linear_solver = lsjit::LinearSolver::SparseCholesky;
  const SolveSummary s = p.analyze(a).solve(v, o).summary;
  CHECK(s.linear_solver == "sparse_cholesky");
  CHECK(s.linear_solver_reason.empty());
}

TEST_CASE("linear solver auto: a factor over the budget gets subgraph-preconditioned CG, same optimum") {
  io::PoseGraphSpec spec;
  spec.dimension = 3;
  spec.poses = 300;
  spec.loop_closures = 60;
  const io::GeneratedPoseGraph generated = io::generate_pose_graph(spec);
  const PoseGraphProblem p = make_pose_graph_problem(generated.graph);
  AnalyzeOptions a;
  a.cache = &cache();
  const AnalyzedProblem analyzed = p.problem.analyze(a);

  const SolveSummary direct = analyzed.solve(p.initial, {}).summary;
  CAPTURE(direct.linear_solver_reason);
  REQUIRE(direct.usable());
  CHECK(direct.linear_solver == "sparse_cholesky");
  CHECK(direct.linear_solver_reason.find("GFlop per factorization, within max_direct_factor_bytes") !=
        std::string::npos);

  SolverOptions flop_budget;
  flop_budget.max_direct_factorization_flops = 1e5;  // far below this factor's
  const SolveSummary by_flops = analyzed.solve(p.initial, flop_budget).summary;
  CAPTURE(by_flops.linear_solver_reason);
  REQUIRE(by_flops.usable());
  CHECK(by_flops.linear_solver == "subgraph_cg");
  CHECK(by_flops.linear_solver_reason.find("over max_direct_factorization_flops = 0.0001 GFlop") !=
        std::string::npos);
  CHECK(by_flops.final_cost == doctest::Approx(direct.final_cost).epsilon(1e-6));

  SolverOptions byte_budget;
  byte_budget.max_direct_factor_bytes = 1000;
  const SolveSummary by_bytes = analyzed.solve(p.initial, byte_budget).summary;
  CAPTURE(by_bytes.linear_solver_reason);
  CHECK(by_bytes.linear_solver == "subgraph_cg");
  CHECK(by_bytes.linear_solver_reason.find("over max_direct_factor_bytes = 0.001 MB") != std::string::npos);
  CHECK(by_bytes.final_cost == doctest::Approx(direct.final_cost).epsilon(1e-6));
}

TEST_CASE("linear solver auto: the budgets are validated") {
  Problem p;
  p.add(scalar_offset, ScalarVar(0), 4.0);
  Values v;
  v.set(ScalarVar(0), 0.0);
  AnalyzeOptions a;
  a.cache = &cache();
  SolverOptions o;
  o.max_direct_factor_bytes = -1;
  SolveSummary s = p.analyze(a).solve(v, o).summary;
  CHECK(s.termination == Termination::Failure);
  CHECK(s.message.find("max_direct_factor_bytes is -1") != std::string::npos);
  o = SolverOptions{};
  o.max_direct_factorization_flops = std::nan("");
  s = p.analyze(a).solve(v, o).summary;
  CHECK(s.termination == Termination::Failure);
  CHECK(s.message.find("max_direct_factorization_flops") != std::string::npos);
}

}  // namespace linear_solver_auto_test
