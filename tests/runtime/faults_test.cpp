// Faults on the user's path, Problem::add to solve(): bad numbers (NaN at the start, in
// the middle of a solve, in data), bad problems (missing values, extreme IDs, mismatched
// batches, no costs, only constant variables, no residual) and a bad disk cache (corrupt
// entries, a directory that disappears). Each must end in an lsjit::Error, a Failure that
// says why, or a documented recovery with the right answer: never a crash, never a wrong
// answer reported as a solution.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "lsjit/compiler/cache/disk_cache.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/lsjit.h"

using namespace lsjit;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

compiler::KernelCache& memory_cache() {
  static compiler::KernelCache* cache = [] {
    compiler::KernelCache::Options o;
    o.use_disk = false;
    o.quiet = true;
    return new compiler::KernelCache(o);
  }();
  return *cache;
}

AnalyzeOptions with_cache(compiler::KernelCache& cache) {
  AnalyzeOptions o;
  o.cache = &cache;
  return o;
}

SolverOptions tight_faults(LinearSolver solver = LinearSolver::SparseCholesky) {
  SolverOptions o;
  o.linear_solver = solver;
  o.function_tolerance = 1e-14;
  o.gradient_tolerance = 1e-14;
  o.parameter_tolerance = 1e-14;
  o.max_iterations = 200;
  return o;
}

const LinearSolver kAllSolvers[] = {LinearSolver::DenseCholesky, LinearSolver::SparseCholesky,
                                    LinearSolver::EigenSparseCholesky, LinearSolver::ConjugateGradient};

bool bitwise_equal(const Values& a, const Values& b) {
  bool same = a.size() == b.size();
  a.for_each([&](const VariableType& t, int64_t id, const double* p) {
    const double* q = b.params(t.name, id);
    same = same && q && std::memcmp(p, q, sizeof(double) * t.ambient) == 0;
  });
  return same;
}

// A line through samples: r = y - (a x + b), one instance per sample.
auto line = cost("line", [](const auto& v, ScalarVar a, ScalarVar b, const auto& x, const auto& y) {
  return y - (v[a] * x + v[b]);
});

// Scalar chain with a square root: r = 10 (sqrt(x_i) - sqrt(t_i)) and springs
// r = x_i - x_{i+1} - (t_i - t_{i+1}). sqrt is NaN below zero, so a long step towards
// small targets lands where the cost is not defined.
auto root = cost("root", [](const auto& v, ScalarVar x, const auto& target_sqrt) {
  return 10.0 * (sqrt(v[x]) - target_sqrt);
});
auto link = cost("link", [](const auto& v, ScalarVar a, ScalarVar b, const auto& d) {
  return v[a] - v[b] - d;
});

struct Chain {
  Problem problem;
  Values initial;
  std::vector<double> truth;
};

// n variables with IDs ids[i]; truth in [0.5, 2]; starting at the truth except in
// [n/4, n/2), which starts far above it (where a Gauss–Newton step overshoots below 0).
Chain sqrt_chain(const std::vector<int64_t>& ids) {
  const size_t n = ids.size();
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  Chain c;
  for (size_t i = 0; i < n; ++i) c.truth.push_back(u(rng));
  std::vector<double> sqrt_truth, diffs;
  for (size_t i = 0; i < n; ++i) sqrt_truth.push_back(std::sqrt(c.truth[i]));
  c.problem.add(root, ScalarVar::batch(ids), sqrt_truth);
  std::vector<int64_t> from(ids.begin(), ids.end() - 1), to(ids.begin() + 1, ids.end());
  for (size_t i = 0; i + 1 < n; ++i) diffs.push_back(c.truth[i] - c.truth[i + 1]);
  c.problem.add(link, ScalarVar::batch(from), ScalarVar::batch(to), diffs);
  for (size_t i = 0; i < n; ++i)
    c.initial.set(ScalarVar(ids[i]), i >= n / 4 && i < n / 2 ? 40.0 + c.truth[i] : 1.1 * c.truth[i]);
  return c;
}

std::vector<int64_t> iota_ids(size_t n, int64_t first = 0) {
  std::vector<int64_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = first + static_cast<int64_t>(i);
  return ids;
}

}  // namespace

