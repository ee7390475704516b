// Covariance of a robust fit against ceres::Covariance on the same problem at the same
// point, with the loss applied (both libraries' default) and without
// (apply_loss_function = false). Before, lsjit always applied the loss and the docs did
// not say so: a calibration's σ_fx read 17.36 with the loss and 16.75 without.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "lsjit/lsjit.h"
#include "ceres_test_support.h"  // last: see its CHECK

namespace ceres_covariance_loss_test {
namespace {

using Data = lsjit::testing::CurveData;

// Ceres' curve-fitting data with a few gross outliers, which the Cauchy loss turns down.
Data robust_curve_data() { return lsjit::testing::curve_data(60, 11, /*outlier=*/3.0); }

// [var(m) cov(m, c); cov(c, m) var(c)] from Ceres at (m, c).
Eigen::Matrix2d ceres_covariance(const Data& d, double m, double c, double loss_scale, bool apply_loss) {
  ceres::Problem problem;
  for (size_t i = 0; i < d.x.size(); ++i)
    problem.AddResidualBlock(new ceres::AutoDiffCostFunction<lsjit::testing::ExponentialFunctor, 1, 1, 1>(
                                 new lsjit::testing::ExponentialFunctor{d.x[i], d.y[i]}),
                             new ceres::CauchyLoss(loss_scale), &m, &c);
  ceres::Covariance::Options options;
  options.algorithm_type = ceres::DENSE_SVD;
  options.apply_loss_function = apply_loss;
  ceres::Covariance covariance(options);
  const std::vector<std::pair<const double*, const double*>> blocks = {{&m, &m}, {&m, &c}, {&c, &c}};
  REQUIRE(covariance.Compute(blocks, &problem));
  Eigen::Matrix2d C;
  covariance.GetCovarianceBlock(&m, &m, &C(0, 0));
  covariance.GetCovarianceBlock(&m, &c, &C(0, 1));
  covariance.GetCovarianceBlock(&c, &c, &C(1, 1));
  C(1, 0) = C(0, 1);
  return C;
}

}  // namespace

TEST_CASE("covariance with a robust loss equals Ceres', with the loss applied and without") {
  const Data d = robust_curve_data();
  constexpr double kScale = 0.5;
  auto exponential = lsjit::cost("covariance_loss_exponential",
                                 [](const auto& v, lsjit::ScalarVar m, lsjit::ScalarVar c, const auto& x,
                                    const auto& y) { return y - exp(v[m] * x + v[c]); });
  lsjit::Problem p;
  p.add(exponential, lsjit::CauchyLoss(kScale), lsjit::ScalarVar(0), lsjit::ScalarVar(1), d.x, d.y);
  lsjit::Values start;
  start.set(lsjit::ScalarVar(0), 0.0);
  start.set(lsjit::ScalarVar(1), 0.0);
  const lsjit::AnalyzedProblem analyzed = p.analyze();
  const lsjit::SolveResult r = analyzed.solve(start);
  REQUIRE(lsjit::converged(r.summary.termination));
  const double m = r.values.get(lsjit::ScalarVar(0)), c = r.values.get(lsjit::ScalarVar(1));

  Eigen::Matrix2d ours[2];
  for (bool apply : {true, false}) {
    CAPTURE(apply);
    lsjit::CovarianceOptions options;
    options.apply_loss_function = apply;
    const lsjit::Covariance cov = lsjit::compute_covariance(
        analyzed, r.values,
        {{lsjit::ScalarVar(0), lsjit::ScalarVar(0)}, {lsjit::ScalarVar(0), lsjit::ScalarVar(1)},
         {lsjit::ScalarVar(1), lsjit::ScalarVar(1)}},
        options);
    Eigen::Matrix2d C;
    C(0, 0) = cov.block(lsjit::ScalarVar(0))(0, 0);
    C(0, 1) = C(1, 0) = cov.block(lsjit::ScalarVar(0), lsjit::ScalarVar(1))(0, 0);
    C(1, 1) = cov.block(lsjit::ScalarVar(1))(0, 0);
    const Eigen::Matrix2d reference = ceres_covariance(d, m, c, kScale, apply);
    CAPTURE(C);
    CAPTURE(reference);
    CHECK((C - reference).norm() <= 1e-8 * reference.norm());
    ours[apply] = C;
  }
  // The outliers are what the loss turns down: the two answers differ, by far more than
  // the tolerance above.
  CHECK((ours[true] - ours[false]).norm() > 1e-2 * ours[false].norm());
}

}  // namespace ceres_covariance_loss_test
