// Bundle adjustment end to end: BAL files and synthetic problems with a known truth.
#include <doctest/doctest.h>

#include <filesystem>

#include "lsjit/compiler/kernel_cache.h"
#include "lsjit/runtime/bal_problem.h"
#include "lsjit/runtime/io/synthetic.h"

using namespace lsjit;

namespace {

AnalyzeOptions memory_cache() {
  static compiler::KernelCache* cache = [] {
    compiler::KernelCache::Options o;
    o.use_disk = false;
    o.quiet = true;
    return new compiler::KernelCache(o);
  }();
  AnalyzeOptions a;
  a.cache = cache;
  return a;
}

const std::filesystem::path kBal = std::filesystem::path(LSJIT_SHARED_DATA_DIR) / "bal";

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
  const SolveResult r = p.problem.analyze(memory_cache()).solve(p.initial, o);
  CAPTURE(r.summary.report());
  CHECK(converged(r.summary.termination));
  CHECK(r.summary.initial_cost == doctest::Approx(2764.21998).epsilon(1e-8));
  CHECK(r.summary.final_cost < 1e-12);
}

TEST_CASE("Ladybug-49: 20 iterations reach Ceres 2.1's cost after 20 iterations") {
  if (!std::filesystem::exists(kBal / "problem-49-7776-pre.txt")) {
    MESSAGE("skipped: " << (kBal / "problem-49-7776-pre.txt").string() << " is absent");
    return;
  }
  BalLeastSquares p = make_bal_problem(io::read_bal(kBal / "problem-49-7776-pre.txt"));
  SolverOptions o;
  o.max_iterations = 20;
  const SolveResult r = p.problem.analyze(memory_cache()).solve(p.initial, o);
  CAPTURE(r.summary.report());
  CHECK(r.summary.initial_cost == doctest::Approx(850912.46).epsilon(1e-8));
  CHECK(r.summary.iterations == 20);
  CHECK(r.summary.final_cost == doctest::Approx(13345.022).epsilon(1e-6));
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
  const SolveResult r = p.problem.analyze(memory_cache()).solve(p.initial, o);
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