// ------------------------------------------------------------------ numbers

TEST_CASE("faults: a NaN or inf at the initial values is a Failure naming the cost and instance") {
  // 1000 samples: more than one evaluation chunk (256), evaluated on 4 threads, so the
  // instance named is the first bad one overall, not the first of some chunk.
  std::vector<double> xs, ys;
  for (int i = 0; i < 1000; ++i) {
    xs.push_back(0.01 * i);
    ys.push_back(2.0 * xs.back() + 1.0);
  }
  struct Case {
    const char* what;
    size_t instance;
    double x, y;
  };
  for (const Case& c : {Case{"NaN data", 613, kNaN, 1.0}, Case{"inf data", 700, 1.0, HUGE_VAL},
                        Case{"NaN data in the last instance", 999, 1.0, kNaN}}) {
    CAPTURE(c.what);
    std::vector<double> x = xs, y = ys;
    x[c.instance] = c.x;
    y[c.instance] = c.y;
    Problem p;
    p.add(line, ScalarVar(0), ScalarVar(1), x, y);
    Values v;
    v.set(ScalarVar(0), 1.0);
    v.set(ScalarVar(1), 0.0);
    SolverOptions o;
    o.num_threads = 4;
    const SolveResult r = p.analyze(with_cache(memory_cache())).solve(v, o);
    CHECK(r.summary.termination == Termination::Failure);
    CHECK(!converged(r.summary.termination));
    CHECK(r.summary.message.find("the cost at the initial values is not finite: cost 'line' instance " +
                                 std::to_string(c.instance) + " (residual 0 = ") == 0);
    CHECK(bitwise_equal(r.values, v));  // a Failure returns the initial values
  }

  // A NaN variable value: the same, through the variable instead of the data.
  Problem p;
  p.add(line, ScalarVar(0), ScalarVar(1), xs, ys);
  Values v;
  v.set(ScalarVar(0), kNaN);
  v.set(ScalarVar(1), 0.0);
  const SolveResult r = p.analyze(with_cache(memory_cache())).solve(v);
  CHECK(r.summary.termination == Termination::Failure);
  CHECK(r.summary.message.find("cost 'line' instance 0 (residual 0 = ") != std::string::npos);
}

TEST_CASE("faults: a NaN in the middle of a solve is a rejected step - every linear solver") {
  Chain c = sqrt_chain(iota_ids(200));
  const AnalyzedProblem a = c.problem.analyze(with_cache(memory_cache()));

  // Precondition, checked without the solver: the Gauss–Newton step from the initial
  // values leaves the domain of sqrt somewhere (else this test would test nothing).
  const AnalyzedProblem::Evaluation e = a.evaluate(c.initial, true);
  const Eigen::VectorXd gn_step = e.gauss_newton.ldlt().solve(-e.gradient);
  Eigen::VectorXd x0(200);
  for (int i = 0; i < 200; ++i) x0(i) = c.initial.get(ScalarVar(i));
  REQUIRE((x0 + gn_step).minCoeff() < 0);
  REQUIRE((x0 + gn_step).maxCoeff() > 0);  // "only in some region"

  for (LinearSolver solver : kAllSolvers) {
    CAPTURE(linear_solver_name(solver));
    SolverOptions o = tight_faults(solver);
    o.initial_trust_region_radius = 1e8;  // close to Gauss–Newton: the first step is bad
    o.linear_relative_tolerance = 1e-12;
    o.num_threads = 2;
    const SolveResult r = a.solve(c.initial, o);
    CAPTURE(r.summary.report());
    CHECK(converged(r.summary.termination));
    CHECK(r.summary.unsuccessful_steps >= 1);
    REQUIRE(r.summary.per_iteration.size() >= 2);
    CHECK(!r.summary.per_iteration[1].step_accepted);  // the overshooting step
    CHECK(r.summary.final_cost < 1e-16);  // the data are consistent: the minimum is 0
    double worst = 0;
    for (int i = 0; i < 200; ++i) worst = std::max(worst, std::abs(r.values.get(ScalarVar(i)) - c.truth[i]));
    CHECK(worst < 1e-7);
  }
}

