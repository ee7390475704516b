// Robust losses: ρ and its derivatives, the corrected gradient and Gauss-Newton matrix
// against finite differences of the robustified cost, and outlier loop closures.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

#include "../support/memory_cache.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/lsjit.h"
#include "lsjit/runtime/io/synthetic.h"
#include "lsjit/runtime/pose_graph_problem.h"

using namespace lsjit;

namespace {

const Loss kLosses[] = {HuberLoss(0.7), SoftLOneLoss(0.7), CauchyLoss(0.7), ArctanLoss(0.7),
                        TukeyLoss(2.5)};

// r = (x - target) ⊙ weights, a 2-vector variable; nonlinear through a sine so that J
// varies.
auto fit = cost("robust_fit", [](const auto& v, VecVar<2> x, const auto& target) {
  const auto p = v[x];
  return std::array<Sym, 2>{sin(p(0)) + p(1) - target(0), p(0) * p(1) - target(1)};
});

}  // namespace

TEST_CASE("each loss: rho' and rho'' are the derivatives of rho, rho(s) ~ s near 0") {
  for (const Loss& loss : kLosses) {
    CAPTURE(loss_name(loss.kind));
    double r0[3];
    loss.evaluate(1e-12, r0);
    CHECK(r0[0] == doctest::Approx(1e-12).epsilon(1e-6));
    CHECK(r0[1] == doctest::Approx(1.0).epsilon(1e-6));
    for (double s : {0.01, 0.3, 0.9, 2.0, 5.0, 40.0}) {
      CAPTURE(s);
      const double h = 1e-6 * s;
      double rho[3], plus[3], minus[3];
      loss.evaluate(s, rho);
      loss.evaluate(s + h, plus);
      loss.evaluate(s - h, minus);
      CHECK(rho[1] == doctest::Approx((plus[0] - minus[0]) / (2 * h)).epsilon(1e-6));
      CHECK(rho[2] == doctest::Approx((plus[1] - minus[1]) / (2 * h)).epsilon(1e-5).scale(1e-6));
    }
  }
  CHECK_THROWS_AS(CauchyLoss(0.0), Error);
  CHECK_THROWS_AS(HuberLoss(-1.0), Error);
}

TEST_CASE("robustified gradient and Gauss-Newton matrix against finite differences") {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  for (const Loss& loss : kLosses) {
    CAPTURE(loss_name(loss.kind));
    // Instances near and far from their targets: some inside the quadratic region, some
    // outliers; a trivially weighted instance in the same group.
    Problem p;
    Values x;
    for (int v = 0; v < 3; ++v) x.set(VecVar<2>(v), Eigen::Vector2d(u(rng), u(rng)));
    for (int k = 0; k < 9; ++k) {
      const Eigen::Vector2d target(u(rng) * (k % 3 == 0 ? 5.0 : 0.3), u(rng));
      p.add(fit, loss, VecVar<2>(k % 3), target);
    }
    p.add(fit, VecVar<2>(1), Eigen::Vector2d(0.1, 0.2));
    const AnalyzedProblem a = p.analyze(lsjit::testing::analyze_with());
    const auto e = a.evaluate(x, true);
    const double h = 1e-6;
    for (size_t k = 0; k < a.tangent_dim(); ++k) {
      CAPTURE(k);
      auto moved = [&](double d) {
        Values y = x;
        Eigen::Vector2d z = x.get(VecVar<2>(int64_t(k / 2)));
        z(k % 2) += d;
        y.set(VecVar<2>(int64_t(k / 2)), z);
        return y;
      };
      const double fd = (a.cost(moved(h)) - a.cost(moved(-h))) / (2 * h);
      CHECK(e.gradient(k) == doctest::Approx(fd).epsilon(1e-6).scale(1e-6));
    }
    // With one instance, H̃ = ρ'(s)·JᵀJ (every Ceres loss has ρ'' <= 0: no second-order term).
    Problem one, plain;
    const Eigen::Vector2d target(3.0, -1.0);
    one.add(fit, loss, VecVar<2>(0), target);
    plain.add(fit, VecVar<2>(0), target);
    const auto robust = one.analyze(lsjit::testing::analyze_with()).evaluate(x, true);
    const auto base = plain.analyze(lsjit::testing::analyze_with()).evaluate(x, true);
    double rho[3];
    loss.evaluate(2.0 * base.cost, rho);
    CHECK(robust.cost == doctest::Approx(0.5 * rho[0]).epsilon(1e-14));
    CHECK((robust.gauss_newton - rho[1] * base.gauss_newton).norm() <= 1e-12 * base.gauss_newton.norm());
    CHECK((robust.gradient - rho[1] * base.gradient).norm() <= 1e-12 * base.gradient.norm());
  }
}

