// Batched, swept and sequential solves: each equals the same solves done one by one, and
// each structure compiles its kernels exactly once.
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/lsjit.h"

using namespace lsjit;

namespace {

// Ceres' curve-fitting example: y = exp(m x + c), data per instance.
auto exp_fit = cost("batch_exp_fit", [](const auto& v, ScalarVar m, ScalarVar c, const auto& xy) {
  return xy(1) - exp(v[m] * xy(0) + v[c]);
});

Problem curve_problem(double m, double c, uint64_t seed, int samples = 40) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.05);
  std::vector<Eigen::Vector2d> xy;
  for (int i = 0; i < samples; ++i) {
    const double x = 5.0 * i / samples;
    xy.emplace_back(x, std::exp(m * x + c) + noise(rng));
  }
  Problem p;
  p.add(exp_fit, ScalarVar(0), ScalarVar(1), xy);
  return p;
}

Values start(double m0, double c0) {
  Values v;
  v.set(ScalarVar(0), m0);
  v.set(ScalarVar(1), c0);
  return v;
}

bool same_bits(const SolveResult& a, const SolveResult& b) {
  const double am = a.values.get(ScalarVar(0)), bm = b.values.get(ScalarVar(0));
  const double ac = a.values.get(ScalarVar(1)), bc = b.values.get(ScalarVar(1));
  return std::memcmp(&am, &bm, sizeof am) == 0 && std::memcmp(&ac, &bc, sizeof ac) == 0 &&
         a.summary.iterations == b.summary.iterations && a.summary.final_cost == b.summary.final_cost;
}

struct Counted {
  compiler::KernelCache cache;
  AnalyzeOptions analyze;
  static compiler::KernelCache::Options options() {
    compiler::KernelCache::Options o;
    o.use_disk = false;
    o.quiet = true;
    return o;
  }
  Counted() : cache(options()) { analyze.cache = &cache; }
};

}  // namespace

TEST_CASE("solve_batch: K problems with their own data and starts equal K separate solves, one compile") {
  Counted counted;
  std::vector<AnalyzedProblem> problems;
  for (int k = 0; k < 6; ++k) {
    problems.push_back(curve_problem(0.3 + 0.02 * k, 0.1 - 0.03 * k, 100 + k, 30 + 5 * k).analyze(counted.analyze));
    if (k == 0) CHECK(counted.cache.stats().compiles == 2);  // residual and normal equations
    counted.cache.set_fail_on_recompile(true);
  }
  CHECK(counted.cache.stats().compiles == 2);
  std::vector<BatchItem> items;
  for (int k = 0; k < 6; ++k) items.push_back({&problems[k], start(0.1 * k, 0.0), {}});
  const std::vector<SolveResult> batch = solve_batch(items, 3);
  REQUIRE(batch.size() == 6);
  for (int k = 0; k < 6; ++k) {
    CAPTURE(k);
    const SolveResult alone = problems[k].solve(items[k].initial, items[k].options);
    CHECK(same_bits(batch[k], alone));
    CHECK(converged(batch[k].summary.termination));
    CHECK(batch[k].values.get(ScalarVar(0)) == doctest::Approx(0.3 + 0.02 * k).epsilon(0.05));
  }
  // One problem, many starts.
  const std::vector<SolveResult> starts = solve_batch(problems[0], {start(0, 0), start(0.5, -0.5), start(0.2, 0.3)}, {}, 2);
  CHECK(same_bits(starts[1], problems[0].solve(start(0.5, -0.5))));
  CHECK(counted.cache.stats().compiles == 2);
}

TEST_CASE("sweep: solver options per solve, identical to one-by-one, no compile") {
  Counted counted;
  const AnalyzedProblem p = curve_problem(0.3, 0.1, 7).analyze(counted.analyze);
  const uint64_t compiles = counted.cache.stats().compiles;
  std::vector<SolverOptions> options;
  for (double radius : {1e-3, 1.0, 1e4, 1e8}) {
    SolverOptions o;
    o.initial_trust_region_radius = radius;
    o.function_tolerance = radius < 1 ? 1e-10 : 1e-6;
    o.linear_solver = radius < 1e4 ? LinearSolver::DenseCholesky : LinearSolver::SparseCholesky;
    options.push_back(o);
  }
  const std::vector<SolveResult> swept = sweep(p, start(0, 0), options, 2);
  for (size_t k = 0; k < options.size(); ++k) CHECK(same_bits(swept[k], p.solve(start(0, 0), options[k])));
  // The damping schedule and the linear solver change the path, not the minimum.
  CHECK(swept[0].values.get(ScalarVar(0)) == doctest::Approx(swept[3].values.get(ScalarVar(0))).epsilon(1e-5));
  CHECK(counted.cache.stats().compiles == compiles);
}

TEST_CASE("solve_sequence: each solve warm-starts from the previous one, like a loop") {
  // A target moving along a line, observed with noise at each step: track it.
  auto observe = cost("track_observe", [](const auto& v, VecVar<2> x, const auto& z) { return (v[x] - z).eval(); });
  Counted counted;
  std::vector<AnalyzedProblem> steps;
  for (int k = 0; k < 5; ++k) {
    Problem p;
    p.add(observe, VecVar<2>(0), Eigen::Vector2d(1.0 * k, 0.5 * k));
    p.add(exp_fit, ScalarVar(0), ScalarVar(1), Eigen::Vector2d(0.1 * k, 1.0 + 0.1 * k));
    steps.push_back(p.analyze(counted.analyze));
  }
  CHECK(counted.cache.stats().compiles == 4);  // two costs, two kernels each
  std::vector<const AnalyzedProblem*> ptrs;
  for (const auto& s : steps) ptrs.push_back(&s);
  Values initial = start(0.0, 0.0);
  initial.set(VecVar<2>(0), Eigen::Vector2d(-1.0, -1.0));
  const std::vector<SolveResult> seq = solve_sequence(ptrs, initial);
  REQUIRE(seq.size() == 5);
  Values manual = initial;
  for (size_t k = 0; k < steps.size(); ++k) {
    const SolveResult r = steps[k].solve(manual);
    CHECK(same_bits(seq[k], r));
    manual = r.values;
  }
  CHECK((seq[4].values.get(VecVar<2>(0)) - Eigen::Vector2d(4.0, 2.0)).norm() < 1e-7);
  CHECK(counted.cache.stats().compiles == 4);
}