TEST_CASE("faults: a gradient that is not finite at the initial values is a Failure naming the "
          "variable") {
  // |a - b| at a = b: the cost is finite (|0| - 1), its gradient (a - b)/|a - b| is 0/0.
  // All-zero initial values are common; a solve that took NaN steps from there and ended
  // with "trust region too small" would hide the cause.
  auto distance = cost("distance", [](const auto& v, VecVar<2> a, VecVar<2> b, const auto& d) {
    return (v[a] - v[b]).norm() - d;
  });
  Problem p;
  p.add(distance, VecVar<2>(-5), VecVar<2>(6), 1.0);
  Values v;
  v.set(VecVar<2>(-5), Eigen::Vector2d::Zero());
  v.set(VecVar<2>(6), Eigen::Vector2d::Zero());
  const AnalyzedProblem a = p.analyze(with_cache(memory_cache()));
  CHECK(std::isfinite(a.cost(v)));
  for (LinearSolver solver : kAllSolvers) {
    CAPTURE(linear_solver_name(solver));
    SolverOptions o;
    o.linear_solver = solver;
    const SolveResult r = a.solve(v, o);
    CAPTURE(r.summary.report());
    CHECK(r.summary.termination == Termination::Failure);
    CHECK(r.summary.message.find("the gradient at the initial values is not finite") == 0);
    CHECK(r.summary.message.find("Vec2 variable -5") != std::string::npos);
    CHECK(r.summary.iterations == 0);
    CHECK(bitwise_equal(r.values, v));
  }
}

TEST_CASE("faults: a trial point whose gradient is not finite is a rejected step") {
  // r = atan(x) + 0.05 + w x sigmoid(x), w = 1e-3 (data). For x < -709, exp(-x) overflows:
  // x sigmoid(x) = x / (1 + inf) = -0 is finite, its derivative (inf - inf) / inf is NaN.
  // From x = 30 the Gauss–Newton step lands near x = -736, where the cost is lower (atan
  // saturates), so by cost alone the step is a good one; from there every step would be
  // NaN. Such a point must be rejected like one with a non-finite cost, and the solve
  // must reach the minimum near x = -0.05.
  auto swish = cost("swish", [](const auto& v, ScalarVar x, const auto& w) {
    return atan(v[x]) + 0.05 + w * v[x] / (1.0 + exp(-v[x]));
  });
  Problem p;
  p.add(swish, ScalarVar(0), 1e-3);
  Values v;
  v.set(ScalarVar(0), 30.0);
  const AnalyzedProblem a = p.analyze(with_cache(memory_cache()));
  // Preconditions, without the solver: the Gauss–Newton step lands where the cost is lower
  // and the gradient is NaN.
  const AnalyzedProblem::Evaluation e0 = a.evaluate(v, true);
  Values at_trial;
  at_trial.set(ScalarVar(0), 30.0 - e0.gradient(0) / e0.gauss_newton(0, 0));
  CAPTURE(at_trial.get(ScalarVar(0)));
  REQUIRE(a.cost(at_trial) < e0.cost);
  REQUIRE(std::isnan(a.evaluate(at_trial).gradient(0)));

  for (LinearSolver solver : kAllSolvers) {
    CAPTURE(linear_solver_name(solver));
    SolverOptions o = tight_faults(solver);
    o.initial_trust_region_radius = 1e8;
    const SolveResult r = a.solve(v, o);
    CAPTURE(r.summary.report());
    CHECK(converged(r.summary.termination));
    REQUIRE(r.summary.per_iteration.size() >= 2);
    CHECK(!r.summary.per_iteration[1].step_accepted);  // the step to x = -736
    const double x = r.values.get(ScalarVar(0));
    CHECK(std::abs(std::atan(x) + 0.05 + 1e-3 * x / (1 + std::exp(-x))) < 1e-9);
    for (const IterationSummary& it : r.summary.per_iteration) CHECK(std::isfinite(it.gradient_max_norm));
  }
}

// ------------------------------------------------------------------ problems

