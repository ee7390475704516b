// The gradient checker (runtime/gradient_checker.h): it passes on correct costs of every
// variable type, catches a Jacobian that is wrong in one entry and names that entry, and
// catches a residual that is not differentiable where it is checked.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>

#include "../support/memory_cache.h"
#include "lsjit/lsjit.h"

using namespace lsjit;

namespace {

// Every variable type in one problem: SE2 and SE3 pose graphs, BAL reprojections with the
// points far from the origin (large parameters, so the step must scale), SO3 and scalars.
struct Mixed {
  Problem problem;
  Values values;
};

Mixed mixed(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Mixed m;
  for (int i = 0; i < 4; ++i) {
    m.values.set(SE2Var(i), SE2d::exp(Eigen::Vector3d(u(rng), u(rng), 2 * u(rng))));
    m.values.set(SE3Var(i), SE3d::exp((Eigen::Matrix<double, 6, 1>() << 3 * u(rng), u(rng), u(rng), u(rng),
                                       u(rng), 2 * u(rng)).finished()));
  }
  for (int i = 0; i < 4; ++i) {
    const int j = (i + 1) % 4;
    const Eigen::Matrix3d U2 = Eigen::Matrix3d::Identity() * 1.5;
    m.problem.add(standard_costs::se2_between_cost(), SE2Var(i), SE2Var(j),
                  SE2d::exp(Eigen::Vector3d(u(rng), u(rng), u(rng))), U2);
    const Eigen::Matrix<double, 6, 6> U3 = Eigen::Matrix<double, 6, 6>::Identity() * 0.7;
    m.problem.add(standard_costs::se3_between_cost(), SE3Var(i), SE3Var(j),
                  SE3d::exp((Eigen::Matrix<double, 6, 1>() << u(rng), u(rng), u(rng), 0.3 * u(rng), 0.3 * u(rng),
                             0.3 * u(rng)).finished()),
                  U3);
  }
  // BAL: camera 0 looks down -z at points around z = -500.
  Eigen::Matrix<double, 9, 1> camera;
  camera << 0.01, -0.02, 0.03, 0.1, -0.2, 0.3, 400.0, -1e-7, 1e-13;
  m.values.set(VecVar<9>(0), camera);
  for (int p = 0; p < 5; ++p) {
    m.values.set(VecVar<3>(p), Eigen::Vector3d(30 * u(rng), 30 * u(rng), -500 + 20 * u(rng)));
    m.problem.add(standard_costs::snavely_cost(), VecVar<9>(0), VecVar<3>(p),
                  Eigen::Vector2d(10 * u(rng), 10 * u(rng)));
  }
  // A scalar and a rotation, through one cost.
  auto tilt = cost("checker_tilt", [](const auto& v, SO3Var r, ScalarVar s, const auto& axis) {
    return (v[r].act(axis) * v[s] - axis).eval();
  });
  m.values.set(SO3Var(0), SO3d::exp(Eigen::Vector3d(0.4, -0.3, 1.2)));
  m.values.set(ScalarVar(0), 1.7);
  m.problem.add(tilt, SO3Var(0), ScalarVar(0), Eigen::Vector3d(0.2, 0.5, -0.8));
  m.problem.set_constant(SE2Var(0));
  return m;
}

}  // namespace

TEST_CASE("the gradient checker passes every built-in and user cost, over every variable type") {
  std::mt19937_64 rng(5);
  Mixed m = mixed(rng);
  const AnalyzedProblem a = m.problem.analyze(lsjit::testing::analyze_with());
  GradientCheckOptions o;
  o.absolute_tolerance = 1e-6;  // BAL residuals are hundreds of pixels
  const GradientCheckResult check = a.check_gradients(m.values, o);
  CAPTURE(check.report());
  CHECK(check.passed);
  CHECK(check.failed_entries == 0);
  CHECK(check.instances == a.num_instances());
  // 4·3·6 (SE2) + 4·6·12 (SE3) + 5·2·12 (BAL) + 3·4 (tilt): every slot, constant ones too.
  CHECK(check.entries == 72 + 288 + 120 + 12);
  CHECK(check.worst.size() == o.max_reported);
  CHECK(check.max_relative_error < 1e-4);
  for (const GradientCheckEntry& e : check.worst) CHECK(e.excess <= 1.0);
  CHECK(check.report().find("Gradient check: passed") == 0);
}

