// Problem, analyze and solve: what is runtime (never recompiles), how the linear system is
// assembled, how the solver treats solvers, threads, constants and numerical trouble.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <vector>

#include "../support/memory_cache.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/lsjit.h"

using namespace lsjit;

namespace {

// A spring between two points: r = |a - b| - rest (nonlinear), and an anchor prior.
auto spring = cost("spring", [](const auto& v, VecVar<3> a, VecVar<3> b, const auto& rest) {
  return (v[a] - v[b]).norm() - rest;
});
auto anchor = cost("anchor", [](const auto& v, VecVar<3> a, const auto& where) {
  return (v[a] - where).eval();
});

// A random network of springs over `n` points, anchored at the first `anchored` (three
// anchors leave it rank deficient where springs do not make it rigid: LM copes).
struct Network {
  Problem problem;
  Values initial;
};
Network random_network(int n, uint64_t seed, int64_t id_offset = 0, int anchored = 3) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Network net;
  std::vector<Eigen::Vector3d> truth(n);
  for (int i = 0; i < n; ++i) {
    truth[i] = Eigen::Vector3d(u(rng), u(rng), u(rng)) * 3.0;
    net.initial.set(VecVar<3>(id_offset + i), Eigen::Vector3d(truth[i] + 0.3 * Eigen::Vector3d(u(rng), u(rng), u(rng))));
  }
  for (int i = 0; i < anchored; ++i) net.problem.add(anchor, VecVar<3>(id_offset + i), truth[i]);
  for (int i = 0; i < n; ++i)
    for (int k = 1; k <= 3; ++k) {
      const int j = (i + k * 7 + 1) % n;
      if (j == i) continue;
      net.problem.add(spring, VecVar<3>(id_offset + i), VecVar<3>(id_offset + j),
                      (truth[i] - truth[j]).norm() + 0.01 * u(rng));
    }
  return net;
}

double max_relative_difference(const Values& a, const Values& b, int n, int64_t id_offset = 0) {
  double d = 0;
  for (int i = 0; i < n; ++i) {
    const Eigen::Vector3d x = a.get(VecVar<3>(id_offset + i)), y = b.get(VecVar<3>(id_offset + i));
    d = std::max(d, (x - y).norm() / std::max(1.0, y.norm()));
  }
  return d;
}

bool bitwise_equal(const Values& a, const Values& b) {
  bool same = a.size() == b.size();
  a.for_each([&](const VariableType& t, int64_t id, const double* p) {
    const double* q = b.params(t.name, id);
    same = same && q && std::memcmp(p, q, sizeof(double) * t.ambient) == 0;
  });
  return same;
}

SolverOptions tight(lsjit::LinearSolver solver = lsjit::LinearSolver::SparseCholesky) {
  SolverOptions o;
  o.linear_solver = solver;
  o.function_tolerance = 1e-14;
  o.gradient_tolerance = 1e-14;
  o.parameter_tolerance = 1e-14;
  o.max_iterations = 200;
  return o;
}

}  // namespace