TEST_CASE("faults: a variable referenced but never given a value is named, never read") {
  Chain c = sqrt_chain({kMin, -1, 0, kMax});
  const AnalyzedProblem a = c.problem.analyze(with_cache(memory_cache()));
  Values v;
  v.set(ScalarVar(-1), 1.0);
  v.set(ScalarVar(0), 1.0);
  v.set(ScalarVar(kMax), 1.0);
  v.set(VecVar<2>(kMin), Eigen::Vector2d(1, 1));  // same ID, other type: another variable
  const SolveResult r = a.solve(v);
  CHECK(r.summary.termination == Termination::Failure);
  CHECK(r.summary.message == "no initial value for Scalar variable -9223372036854775808 (a cost uses it)");
  CHECK(bitwise_equal(r.values, v));
  CHECK_THROWS_WITH_AS(a.cost(v), doctest::Contains("variable -9223372036854775808"), Error);
  CHECK_THROWS_WITH_AS(a.evaluate(v), doctest::Contains("variable -9223372036854775808"), Error);
  CHECK_THROWS_WITH_AS(a.gauss_newton_matrix(v), doctest::Contains("variable -9223372036854775808"), Error);
  CHECK_THROWS_AS(compute_covariance(a, v, {{ScalarVar(0), ScalarVar(0)}}), Error);
}

TEST_CASE("faults: IDs at the int64 extremes and negative IDs are plain IDs") {
  // The same chain under IDs 0..6 and under other IDs in the same order: spread over the
  // whole int64 range (numbered by sorting), and negative with gaps in a small span
  // (numbered through an array over the span): variables are numbered by sorted ID, so the
  // solves do the same arithmetic and must agree bit for bit.
  const std::vector<std::vector<int64_t>> id_sets = {{kMin, kMin + 1, -1000000007, -1, 0, kMax - 1, kMax},
                                                     {-40, -17, -3, 0, 5, 6, 31}};
  for (const std::vector<int64_t>& ids : id_sets) {
    CAPTURE(ids.front());
    const std::vector<int64_t> plain = iota_ids(ids.size());
    Chain e = sqrt_chain(ids);
    Chain q = sqrt_chain(plain);
    e.problem.set_constant(ScalarVar(ids.back()));
    q.problem.set_constant(ScalarVar(plain.back()));
    const AnalyzedProblem ae = e.problem.analyze(with_cache(memory_cache()));
    const AnalyzedProblem aq = q.problem.analyze(with_cache(memory_cache()));

    const auto free = ae.free_variables();
    REQUIRE(free.size() == ids.size() - 1);
    for (size_t i = 0; i < free.size(); ++i) CHECK(free[i].id == ids[i]);  // sorted, the last held

    const SolveResult re = ae.solve(e.initial, tight_faults());
    const SolveResult rq = aq.solve(q.initial, tight_faults());
    CAPTURE(re.summary.report());
    CHECK(converged(re.summary.termination));
    CHECK(re.summary.final_cost == rq.summary.final_cost);
    CHECK(re.summary.iterations == rq.summary.iterations);
    for (size_t i = 0; i < ids.size(); ++i) {
      CAPTURE(ids[i]);
      const double xe = re.values.get(ScalarVar(ids[i])), xq = rq.values.get(ScalarVar(plain[i]));
      CHECK(std::memcmp(&xe, &xq, sizeof xe) == 0);
    }
    CHECK(re.values.get(ScalarVar(ids.back())) == e.initial.get(ScalarVar(ids.back())));  // held constant
    // Sharing the process's kernels: a new ID range is runtime data.
    CHECK(ae.groups()[0].normal_equations_kernel_id == aq.groups()[0].normal_equations_kernel_id);
  }
}