TEST_CASE("the gradient checker catches a Jacobian wrong in one entry and names it") {
  std::mt19937_64 rng(6);
  Mixed m = mixed(rng);
  const AnalyzedProblem a = m.problem.analyze(lsjit::testing::analyze_with());
  const std::vector<CostInstance> all = a.all_instances();
  GradientCheckOptions o;
  o.absolute_tolerance = 1e-6;
  std::vector<InstanceEvaluation> analytic = a.evaluate_instances(m.values, all);
  const std::vector<InstanceEvaluation> numeric = a.finite_difference_jacobians(m.values, all);
  REQUIRE(compare_jacobians(analytic, numeric, o).passed);
  // A wrong derivative in one entry of an SE3 block: 1e-4 relative, far above the
  // tolerance and far below what a glance at the numbers would notice.
  size_t wrong = 0;
  while (analytic[wrong].blocks[0].type != "SE3") ++wrong;
  JacobianBlock& b = analytic[wrong].blocks[1];
  Eigen::Index row = 0, col = 0;
  b.jacobian.cwiseAbs().maxCoeff(&row, &col);
  REQUIRE(std::abs(b.jacobian(row, col)) > 0.1);
  b.jacobian(row, col) *= 1 + 1e-4;
  const GradientCheckResult check = compare_jacobians(analytic, numeric, o);
  CHECK_FALSE(check.passed);
  CHECK(check.failed_entries == 1);
  REQUIRE(!check.worst.empty());
  const GradientCheckEntry& e = check.worst[0];
  CHECK(e.which == analytic[wrong].which);
  CHECK(e.slot == 1);
  CHECK(e.type == "SE3");
  CHECK(e.id == b.id);
  CHECK(e.row == size_t(row));
  CHECK(e.col == size_t(col));
  CHECK(e.jacobian == b.jacobian(row, col));
  CHECK(e.relative_error == doctest::Approx(1e-4).epsilon(1e-2));
  CHECK(e.excess > 1);
  CHECK(check.worst[1].excess <= 1);
  CHECK(check.report().find("FAILED, 1 of 492") != std::string::npos);
  // A NaN in the Jacobian fails too.
  b.jacobian(row == 0 ? 1 : 0, 0) = std::nan("");
  CHECK(compare_jacobians(analytic, numeric, o).failed_entries == 2);
}

TEST_CASE("the gradient checker catches a residual checked where it is not differentiable") {
  // |x - 1| at x = 1 + 1e-7: lsjit's derivative is sign(x - 1) = 1, while the central
  // difference over ±1e-6 straddles the kink and sees 0.1. Away from it both agree.
  auto kink = cost("checker_kink", [](const auto& v, ScalarVar x) { return abs(v[x] - 1.0); }).named({"x"});
  Problem p;
  p.add(kink, ScalarVar(0));
  p.add(kink, ScalarVar(1));
  const AnalyzedProblem a = p.analyze(lsjit::testing::analyze_with());
  Values v;
  v.set(ScalarVar(0), 1.0 + 1e-7);
  v.set(ScalarVar(1), 3.0);
  const GradientCheckResult check = a.check_gradients(v);
  CAPTURE(check.report());
  CHECK_FALSE(check.passed);
  CHECK(check.failed_entries == 1);
  REQUIRE(check.worst.size() == 2);
  CHECK(check.worst[0].which == CostInstance{0, 0});
  CHECK(check.worst[0].cost == "checker_kink");
  CHECK(check.worst[0].jacobian == 1.0);
  CHECK(check.worst[0].finite_difference == doctest::Approx(0.1).epsilon(1e-6));
  CHECK(check.worst[1].excess <= 1);
  CHECK(check.worst[0].slot_name == "x");  // Cost::named's name for slot 0
  CHECK(check.report().find("'checker_kink' instance 0 Scalar 0 (slot 0 x) J(0,0)") != std::string::npos);
  // Checked away from the kink, the same cost passes.
  CHECK(a.check_gradients(v, {{0, 1}}).passed);
}