TEST_CASE("compile once: IDs, values, instance counts, solver options and batching never recompile") {
  compiler::KernelCache& cache = lsjit::testing::memory_cache();
  Network first = random_network(12, 1);
  const AnalyzedProblem a1 = first.problem.analyze(lsjit::testing::analyze_with(cache));
  const uint64_t compiles = cache.stats().compiles;
  cache.set_fail_on_recompile(true);

  // More points, other IDs (offset, not contiguous), other values, other data.
  Network second = random_network(40, 2, 1000);
  const AnalyzedProblem a2 = second.problem.analyze(lsjit::testing::analyze_with(cache));
  // The same instances added as batches.
  Problem batched;
  {
    std::vector<int64_t> ai, bi;
    std::vector<double> rest;
    for (int i = 0; i < 30; ++i) {
      ai.push_back(5000 + i);
      bi.push_back(5000 + (i + 1) % 30);
      rest.push_back(1.0 + 0.01 * i);
    }
    batched.add(spring, VecVar<3>::batch(ai), VecVar<3>::batch(bi), rest);
    batched.add(anchor, VecVar<3>::batch({5000, 5001}), std::vector<Eigen::Vector3d>{{0, 0, 0}, {1, 0, 0}});
  }
  const AnalyzedProblem a3 = batched.analyze(lsjit::testing::analyze_with(cache));
  CHECK(a3.num_instances() == 32);

  // Solves with different damping, tolerances, solvers and threads.
  for (double radius : {1e-2, 1e4}) {
    SolverOptions o = tight();
    o.initial_trust_region_radius = radius;
    o.function_tolerance = radius * 1e-10;
    o.num_threads = radius < 1 ? 2 : 1;
    CHECK(a1.solve(first.initial, o).summary.usable());
    CHECK(a2.solve(second.initial, o).summary.usable());
  }
  CHECK(a2.solve(second.initial, tight(lsjit::LinearSolver::ConjugateGradient)).summary.usable());
  CHECK(cache.stats().compiles == compiles);
  CHECK(cache.recompiles("spring") == 0);
  CHECK(cache.recompiles("anchor") == 0);
  cache.set_fail_on_recompile(false);
}

TEST_CASE("the summary gives analyze()'s kernel time as wall time and as a sum, the same in every solve") {
  compiler::KernelCache::Options co;
  co.use_disk = false;
  co.quiet = true;
  compiler::KernelCache cache(co);  // private: this problem's kernels are compiled here
  Network net = random_network(30, 11);
  const AnalyzedProblem analyzed = net.problem.analyze(lsjit::testing::analyze_with(cache));
  const SolveSummary first = analyzed.solve(net.initial).summary, second = analyzed.solve(net.initial).summary;
  CHECK(first.compiles > 0);
  CHECK(first.kernels_wall_s > 0);
  CHECK(first.kernels_wall_s <= first.analyze_s);
  CHECK(first.compile_s > 0);
  // Every solve reports the one analyze() it shares, not compiles of its own.
  CHECK(second.compiles == first.compiles);
  CHECK(second.kernels_wall_s == first.kernels_wall_s);
  const std::string report = first.report();
  CHECK(report.find("Kernel cache, at analyze() (every solve of it shares these)") != std::string::npos);
  CHECK(report.find("Kernels, wall") != std::string::npos);
  CHECK(report.find("Kernels, summed over kernels") != std::string::npos);
  CHECK(first.json().find("\"kernels_wall_s\": ") != std::string::npos);
}

TEST_CASE("a captured constant that differs is a recompile, explained, and fails when asked to") {
  compiler::KernelCache::Options options;
  options.use_disk = false;
  std::ostringstream log;
  options.log = &log;
  options.explain_misses = true;
  compiler::KernelCache cache(options);
  auto scaled = [](double s) {
    return cost("scaled_prior", [s](const auto& v, ScalarVar x) { return s * (v[x] - 1.0); });
  };
  Problem p;
  p.add(scaled(2.0), ScalarVar(0));
  p.add(scaled(2.0), ScalarVar(1));  // equal captures: the same group
  CHECK(p.num_groups() == 1);
  p.add(scaled(3.0), ScalarVar(2));  // another captured value: another group
  CHECK(p.num_groups() == 2);
  const AnalyzedProblem a = p.analyze(lsjit::testing::analyze_with(cache));
  CHECK(a.groups().size() == 2);
  CHECK(cache.recompiles("scaled_prior") == 2);  // residual and normal-equations kernels
  CHECK(log.str().find("captured constant") != std::string::npos);
  CHECK(log.str().find("as data arguments") != std::string::npos);

  Problem q;
  q.add(scaled(4.0), ScalarVar(0));
  cache.set_fail_on_recompile(true);
  CHECK_THROWS_AS(q.analyze(lsjit::testing::analyze_with(cache)), Error);
}