TEST_CASE("faults: mismatched batches throw and leave the problem as it was") {
  Problem p;
  p.add(line, ScalarVar(0), ScalarVar(1), std::vector<double>{0, 1, 2}, std::vector<double>{1, 3, 5});
  CHECK_THROWS_WITH_AS(p.add(line, ScalarVar(0), ScalarVar(1), std::vector<double>{3, 4},
                             std::vector<double>{7}),
                       doctest::Contains("argument 3 has 2 entries, argument 4 has 1"), Error);
  CHECK_THROWS_WITH_AS(p.add(line, ScalarVar::batch({0, 0}), ScalarVar(1), std::vector<double>{3, 4, 5}, 7.0),
                       doctest::Contains("batches of different lengths"), Error);
  CHECK_THROWS_WITH_AS(p.add(line, ScalarVar(0), ScalarVar::batch({}), 1.0, 2.0),
                       doctest::Contains("argument 2 is an empty batch"), Error);
  CHECK(p.num_instances() == 3);
  CHECK(p.num_groups() == 1);
  // A failed add of a new cost creates no group either.
  auto other = cost("other_line", [](const auto& v, ScalarVar a, const auto& y) { return y - v[a]; });
  CHECK_THROWS_AS(p.add(other, ScalarVar::batch({1, 2}), std::vector<double>{1}), Error);
  CHECK(p.num_groups() == 1);

  Values v;
  v.set(ScalarVar(0), 0.0);
  v.set(ScalarVar(1), 0.0);
  const AnalyzedProblem a = p.analyze(with_cache(memory_cache()));
  CHECK(a.num_instances() == 3);
  const SolveResult r = a.solve(v, tight_faults());
  CHECK(converged(r.summary.termination));
  CHECK(r.values.get(ScalarVar(0)) == doctest::Approx(2.0).epsilon(1e-12));
  CHECK(r.values.get(ScalarVar(1)) == doctest::Approx(1.0).epsilon(1e-12));
}

TEST_CASE("faults: an empty problem analyzes and solves to its initial values") {
  Problem p;
  const AnalyzedProblem a = p.analyze(with_cache(memory_cache()));
  CHECK(a.num_instances() == 0);
  CHECK(a.tangent_dim() == 0);
  CHECK(a.groups().empty());
  CHECK(a.free_variables().empty());
  Values v;
  v.set(ScalarVar(3), 1.5);  // not referenced: passed through
  CHECK(a.cost(v) == 0.0);
  CHECK(a.evaluate(v, true).gradient.size() == 0);
  for (LinearSolver solver : kAllSolvers) {
    CAPTURE(linear_solver_name(solver));
    SolverOptions o;
    o.linear_solver = solver;
    const SolveResult r = a.solve(v, o);
    CAPTURE(r.summary.report());
    CHECK(r.summary.termination == Termination::GradientTolerance);
    CHECK(r.summary.message == "no free variables");
    CHECK(r.summary.initial_cost == 0.0);
    CHECK(r.summary.final_cost == 0.0);
    CHECK(r.summary.iterations == 0);
    CHECK(r.summary.cost_groups == 0);
    CHECK(bitwise_equal(r.values, v));
    CHECK(!r.summary.report().empty());
    CHECK(!r.summary.json().empty());
  }
  CHECK(a.solve(Values{}).values.empty());
}

TEST_CASE("faults: costs over constant variables only - the cost is evaluated, nothing moves") {
  std::vector<double> xs{0, 1, 2}, ys{1, 3, 5.5};
  Problem p;
  p.add(line, ScalarVar(0), ScalarVar(1), xs, ys);
  p.set_constant(ScalarVar(0));
  p.set_constant(ScalarVar(1));
  const AnalyzedProblem a = p.analyze(with_cache(memory_cache()));
  CHECK(a.tangent_dim() == 0);
  Values v;
  v.set(ScalarVar(0), 2.0);
  v.set(ScalarVar(1), 1.0);
  const double expected = 0.5 * 0.5 * 0.5;  // only the last sample misses, by 0.5
  CHECK(a.cost(v) == expected);
  for (LinearSolver solver : kAllSolvers) {
    CAPTURE(linear_solver_name(solver));
    SolverOptions o;
    o.linear_solver = solver;
    const SolveResult r = a.solve(v, o);
    CAPTURE(r.summary.report());
    CHECK(r.summary.termination == Termination::GradientTolerance);
    CHECK(r.summary.message == "no free variables");
    CHECK(r.summary.initial_cost == expected);
    CHECK(r.summary.final_cost == expected);
    CHECK(r.summary.constant_variables == 2);
    CHECK(bitwise_equal(r.values, v));
  }
  // Still checked: a NaN is a Failure even when nothing could move.
  v.set(ScalarVar(1), kNaN);
  CHECK(a.solve(v).summary.termination == Termination::Failure);
  CHECK_THROWS_WITH_AS(compute_covariance(a, v, {{ScalarVar(0), ScalarVar(0)}}),
                       doctest::Contains("constant"), Error);
}