TEST_CASE("a loss is runtime data: losses and scales never recompile") {
  compiler::KernelCache cache(lsjit::testing::memory_only());  // its own, to count compiles
  const AnalyzeOptions a = lsjit::testing::analyze_with(cache);
  Problem p1, p2;
  p1.add(fit, CauchyLoss(1.0), VecVar<2>(0), Eigen::Vector2d(1, 2));
  p2.add(fit, HuberLoss(3.0), VecVar<2>(0), Eigen::Vector2d(1, 2));
  p2.add(fit, VecVar<2>(1), Eigen::Vector2d(1, 2));
  p1.analyze(a);
  const uint64_t compiles = cache.stats().compiles;
  const AnalyzedProblem a2 = p2.analyze(a);
  CHECK(cache.stats().compiles == compiles);
  CHECK(a2.groups().size() == 1);
}

namespace {

// A generated SE2 graph (200 poses, `closures` loop closures, σ = 0.02) with every fourth
// loop closure moved by up to `offset` (metres, and offset/3 radians), solved with `loss`
// from the drifted odometry estimate; the largest position error against the truth.
double outlier_error(const Loss& loss, double offset, int closures) {
  io::PoseGraphSpec spec;
  spec.dimension = 2;
  spec.poses = 200;
  spec.loop_closures = closures;
  spec.seed = 21;
  io::GeneratedPoseGraph g = io::generate_pose_graph(spec);
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (size_t k = static_cast<size_t>(spec.poses - 1); k < g.graph.edges2.size(); k += 4)
    g.graph.edges2[k].measurement =
        g.graph.edges2[k].measurement * SE2d::from_xy_theta(offset * u(rng), offset * u(rng), offset / 3 * u(rng));
  PoseGraphProblem p = make_pose_graph_problem(g.graph, loss);
  // Huber converges slowly here (its Gauss-Newton model is the reweighted one, β = 0): run
  // to a tight function tolerance.
  SolverOptions o;
  o.max_iterations = 1000;
  o.function_tolerance = 1e-12;
  const SolveResult r = p.problem.analyze(lsjit::testing::analyze_with()).solve(p.initial, o);
  CAPTURE(r.summary.report());
  CHECK(r.summary.usable());
  double worst = 0;
  for (size_t k = 0; k < g.graph.vertex_ids.size(); ++k) {
    const SE2d x = r.values.get(SE2Var(g.graph.vertex_ids[k]));
    worst = std::max(worst, (x.translation() - g.truth2[k].translation()).norm());
  }
  return worst;
}

}  // namespace

TEST_CASE("outlier loop closures: recovered with Cauchy and Huber, not without") {
  // 400 loop closures, every fourth moved by up to 1.5 m (75 σ). Without outliers the
  // solution is within 0.18 of the truth.
  CHECK(outlier_error(TrivialLoss(), 0.0, 400) < 0.2);
  CHECK(outlier_error(TrivialLoss(), 1.5, 400) > 1.0);
  CHECK(outlier_error(HuberLoss(1.0), 1.5, 400) < 0.25);
  CHECK(outlier_error(CauchyLoss(1.0), 1.5, 400) < 0.25);
  // With only 60 loop closures the loops are long and soft: a constant pull of one σ per
  // outlier (Huber's) still bends them by metres, and only a redescending loss recovers.
  CHECK(outlier_error(TrivialLoss(), 1.5, 60) > 1.0);
  CHECK(outlier_error(CauchyLoss(1.0), 1.5, 60) < 0.25);
}

TEST_CASE("a loss's scale is in [1e-150, 1e150]: its square stays a normal double") {
  for (auto make : {&HuberLoss, &SoftLOneLoss, &CauchyLoss, &ArctanLoss, &TukeyLoss}) {
    for (const double bad : {0.0, -1.0, 4e-324, 1e-151, 1e151, 1e308, std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN()}) {
      CAPTURE(bad);
      CHECK_THROWS_WITH_AS(make(bad), doctest::Contains("must be in [1e-150, 1e150]"), lsjit::Error);
    }
    for (const double good : {kMinLossScale, 1.0, kMaxLossScale}) {
      const Loss loss = make(good);
      double rho[3];
      for (const double s : {0.0, good * good, 1e6 * good * good}) {
        loss.evaluate(s, rho);
        CHECK(std::isfinite(rho[0]));
        CHECK(std::isfinite(rho[1]));
      }
    }
  }
}