TEST_CASE("every linear solver reaches the dense solution - constant variables stay put") {
  Network net = random_network(25, 7);
  net.problem.set_constant(VecVar<3>(4));
  const AnalyzedProblem analyzed = net.problem.analyze(lsjit::testing::analyze_with(lsjit::testing::memory_cache()));
  const SolveResult dense = analyzed.solve(net.initial, tight(lsjit::LinearSolver::DenseCholesky));
  CAPTURE(dense.summary.report());
  REQUIRE(converged(dense.summary.termination));
  CHECK(dense.summary.final_cost < 1e-3 * dense.summary.initial_cost);
  CHECK(dense.summary.constant_variables == 1);
  CHECK(dense.summary.tangent_dim == 24 * 3);
  for (lsjit::LinearSolver s : {lsjit::LinearSolver::SparseCholesky, lsjit::LinearSolver::EigenSparseCholesky,
                         lsjit::LinearSolver::ConjugateGradient}) {
    CAPTURE(linear_solver_name(s));
    SolverOptions o = tight(s);
    o.linear_relative_tolerance = 1e-12;
    const SolveResult r = analyzed.solve(net.initial, o);
    CAPTURE(r.summary.report());
    CHECK(converged(r.summary.termination));
    CHECK(r.summary.final_cost == doctest::Approx(dense.summary.final_cost).epsilon(1e-9));
    CHECK(max_relative_difference(r.values, dense.values, 25) < 1e-7);
    const Eigen::Vector3d held = r.values.get(VecVar<3>(4)), given = net.initial.get(VecVar<3>(4));
    CHECK(std::memcmp(held.data(), given.data(), sizeof(double) * 3) == 0);
  }
}

TEST_CASE("results are bit-identical whatever the thread count") {
  Network net = random_network(600, 3);  // > one evaluation chunk per group
  const AnalyzedProblem analyzed = net.problem.analyze(lsjit::testing::analyze_with(lsjit::testing::memory_cache()));
  SolverOptions o = tight();
  o.max_iterations = 8;
  const SolveResult one = analyzed.solve(net.initial, o);
  for (int threads : {2, 3, 0}) {
    o.num_threads = threads;
    const SolveResult r = analyzed.solve(net.initial, o);
    CHECK(bitwise_equal(r.values, one.values));
    CHECK(r.summary.final_cost == one.summary.final_cost);
    CHECK(r.summary.iterations == one.summary.iterations);
  }
}