TEST_CASE("compare_jacobians refuses evaluations it cannot compare") {
  Problem p;
  auto sq = cost("checker_square", [](const auto& v, ScalarVar x) { return v[x] * v[x]; });
  p.add(sq, ScalarVar(0));
  p.add(sq, ScalarVar(1));
  const AnalyzedProblem a = p.analyze(lsjit::testing::analyze_with());
  Values v;
  v.set(ScalarVar(0), 2.0);
  v.set(ScalarVar(1), 3.0);
  const auto with = a.evaluate_instances(v, a.all_instances());
  const auto without = a.evaluate_instances(v, a.all_instances(), false);
  CHECK_THROWS_AS(compare_jacobians(with, without), Error);  // no Jacobians to compare
  CHECK_THROWS_AS(compare_jacobians(with, {with[0]}), Error);
  CHECK_THROWS_AS(compare_jacobians(with, {with[1], with[0]}), Error);
  CHECK(compare_jacobians(with, a.finite_difference_jacobians(v, a.all_instances())).passed);
  GradientCheckOptions bad;
  bad.relative_tolerance = -1;
  CHECK_THROWS_AS(a.check_gradients(v, bad), Error);
}

// A camera calibration as a user writes it: pinhole intrinsics (fx, fy, cx, cy), a camera
// pose and world points, residuals in pixels of a 640x480 image at the truth plus noise.
// Entries whose derivative is zero or nearly so (a pixel's u against the point's y) meet
// finite differences of pixel-sized values: rounding of ε·|u|/h ≈ 1e-7 with the default step.
TEST_CASE("the gradient checker's defaults pass a correct pixel reprojection cost") {
  auto pixel = cost("checker_pixel", [](const auto& v, VecVar<4> intrinsics, SE3Var pose, VecVar<3> point,
                                        const auto& uv) {
    using S = Sym;
    const Eigen::Matrix<S, 4, 1> k = v[intrinsics];
    const Eigen::Matrix<S, 3, 1> p = v[pose].inverse() * v[point];
    return Eigen::Matrix<S, 2, 1>(k(0) * p(0) / p(2) + k(2) - uv(0), k(1) * p(1) / p(2) + k(3) - uv(1));
  });
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Problem p;
  Values values;
  const Eigen::Vector4d k(525.0, 523.0, 319.5, 239.5);
  values.set(VecVar<4>(0), k);
  for (int c = 0; c < 6; ++c)
    values.set(SE3Var(c), SE3d::exp((Eigen::Matrix<double, 6, 1>() << 0.3 * u(rng), 0.3 * u(rng), -2.0 + 0.2 * u(rng),
                                     0.1 * u(rng), 0.1 * u(rng), 0.1 * u(rng)).finished()));
  for (int j = 0; j < 30; ++j) values.set(VecVar<3>(j), Eigen::Vector3d(0.8 * u(rng), 0.6 * u(rng), 0.3 * u(rng)));
  for (int c = 0; c < 6; ++c)
    for (int j = 0; j < 30; ++j) {
      const Eigen::Vector3d q = values.get(SE3Var(c)).inverse() * values.get(VecVar<3>(j));
      const Eigen::Vector2d uv(k(0) * q(0) / q(2) + k(2) + 0.5 * u(rng), k(1) * q(1) / q(2) + k(3) + 0.5 * u(rng));
      p.add(pixel, VecVar<4>(0), SE3Var(c), VecVar<3>(j), uv);
    }
  const AnalyzedProblem analyzed = p.analyze(lsjit::testing::analyze_with());
  const GradientCheckResult check = analyzed.check_gradients(values);
  CAPTURE(check.report());
  CHECK(check.passed);
}

// A residual computed with cancellation: (x + 1000)² − 10⁶ − 2000x = x², through
// intermediates of 10⁶, so its rounding noise is ε·10⁶ ≈ 2e-10 whatever its size, and the
// finite difference's ≈ 1e-4 at h = 1e-6. The measured noise, not |r|, sets the tolerance,
// and stays far below an error worth catching (1% of the derivative).
TEST_CASE("the gradient checker measures a residual's rounding noise, cancellation included") {
  auto cancel = cost("checker_cancel", [](const auto& v, ScalarVar x) {
    const Sym a = v[x] + 1000.0;
    return a * a - 1e6 - 2000.0 * v[x];
  });
  Problem p;
  p.add(cancel, ScalarVar(0));
  Values values;
  values.set(ScalarVar(0), 0.3);
  const GradientCheckResult check = p.analyze(lsjit::testing::analyze_with()).check_gradients(values);
  CAPTURE(check.report());
  CHECK(check.passed);
  REQUIRE(check.worst.size() == 1);
  CHECK(check.worst[0].rounding > 1e-6);  // the noise of 10⁶-sized intermediates, not of r ≈ 0.09
  CHECK(check.worst[0].rounding < 0.01 * 0.6);
}