TEST_CASE("faults: a cost with no residual, no variable or a wrong handle is an lsjit::Error at analyze") {
  auto empty_array = cost("empty_array", [](const auto& v, ScalarVar a) {
    (void)v[a];
    return std::array<Sym, 0>{};
  });
  auto empty_vector = cost("empty_vector", [](const auto& v, ScalarVar a) {
    (void)v[a];
    return Eigen::Matrix<Sym, Eigen::Dynamic, 1>(0);
  });
  auto no_variable = cost("no_variable", [](const auto&, const auto& d) { return d * 2.0; });
  auto wrong_handle = cost("wrong_handle", [](const auto& v, ScalarVar a) {
    (void)a;
    return (v[VecVar<2>(0)] * 2.0).eval();  // slot 0 is a Scalar
  });
  {
    Problem p;
    p.add(empty_array, ScalarVar(0));
    CHECK_THROWS_WITH_AS(p.analyze(with_cache(memory_cache())),
                         "lsjit: cost 'empty_array' returned no residual", Error);
  }
  {
    Problem p;
    p.add(empty_vector, ScalarVar(0));
    CHECK_THROWS_WITH_AS(p.analyze(with_cache(memory_cache())),
                         "lsjit: cost 'empty_vector' returned no residual", Error);
  }
  {
    Problem p;
    p.add(no_variable, 1.0);
    CHECK_THROWS_WITH_AS(p.analyze(with_cache(memory_cache())),
                         doctest::Contains("cost 'no_variable' has 0 variable arguments"), Error);
  }
  {
    Problem p;
    p.add(wrong_handle, ScalarVar(0));
    CHECK_THROWS_WITH_AS(p.analyze(with_cache(memory_cache())),
                         doctest::Contains("cost 'wrong_handle': argument 0 is a Scalar, not a Vec2"), Error);
  }
  // The cache is not left waiting for a kernel that never came: the next analyze works.
  Problem ok;
  ok.add(line, ScalarVar(0), ScalarVar(1), 1.0, 3.0);
  CHECK(ok.analyze(with_cache(memory_cache())).num_instances() == 1);
}

// ------------------------------------------------------------------ the disk cache