TEST_CASE("gradient and Gauss-Newton matrix: against finite differences, with variables in "
          "either slot order, one variable in two slots, blocks with one source and with two") {
  // Linear residuals, so that JᵀJ is the exact Hessian of the cost and both can be checked
  // by central differences: r = A a + B b - c, with a 2-vector and a 3-vector variable.
  auto linear = cost("linear_pair", [](const auto& v, VecVar<2> a, VecVar<3> b, const auto& A,
                                       const auto& B, const auto& c) {
    return (A * v[a] + B * v[b] - c).eval();
  });
  auto same_type = cost("linear_same", [](const auto& v, VecVar<2> a, VecVar<2> b, const auto& M) {
    return (M * v[a] - v[b]).eval();
  });
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto mat = [&](auto m) {
    for (int i = 0; i < m.size(); ++i) m.data()[i] = u(rng);
    return m;
  };
  Problem p;
  Values x;
  for (int64_t id : {3, 8, 1}) x.set(VecVar<2>(id), mat(Eigen::Vector2d()));
  for (int64_t id : {2, 9}) x.set(VecVar<3>(id), mat(Eigen::Vector3d()));
  // Block (1, 2) has one source, which its kernel writes into H directly; (3, 2) has two,
  // summed by the assembly (evaluator.h); (8, 9) none (9 is constant).
  for (auto [ia, ib] : {std::pair<int64_t, int64_t>{3, 2}, {8, 9}, {1, 2}, {3, 2}})
    p.add(linear, VecVar<2>(ia), VecVar<3>(ib), mat(Eigen::Matrix<double, 4, 2>()),
          mat(Eigen::Matrix<double, 4, 3>()), mat(Eigen::Vector4d()));
  p.add(same_type, VecVar<2>(8), VecVar<2>(3), mat(Eigen::Matrix2d()));  // higher id first
  p.add(same_type, VecVar<2>(1), VecVar<2>(1), mat(Eigen::Matrix2d()));  // one variable twice
  p.set_constant(VecVar<3>(9));
  const AnalyzedProblem analyzed = p.analyze(lsjit::testing::analyze_with(lsjit::testing::memory_cache()));
  const auto vars = analyzed.free_variables();
  REQUIRE(vars.size() == 4);  // Vec2 1, 3, 8 then Vec3 2 (9 is constant)
  CHECK(vars[0].type == "Vec2");
  CHECK(vars[0].id == 1);
  CHECK(vars[3].type == "Vec3");
  CHECK(vars[3].offset == 6);
  const auto e = analyzed.evaluate(x, true);
  CHECK(e.cost == doctest::Approx(analyzed.cost(x)).epsilon(1e-14));

  auto perturbed = [&](size_t component, double h) {
    Values y = x;
    for (const auto& f : vars) {
      if (component < f.offset || component >= f.offset + f.tangent) continue;
      const double* old = x.params(f.type, f.id);
      std::vector<double> moved(old, old + f.tangent);
      moved[component - f.offset] += h;
      if (f.type == "Vec2") y.set(VecVar<2>(f.id), Eigen::Vector2d(moved[0], moved[1]));
      else y.set(VecVar<3>(f.id), Eigen::Vector3d(moved[0], moved[1], moved[2]));
    }
    return y;
  };
  const double h = 1e-4;
  for (size_t k = 0; k < analyzed.tangent_dim(); ++k) {
    CAPTURE(k);
    const double fd = (analyzed.cost(perturbed(k, h)) - analyzed.cost(perturbed(k, -h))) / (2 * h);
    CHECK(e.gradient(k) == doctest::Approx(fd).epsilon(1e-8));
    const auto plus = analyzed.evaluate(perturbed(k, h)), minus = analyzed.evaluate(perturbed(k, -h));
    for (size_t j = 0; j < analyzed.tangent_dim(); ++j) {
      CAPTURE(j);
      CHECK(e.gauss_newton(j, k) == doctest::Approx((plus.gradient(j) - minus.gradient(j)) / (2 * h)).epsilon(1e-8));
    }
  }
}

TEST_CASE("missing values, non-finite costs and bad batches are reported, never a crash") {
  compiler::KernelCache& cache = lsjit::testing::memory_cache();
  Problem p;
  p.add(anchor, VecVar<3>(1), Eigen::Vector3d(1, 2, 3));
  p.add(anchor, VecVar<3>(2), Eigen::Vector3d(1, 2, 3));
  const AnalyzedProblem a = p.analyze(lsjit::testing::analyze_with(cache));
  Values v;
  v.set(VecVar<3>(1), Eigen::Vector3d::Zero());
  SolveResult r = a.solve(v);
  CHECK(r.summary.termination == Termination::Failure);
  CHECK(r.summary.message == "no initial value for Vec3 variable 2 (a cost uses it)");
  CHECK_THROWS_WITH_AS(a.cost(v), doctest::Contains("no initial value for Vec3 variable 2"), Error);

  v.set(VecVar<3>(2), Eigen::Vector3d(0, std::nan(""), 0));
  r = a.solve(v);
  CHECK(r.summary.termination == Termination::Failure);
  CHECK(r.summary.message.find("not finite: cost 'anchor' instance 1 (residual 1") != std::string::npos);
  CHECK(bitwise_equal(r.values, v));

  Problem q;
  CHECK_THROWS_WITH_AS(q.add(spring, VecVar<3>::batch({1, 2, 3}), VecVar<3>::batch({4, 5}), 1.0),
                       doctest::Contains("argument 1 has 3 entries, argument 2 has 2"), Error);
  CHECK_THROWS_WITH_AS(q.add(spring, VecVar<3>::batch({}), VecVar<3>(1), 1.0),
                       doctest::Contains("argument 1 is an empty batch"), Error);
  CHECK_THROWS_WITH_AS(q.add(spring, VecVar<3>::batch({1, 2}), VecVar<3>(1), std::vector<double>{1.0}),
                       doctest::Contains("batches of different lengths"), Error);
  CHECK(q.num_instances() == 0);
}

TEST_CASE("a trial point with a non-finite cost is a rejected step") {
  // sqrt(x) is NaN for x < 0; the Gauss-Newton step from x = 4 lands at x = -3.6.
  auto root = cost("root", [](const auto& v, ScalarVar x) { return 10.0 * (sqrt(v[x]) - 0.1); });
  Problem p;
  p.add(root, ScalarVar(0));
  Values v;
  v.set(ScalarVar(0), 4.0);
  SolverOptions o = tight();
  o.initial_trust_region_radius = 1e8;
  const SolveResult r = p.analyze(lsjit::testing::analyze_with(lsjit::testing::memory_cache())).solve(v, o);
  CAPTURE(r.summary.report());
  CHECK(converged(r.summary.termination));
  CHECK(r.summary.unsuccessful_steps >= 1);
  CHECK(r.values.get(ScalarVar(0)) == doctest::Approx(0.01).epsilon(1e-12));
}

TEST_CASE("speculative evaluation changes the work of a solve, not its result") {
  // A trust region far too large for the spring network's curvature: early steps overshoot
  // and are rejected, then the radius settles and steps are accepted.
  Network net = random_network(30, 12);
  const AnalyzedProblem a = net.problem.analyze(lsjit::testing::analyze_with(lsjit::testing::memory_cache()));
  for (lsjit::LinearSolver solver : {lsjit::LinearSolver::SparseCholesky, lsjit::LinearSolver::ConjugateGradient}) {
    CAPTURE(linear_solver_name(solver));
    SolverOptions off = tight(solver), on = off;
    off.initial_trust_region_radius = on.initial_trust_region_radius = 1e12;
    off.speculative_evaluation = false;
    const SolveResult r_off = a.solve(net.initial, off), r_on = a.solve(net.initial, on);
    CAPTURE(r_on.summary.report());
    REQUIRE(r_on.summary.unsuccessful_steps >= 1);
    REQUIRE(r_on.summary.successful_steps >= 1);
    CHECK(bitwise_equal(r_on.values, r_off.values));
    CHECK(r_on.summary.final_cost == r_off.summary.final_cost);
    REQUIRE(r_on.summary.per_iteration.size() == r_off.summary.per_iteration.size());
    for (size_t i = 0; i < r_on.summary.per_iteration.size(); ++i) {
      CHECK(r_on.summary.per_iteration[i].cost == r_off.summary.per_iteration[i].cost);
      CHECK(r_on.summary.per_iteration[i].trust_region_radius == r_off.summary.per_iteration[i].trust_region_radius);
      CHECK(r_on.summary.per_iteration[i].step_accepted == r_off.summary.per_iteration[i].step_accepted);
    }
    // Without speculation: a cost evaluation per trial point, normal equations at the start
    // and at every accepted point.
    const int trials = r_off.summary.successful_steps + r_off.summary.unsuccessful_steps;
    CHECK(r_off.summary.residual_evaluations == trials);
    CHECK(r_off.summary.normal_evaluations == 1 + r_off.summary.successful_steps);
    // With it: the trial points after a rejection get their cost alone (and normal equations
    // if accepted), every other one its normal equations, and each rejected one of those
    // one more at the current point.
    int alone = 0, alone_accepted = 0, speculated_rejections = 0;
    bool previous_accepted = true;
    for (const IterationSummary& it : r_on.summary.per_iteration) {
      if (it.iteration == 0) continue;
      if (!previous_accepted) {
        ++alone;
        alone_accepted += it.step_accepted;
      } else if (!it.step_accepted) {
        ++speculated_rejections;
      }
      previous_accepted = it.step_accepted;
    }
    CHECK(r_on.summary.residual_evaluations == alone);
    CHECK(r_on.summary.normal_evaluations == 1 + (trials - alone) + speculated_rejections + alone_accepted);
  }
}