namespace {

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) {
    path = fs::path(LSJIT_TEST_TMP_DIR) / ("faults_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

struct LoggedCache {
  std::ostringstream log;
  std::unique_ptr<compiler::KernelCache> cache;
  explicit LoggedCache(const fs::path& dir) {
    compiler::KernelCache::Options o;
    o.directory = dir;
    o.log = &log;
    cache = std::make_unique<compiler::KernelCache>(o);
  }
};

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

}  // namespace

TEST_CASE("faults: corrupt and foreign cache entries on the solve path are recompiled and the "
          "solve is right") {
  TempDir dir("corrupt");
  Chain c = sqrt_chain(iota_ids(40));
  SolveResult reference;
  {
    LoggedCache first(dir.path);
    reference = c.problem.analyze(with_cache(*first.cache)).solve(c.initial, tight_faults());
    REQUIRE(converged(reference.summary.termination));
    CHECK(first.cache->stats().disk_writes == 4);  // two costs, two modes each
  }
  // Damage every entry, each in another way.
  const std::vector<compiler::DiskCache::FileInfo> files = compiler::DiskCache(dir.path).list();
  REQUIRE(files.size() == 4);
  const std::vector<void (*)(std::string&)> damages = {
      [](std::string& b) { b.resize(b.size() / 3); },  // truncated
      [](std::string& b) {  // a flipped bit in the object code, which ends the payload
        uint64_t payload = 0;  // the header's payload size (compiler/cache/disk_cache.h)
        for (int k = 0; k < 8; ++k) payload |= uint64_t{static_cast<unsigned char>(b[12 + k])} << (8 * k);
        b[28 + payload - 2] ^= 0x10;
      },
      [](std::string& b) { b[8] = 1; },  // another format version (1: before the tag)
      [](std::string& b) { b = "\x7f" "ELF not an entry"; },
  };
  for (size_t i = 0; i < files.size(); ++i) {
    std::string bytes = read_file(files[i].path);
    damages[i](bytes);
    write_file(files[i].path, bytes);
  }

  LoggedCache second(dir.path);
  const AnalyzedProblem a = c.problem.analyze(with_cache(*second.cache));
  const SolveResult r = a.solve(c.initial, tight_faults());
  const std::string log = second.log.str();
  CAPTURE(log);
  CHECK(lines(log) == 4);  // one line per bad entry
  for (const char* what : {"is truncated", "is corrupt", "is foreign format version", "is not a cache entry"})
    CHECK(log.find(what) != std::string::npos);
  CHECK(second.cache->stats().bad_disk_entries == 4);
  CHECK(second.cache->stats().compiles == 4);
  CHECK(r.summary.compiles == 4);
  CHECK(bitwise_equal(r.values, reference.values));
  CHECK(r.summary.final_cost == reference.summary.final_cost);

  // Replaced: a third process reads all four silently.
  LoggedCache third(dir.path);
  const SolveResult again = c.problem.analyze(with_cache(*third.cache)).solve(c.initial, tight_faults());
  CHECK(third.log.str().empty());
  CHECK(third.cache->stats().disk_hits == 4);
  CHECK(third.cache->stats().compiles == 0);
  CHECK(bitwise_equal(again.values, reference.values));
}

TEST_CASE("faults: the cache directory removed, then made impossible, during a run - solves go on") {
  TempDir dir("vanishing");
  const fs::path cache_dir = dir.path / "cache";
  LoggedCache lc(cache_dir);
  Chain c = sqrt_chain(iota_ids(30));
  const SolveResult r1 = c.problem.analyze(with_cache(*lc.cache)).solve(c.initial, tight_faults());
  CHECK(converged(r1.summary.termination));

  // Removed: the next compile writes it again, silently.
  fs::remove_all(cache_dir);
  Problem p2;
  p2.add(line, ScalarVar(0), ScalarVar(1), std::vector<double>{0, 1, 2}, std::vector<double>{1, 3, 5});
  Values v2;
  v2.set(ScalarVar(0), 0.0);
  v2.set(ScalarVar(1), 0.0);
  const SolveResult r2 = p2.analyze(with_cache(*lc.cache)).solve(v2, tight_faults());
  CHECK(r2.values.get(ScalarVar(0)) == doctest::Approx(2.0).epsilon(1e-12));
  CHECK(lc.log.str().empty());
  CHECK(compiler::DiskCache(cache_dir).list().size() == 2);

  // Replaced by a file: one warning, then memory only; kernels in memory keep serving.
  fs::remove_all(cache_dir);
  write_file(cache_dir, "x");
  auto scaled_line = cost("scaled_line", [](const auto& v, ScalarVar a, const auto& y) { return 3.0 * (y - v[a]); });
  Problem p3;
  p3.add(scaled_line, ScalarVar(0), std::vector<double>{1, 2, 3});
  Values v3;
  v3.set(ScalarVar(0), 0.0);
  const SolveResult r3 = p3.analyze(with_cache(*lc.cache)).solve(v3, tight_faults());
  CHECK(r3.values.get(ScalarVar(0)) == doctest::Approx(2.0).epsilon(1e-6));
  const SolveResult r1_again = c.problem.analyze(with_cache(*lc.cache)).solve(c.initial, tight_faults());
  CHECK(r1_again.summary.compiles == 0);
  CHECK(bitwise_equal(r1_again.values, r1.values));
  const std::string log = lc.log.str();
  CAPTURE(log);
  CHECK(lines(log) == 1);
  CHECK(log.find("memory only") != std::string::npos);
  CHECK(!lc.cache->disk_writable());
}