TEST_CASE("the iteration callback can stop a solve - verbose prints a row per iteration") {
  Network net = random_network(10, 5);
  const AnalyzedProblem a = net.problem.analyze(lsjit::testing::analyze_with(lsjit::testing::memory_cache()));
  std::ostringstream log;
  SolverOptions o = tight();
  o.verbose = true;
  o.log = &log;
  std::vector<int> seen;
  o.callback = [&](const IterationSummary& it) {
    seen.push_back(it.iteration);
    return it.iteration < 2;
  };
  const SolveResult r = a.solve(net.initial, o);
  CHECK(r.summary.termination == Termination::UserStopped);
  CHECK(seen == std::vector<int>{0, 1, 2});
  CHECK(r.summary.iterations == 2);
  CHECK(log.str().find(iteration_header()) == 0);
  CHECK(r.summary.per_iteration.size() == 3);
  CHECK(r.summary.json().find("\"termination\": \"user_stopped\"") != std::string::npos);
  CHECK(r.summary.report().find("Termination: user_stopped") != std::string::npos);
}

TEST_CASE("Gauss-Newton reaches the same minimum on a well-conditioned problem") {
  Network net = random_network(15, 9, 0, 15);
  const AnalyzedProblem a = net.problem.analyze(lsjit::testing::analyze_with(lsjit::testing::memory_cache()));
  SolverOptions lm = tight(lsjit::LinearSolver::DenseCholesky), gn = lm;
  gn.gauss_newton = true;
  const SolveResult r_lm = a.solve(net.initial, lm), r_gn = a.solve(net.initial, gn);
  CAPTURE(r_gn.summary.report());
  CHECK(r_gn.summary.final_cost == doctest::Approx(r_lm.summary.final_cost).epsilon(1e-8));
  CHECK(max_relative_difference(r_gn.values, r_lm.values, 15) < 1e-6);
}

TEST_CASE("normal equations over several evaluation waves: every instance counted once") {
  // 50,000 anchors (several waves: a wave is about 1 MB of kernel output, 13 doubles an
  // anchor) on 7 variables: g and JᵀJ have closed forms.
  const int n = 50000, vars = 7;
  std::vector<int64_t> ids;
  std::vector<Eigen::Vector3d> where;
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int i = 0; i < n; ++i) {
    ids.push_back(i % vars);
    where.emplace_back(u(rng), u(rng), u(rng));
  }
  Problem p;
  p.add(anchor, VecVar<3>::batch(ids), where);
  Values x;
  for (int v = 0; v < vars; ++v) x.set(VecVar<3>(v), Eigen::Vector3d(u(rng), u(rng), u(rng)));
  const AnalyzedProblem a = p.analyze(lsjit::testing::analyze_with(lsjit::testing::memory_cache()));
  const auto e = a.evaluate(x, true, 2);
  Eigen::VectorXd g = Eigen::VectorXd::Zero(3 * vars);
  double cost = 0;
  for (int i = 0; i < n; ++i) {
    const Eigen::Vector3d r = x.get(VecVar<3>(ids[i])) - where[i];
    g.segment<3>(3 * ids[i]) += r;
    cost += 0.5 * r.squaredNorm();
  }
  CHECK(e.cost == doctest::Approx(cost).epsilon(1e-12));
  CHECK((e.gradient - g).norm() <= 1e-12 * g.norm());
  Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(3 * vars, 3 * vars);
  for (int i = 0; i < n; ++i) expected.block<3, 3>(3 * ids[i], 3 * ids[i]) += Eigen::Matrix3d::Identity();
  CHECK(e.gauss_newton == expected);
  // Thread counts do not change a bit.
  const auto e1 = a.evaluate(x, true, 1), e3 = a.evaluate(x, true, 3);
  CHECK(e1.cost == e.cost);
  CHECK(e1.gradient == e.gradient);
  CHECK(e3.gradient == e.gradient);
  CHECK(e3.gauss_newton == e.gauss_newton);
}

TEST_CASE("normal equations over several waves, with robust losses and transposed blocks, "
          "equal the sum of the same evaluations in parts") {
  // 24,000 springs (34 doubles of kernel output each: about 3,800 an evaluation wave) over
  // 200 points, half of them under a Cauchy loss, and half with the higher-numbered point
  // in the first slot (their H blocks are added transposed). The parts are 8 problems of
  // 3,000 springs, one wave each, that each touch every point: the same variables, so the
  // same gradient and matrix layout.
  const int points = 200, parts = 8, per_part = 3000;
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> other(1, points - 1);
  Values x;
  for (int i = 0; i < points; ++i) x.set(VecVar<3>(i), Eigen::Vector3d(u(rng), u(rng), u(rng)) * 2.0);
  Problem whole;
  std::vector<Problem> pieces(parts);
  for (int part = 0; part < parts; ++part) {
    for (int robust = 0; robust < 2; ++robust) {
      std::vector<int64_t> a, b;
      std::vector<double> rest;
      for (int k = 0; k < per_part / 2; ++k) {
        a.push_back(k % points);
        b.push_back((k % points + other(rng)) % points);
        rest.push_back(1.0 + u(rng));
      }
      if (robust) {
        whole.add(spring, CauchyLoss(0.5), VecVar<3>::batch(a), VecVar<3>::batch(b), rest);
        pieces[part].add(spring, CauchyLoss(0.5), VecVar<3>::batch(a), VecVar<3>::batch(b), rest);
      } else {
        whole.add(spring, VecVar<3>::batch(a), VecVar<3>::batch(b), rest);
        pieces[part].add(spring, VecVar<3>::batch(a), VecVar<3>::batch(b), rest);
      }
    }
  }
  const auto options = lsjit::testing::analyze_with(lsjit::testing::memory_cache());
  const auto e = whole.analyze(options).evaluate(x, true, 1);
  double cost = 0;
  Eigen::VectorXd g = Eigen::VectorXd::Zero(3 * points);
  Eigen::MatrixXd H = Eigen::MatrixXd::Zero(3 * points, 3 * points);
  for (const Problem& piece : pieces) {
    const auto part = piece.analyze(options).evaluate(x, true, 1);
    REQUIRE(part.gradient.size() == g.size());
    cost += part.cost;
    g += part.gradient;
    H += part.gauss_newton;
  }
  CHECK(e.cost == doctest::Approx(cost).epsilon(1e-12));
  CHECK((e.gradient - g).norm() <= 1e-12 * g.norm());
  CHECK((e.gauss_newton - H).norm() <= 1e-12 * H.norm());
  CHECK((e.gauss_newton - e.gauss_newton.transpose()).norm() == 0.0);
  for (int threads : {2, 3}) {
    const auto t = whole.analyze(options).evaluate(x, true, threads);
    CHECK(t.cost == e.cost);
    CHECK(t.gradient == e.gradient);
    CHECK(t.gauss_newton == e.gauss_newton);
  }
}

TEST_CASE("schur_elimination: auto puts the eliminable type with most variables last, or none") {
  auto proj = cost("schur_proj", [](const auto& v, VecVar<6> cam, VecVar<3> pt, const auto& z) {
    const auto c = v[cam];
    const auto p = v[pt];
    return std::array<Sym, 2>{c(0) * p(0) + c(1) * p(1) + c(2) - z(0), c(3) * p(1) + c(4) * p(2) + c(5) - z(1)};
  });
  Problem ba;
  for (int c = 0; c < 3; ++c)
    for (int p = 0; p < 5; ++p) ba.add(proj, VecVar<6>(c), VecVar<3>(p), Eigen::Vector2d(c, p));
  auto types_in_order = [](const AnalyzedProblem& a) {
    std::string order;
    for (const auto& f : a.free_variables())
      if (order.empty() || order.substr(order.size() - f.type.size()) != f.type) order += (order.empty() ? "" : ",") + f.type;
    return order;
  };
  CHECK(types_in_order(ba.analyze(lsjit::testing::analyze_with(lsjit::testing::memory_cache()))) == "Vec6,Vec3");
  AnalyzeOptions named = lsjit::testing::analyze_with(lsjit::testing::memory_cache());
  named.schur_elimination = "Vec6";
  CHECK(types_in_order(ba.analyze(named)) == "Vec3,Vec6");
  named.schur_elimination = "none";
  CHECK(types_in_order(ba.analyze(named)) == "Vec3,Vec6");
  named.schur_elimination = "SE3";
  CHECK_THROWS_WITH_AS(ba.analyze(named), doctest::Contains("no cost uses a variable of that type"), Error);
  // Two slots of one type (a spring): that type cannot be eliminated.
  Network net = random_network(6, 1);
  AnalyzeOptions springs = lsjit::testing::analyze_with(lsjit::testing::memory_cache());
  springs.schur_elimination = "Vec3";
  CHECK_THROWS_WITH_AS(net.problem.analyze(springs), doctest::Contains("a cost has two Vec3 variables"), Error);
}

TEST_CASE("Gauss-Newton on a singular system names the variable and suggests set_constant") {
  // Two points tied by one spring and nothing else: no residual holds them in place, the
  // Gauss-Newton matrix is singular, and its factorization meets a zero pivot.
  Problem p;
  p.add(spring, VecVar<3>(4), VecVar<3>(9), 1.0);
  Values initial;
  initial.set(VecVar<3>(4), Eigen::Vector3d(0, 0, 0));
  initial.set(VecVar<3>(9), Eigen::Vector3d(2, 0, 0));
  const AnalyzedProblem a = p.analyze(lsjit::testing::analyze_with(lsjit::testing::memory_cache()));
  SolverOptions gn = tight(lsjit::LinearSolver::SparseCholesky);
  gn.gauss_newton = true;
  const SolveResult r = a.solve(initial, gn);
  CAPTURE(r.summary.message);
  CHECK(r.summary.termination == Termination::NoDecrease);
  CHECK(r.summary.message.find("non-positive pivot") != std::string::npos);
  CHECK(r.summary.message.find("Vec3 variable 4") != std::string::npos);
  CHECK(r.summary.message.find("Problem::set_constant") != std::string::npos);
}

// Issue 19, item 13: what Ceres refuses (an unknown parameter block) lsjit accepts, and
// says so in the summary: constants and initial values of variables no cost uses.
TEST_CASE("constants and values of variables no cost uses are warned about, with their names") {
  Network net = random_network(10, 4);
  const AnalyzedProblem clean = net.problem.analyze(lsjit::testing::analyze_with());
  const SolveResult plain = clean.solve(net.initial, tight());
  CHECK(plain.summary.warnings.empty());
  CHECK(plain.summary.report().find("Warning") == std::string::npos);
  CHECK(plain.summary.json().find("\"warnings\": []") != std::string::npos);

  net.problem.set_constant(VecVar<3>(2));    // used: no warning
  net.problem.set_constant(VecVar<3>(777));  // no cost uses it
  net.problem.set_constant(VecVar<2>(2));    // an ID that is used, but by another type
  Values initial = net.initial;
  initial.set(VecVar<3>(555), Eigen::Vector3d(1, 2, 3));  // no cost uses it
  const SolveResult r = net.problem.analyze(lsjit::testing::analyze_with()).solve(initial, tight());
  CAPTURE(r.summary.report());
  REQUIRE(converged(r.summary.termination));
  CHECK(r.summary.constant_variables == 1);
  REQUIRE(r.summary.warnings.size() == 2);
  CHECK(r.summary.warnings[0].find("2 variable(s) held constant") == 0);
  CHECK(r.summary.warnings[0].find("Vec3 variable 777") != std::string::npos);
  CHECK(r.summary.warnings[0].find("Vec2 variable 2") != std::string::npos);
  CHECK(r.summary.warnings[1].find("1 initial value(s)") == 0);
  CHECK(r.summary.warnings[1].find("Vec3 variable 555") != std::string::npos);
  CHECK(r.summary.report().find("Warning: 1 initial value(s)") != std::string::npos);
  CHECK(r.summary.json().find("variable 555") != std::string::npos);
  // Passed through unchanged, as before.
  CHECK(r.values.get(VecVar<3>(555)) == Eigen::Vector3d(1, 2, 3));
}
