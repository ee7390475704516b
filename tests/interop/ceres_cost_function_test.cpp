// lsjit::ceres_cost_function on Euclidean variables: what Ceres sees of a wrapped cost
// (sizes, residuals, Jacobians) equals what an AutoDiffCostFunction of the same cost gives,
// and Ceres solves a problem the same way with either.
#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <vector>

#include "lsjit/lsjit.h"
#include "ceres_test_support.h"  // last: see its CHECK

namespace {

using lsjit::testing::scaled_difference;

lsjit::io::BalProblem small_bal() {
  lsjit::io::BalSpec spec;
  spec.cameras = 6;
  spec.points = 120;
  spec.observations_per_point = 3;
  spec.seed = 11;
  return lsjit::io::generate_bal(spec).initial;
}

struct BalArrays {
  std::vector<std::array<double, 9>> cameras;
  std::vector<std::array<double, 3>> points;
  explicit BalArrays(const lsjit::io::BalProblem& bal) {
    for (const auto& c : bal.cameras) cameras.push_back({c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7), c(8)});
    for (const auto& p : bal.points) points.push_back({p(0), p(1), p(2)});
  }
};

ceres::CostFunction* autodiff_snavely(const Eigen::Vector2d& xy) {
  return new ceres::AutoDiffCostFunction<lsjit::testing::SnavelyFunctor, 2, 9, 3>(
      new lsjit::testing::SnavelyFunctor{xy(0), xy(1)});
}

ceres::CostFunction* wrapped_snavely(const Eigen::Vector2d& xy) {
  return lsjit::ceres_cost_function(lsjit::standard_costs::snavely_cost(), lsjit::VecVar<9>(),
                                    lsjit::VecVar<3>(), xy);
}

ceres::Solver::Summary solve_bal(const lsjit::io::BalProblem& bal, bool wrapped, BalArrays& arrays) {
  ceres::Problem problem;
  for (const auto& o : bal.observations)
    problem.AddResidualBlock(wrapped ? wrapped_snavely(o.xy) : autodiff_snavely(o.xy), nullptr,
                             arrays.cameras[o.camera].data(), arrays.points[o.point].data());
  ceres::Solver::Options options = lsjit::testing::quiet_options(ceres::DENSE_SCHUR);
  ceres::Solver::Summary summary;
  ceres::Solve(options, &problem, &summary);
  return summary;
}

using lsjit::testing::CurveData;
// Ceres' curve-fitting data (ceres_test_support.h), 67 points.
CurveData curve_data() { return lsjit::testing::curve_data(67, 5); }

// The port of ExponentialFunctor (docs/porting_from_ceres.md): the members x and y became
// data arguments.
auto exponential_cost() {
  return lsjit::cost("exponential", [](const auto& v, lsjit::ScalarVar m, lsjit::ScalarVar c, const auto& x,
                                       const auto& y) { return y - exp(v[m] * x + v[c]); });
}

// docs/porting_from_ceres.md, section 1, as written there.
auto documented_reprojection() {
  return lsjit::cost("reprojection",
      [](const auto& v, lsjit::VecVar<9> camera, lsjit::VecVar<3> point, const auto& observed) {
        using S = lsjit::Sym;
        const Eigen::Matrix<S, 9, 1> cam = v[camera];
        const Eigen::Matrix<S, 3, 1> P =
            lsjit::standard_costs::angle_axis_rotate<S>(cam.head<3>(), v[point]) + cam.segment<3>(3);
        const S xp = -P(0) / P(2), yp = -P(1) / P(2);
        const S r2 = xp * xp + yp * yp;
        const S distortion = 1.0 + r2 * (cam(7) + cam(8) * r2);
        return Eigen::Matrix<S, 2, 1>(cam(6) * distortion * xp - observed(0),
                                      cam(6) * distortion * yp - observed(1));
      });
}

// A residual truncated at a threshold: Ceres branches with `if`, lsjit with select.
struct TruncatedFunctor {
  double threshold;
  template <class T>
  bool operator()(const T* x, T* residual) const {
    const T d = 2.0 * x[0] - 1.0;
    if (d < T(threshold)) residual[0] = d;
    else residual[0] = T(threshold);
    return true;
  }
};
auto truncated_cost() {
  return lsjit::cost("truncated", [](const auto& v, lsjit::ScalarVar x, const auto& threshold) {
    const lsjit::Sym d = 2.0 * v[x] - 1.0;
    return lsjit::select(d < threshold, d, threshold);
  });
}

}  // namespace

TEST_CASE("the ports in docs/porting_from_ceres.md equal Ceres' functors") {
  const lsjit::io::BalProblem bal = small_bal();
  BalArrays arrays(bal);
  double worst = 0;
  for (const auto& o : bal.observations) {
    std::unique_ptr<ceres::CostFunction> ported(lsjit::ceres_cost_function(
        documented_reprojection(), lsjit::VecVar<9>(), lsjit::VecVar<3>(), o.xy));
    std::unique_ptr<ceres::CostFunction> autodiff(autodiff_snavely(o.xy));
    const std::vector<const double*> params{arrays.cameras[o.camera].data(), arrays.points[o.point].data()};
    std::vector<std::vector<double>> jp, ja;
    const std::vector<double> rp = lsjit::testing::evaluate_all(*ported, params, jp);
    const std::vector<double> ra = lsjit::testing::evaluate_all(*autodiff, params, ja);
    for (size_t i = 0; i < ra.size(); ++i) worst = std::max(worst, scaled_difference(rp[i], ra[i]));
    for (size_t b = 0; b < ja.size(); ++b)
      for (size_t i = 0; i < ja[b].size(); ++i) worst = std::max(worst, scaled_difference(jp[b][i], ja[b][i]));
  }
  CHECK(worst <= 1e-12);

  // Both sides of the select, and its derivative (2 below the threshold, 0 above).
  for (double x : {0.2, 0.9, 3.0}) {
    CAPTURE(x);
    std::unique_ptr<ceres::CostFunction> ported(lsjit::ceres_cost_function(truncated_cost(), lsjit::ScalarVar(), 1.0));
    ceres::AutoDiffCostFunction<TruncatedFunctor, 1, 1> autodiff(new TruncatedFunctor{1.0});
    std::vector<std::vector<double>> jp, ja;
    const std::vector<double> rp = lsjit::testing::evaluate_all(*ported, {&x}, jp);
    const std::vector<double> ra = lsjit::testing::evaluate_all(autodiff, {&x}, ja);
    CHECK(rp[0] == ra[0]);
    CHECK(jp[0][0] == ja[0][0]);
  }
}

TEST_CASE("ceres_cost_function reports the ambient block sizes and the residual dimension") {
  std::unique_ptr<ceres::CostFunction> f(wrapped_snavely(Eigen::Vector2d(1, 2)));
  CHECK(f->num_residuals() == 2);
  CHECK((f->parameter_block_sizes() == std::vector<int32_t>{9, 3}));

  std::unique_ptr<ceres::CostFunction> se3(lsjit::ceres_cost_function(
      lsjit::standard_costs::se3_between_cost(), lsjit::SE3Var(), lsjit::SE3Var(), lsjit::SE3d(),
      Eigen::Matrix<double, 6, 6>::Identity().eval()));
  CHECK(se3->num_residuals() == 6);
  CHECK((se3->parameter_block_sizes() == std::vector<int32_t>{7, 7}));
}

TEST_CASE("wrapped BAL residuals and Jacobians equal Ceres AutoDiff's to 1e-12") {
  const lsjit::io::BalProblem bal = small_bal();
  BalArrays arrays(bal);
  double worst = 0;
  for (const auto& o : bal.observations) {
    std::unique_ptr<ceres::CostFunction> wrapped(wrapped_snavely(o.xy)), autodiff(autodiff_snavely(o.xy));
    const std::vector<const double*> params{arrays.cameras[o.camera].data(), arrays.points[o.point].data()};
    std::vector<std::vector<double>> jw, ja;
    const std::vector<double> rw = lsjit::testing::evaluate_all(*wrapped, params, jw);
    const std::vector<double> ra = lsjit::testing::evaluate_all(*autodiff, params, ja);
    for (size_t i = 0; i < ra.size(); ++i) worst = std::max(worst, scaled_difference(rw[i], ra[i]));
    for (size_t b = 0; b < ja.size(); ++b)
      for (size_t i = 0; i < ja[b].size(); ++i) worst = std::max(worst, scaled_difference(jw[b][i], ja[b][i]));
  }
  CHECK(worst <= 1e-12);
}

TEST_CASE("Evaluate computes residuals alone and skips the Jacobians of constant blocks") {
  const lsjit::io::BalProblem bal = small_bal();
  BalArrays arrays(bal);
  const auto& o = bal.observations[7];
  std::unique_ptr<ceres::CostFunction> wrapped(wrapped_snavely(o.xy)), autodiff(autodiff_snavely(o.xy));
  const double* params[] = {arrays.cameras[o.camera].data(), arrays.points[o.point].data()};

  double r_alone[2], r_ref[2];
  REQUIRE(wrapped->Evaluate(params, r_alone, nullptr));
  REQUIRE(autodiff->Evaluate(params, r_ref, nullptr));
  for (int i = 0; i < 2; ++i) CHECK(scaled_difference(r_alone[i], r_ref[i]) <= 1e-12);

  // The camera held constant: Ceres passes a null Jacobian block for it.
  double r[2], j_point[6], j_point_ref[6];
  double* jacobians[] = {nullptr, j_point};
  double* jacobians_ref[] = {nullptr, j_point_ref};
  REQUIRE(wrapped->Evaluate(params, r, jacobians));
  REQUIRE(autodiff->Evaluate(params, r_ref, jacobians_ref));
  for (int i = 0; i < 2; ++i) CHECK(r[i] == r_alone[i]);
  for (int i = 0; i < 6; ++i) CHECK(scaled_difference(j_point[i], j_point_ref[i]) <= 1e-12);
}

TEST_CASE("Evaluate returns false when a residual is not finite") {
  std::unique_ptr<ceres::CostFunction> f(wrapped_snavely(Eigen::Vector2d(1, 2)));
  const double camera[9] = {0, 0, 0, 0, 0, 0, 500, 0, 0};
  const double point[3] = {0, 0, 0};  // at the camera centre: P.z = 0
  const double* params[] = {camera, point};
  double r[2];
  CHECK_FALSE(f->Evaluate(params, r, nullptr));
  const double finite_point[3] = {0.1, 0.2, -3.0};
  params[1] = finite_point;
  CHECK(f->Evaluate(params, r, nullptr));
}

TEST_CASE("a BAL problem solved by Ceres with AutoDiff and with the wrapped cost: same iterations and cost") {
  const lsjit::io::BalProblem bal = small_bal();
  BalArrays autodiff_arrays(bal), wrapped_arrays(bal);
  const ceres::Solver::Summary a = solve_bal(bal, false, autodiff_arrays);
  const ceres::Solver::Summary w = solve_bal(bal, true, wrapped_arrays);
  CAPTURE(a.BriefReport());
  CAPTURE(w.BriefReport());
  REQUIRE(a.termination_type == ceres::CONVERGENCE);
  CHECK(w.termination_type == ceres::CONVERGENCE);
  CHECK(a.final_cost < 1e-2 * a.initial_cost);  // a real solve, not a no-op
  CHECK(std::abs(w.initial_cost - a.initial_cost) <= 1e-10 * a.initial_cost);
  CHECK(std::abs(w.final_cost - a.final_cost) <= 1e-10 * a.final_cost);
  CHECK(w.iterations.size() == a.iterations.size());
  CHECK(w.num_successful_steps == a.num_successful_steps);
}

TEST_CASE("a curve fit solved by Ceres with AutoDiff and with a ported lsjit cost: same iterations and result") {
  const CurveData d = curve_data();
  auto solve = [&](bool wrapped, double& m, double& c) {
    m = 0;
    c = 0;
    ceres::Problem problem;
    for (size_t i = 0; i < d.x.size(); ++i) {
      ceres::CostFunction* f =
          wrapped ? lsjit::ceres_cost_function(exponential_cost(), lsjit::ScalarVar(), lsjit::ScalarVar(), d.x[i], d.y[i])
                  : new ceres::AutoDiffCostFunction<lsjit::testing::ExponentialFunctor, 1, 1, 1>(
                        new lsjit::testing::ExponentialFunctor{d.x[i], d.y[i]});
      problem.AddResidualBlock(f, nullptr, &m, &c);
    }
    ceres::Solver::Summary summary;
    ceres::Solve(lsjit::testing::quiet_options(ceres::DENSE_QR), &problem, &summary);
    return summary;
  };
  double ma, ca, mw, cw;
  const ceres::Solver::Summary a = solve(false, ma, ca);
  const ceres::Solver::Summary w = solve(true, mw, cw);
  CAPTURE(a.BriefReport());
  CAPTURE(w.BriefReport());
  REQUIRE(a.termination_type == ceres::CONVERGENCE);
  CHECK(std::abs(ma - 0.3) < 0.05);
  CHECK(std::abs(ca - 0.1) < 0.1);
  CHECK(std::abs(w.final_cost - a.final_cost) <= 1e-10 * a.final_cost);
  CHECK(w.iterations.size() == a.iterations.size());
  CHECK(std::abs(mw - ma) <= 1e-10);
  CHECK(std::abs(cw - ca) <= 1e-10);
}

TEST_CASE("residual blocks of one cost object share its kernels: no trace, lookup or compile per block") {
  const auto cost = lsjit::standard_costs::snavely_cost();
  std::unique_ptr<lsjit::CeresCostFunction> first(static_cast<lsjit::CeresCostFunction*>(
      lsjit::ceres_cost_function(cost, lsjit::VecVar<9>(), lsjit::VecVar<3>(), Eigen::Vector2d(0, 0))));
  const lsjit::compiler::CacheStats before = lsjit::compiler::default_cache().stats();
  for (int i = 0; i < 200; ++i) {
    std::unique_ptr<lsjit::CeresCostFunction> f(static_cast<lsjit::CeresCostFunction*>(
        lsjit::ceres_cost_function(cost, lsjit::VecVar<9>(), lsjit::VecVar<3>(), Eigen::Vector2d(i, -i))));
    CHECK(&f->jacobian_kernel() == &first->jacobian_kernel());
    CHECK(&f->residual_kernel() == &first->residual_kernel());
  }
  const lsjit::compiler::CacheStats after = lsjit::compiler::default_cache().stats();
  CHECK(after.gets == before.gets);
  CHECK(after.compiles == before.compiles);
}

TEST_CASE("closures capturing different constants get different kernels") {
  auto scaled = [](double s) {
    return lsjit::cost("ceres_scaled", [s](const auto& v, lsjit::ScalarVar x) { return s * v[x]; });
  };
  std::unique_ptr<ceres::CostFunction> two(lsjit::ceres_cost_function(scaled(2.0), lsjit::ScalarVar()));
  std::unique_ptr<ceres::CostFunction> three(lsjit::ceres_cost_function(scaled(3.0), lsjit::ScalarVar()));
  const double x = 1.5;
  const double* params[] = {&x};
  double r, j;
  double* jacobians[] = {&j};
  REQUIRE(two->Evaluate(params, &r, jacobians));
  CHECK(r == 3.0);
  CHECK(j == 2.0);
  REQUIRE(three->Evaluate(params, &r, jacobians));
  CHECK(r == 4.5);
  CHECK(j == 3.0);
}

TEST_CASE("for Euclidean variables the ambient trace is the ordinary one, so kernels are shared with Problem") {
  const auto snavely = lsjit::standard_costs::snavely_cost();
  const lsjit::ir::Trace ambient = lsjit::trace_ambient(snavely, lsjit::VecVar<9>(), lsjit::VecVar<3>(), Eigen::Vector2d::Zero());
  const lsjit::ir::Trace ordinary = lsjit::trace(snavely, lsjit::VecVar<9>(), lsjit::VecVar<3>(), Eigen::Vector2d::Zero());
  CHECK(ambient.signature == ordinary.signature);
  CHECK(ambient.graph == ordinary.graph);
  CHECK(lsjit::ir::structural_hash(ambient).hex() == lsjit::ir::structural_hash(ordinary).hex());
}

TEST_CASE("ceres_cost_function rejects constraint costs") {
  const auto equality = lsjit::cost(
      "ceres_equality", [](const auto& v, lsjit::ScalarVar x) { return v[x] - 1.0; }, lsjit::CostKind::Equality);
  CHECK_THROWS_AS(lsjit::ceres_cost_function(equality, lsjit::ScalarVar()), lsjit::Error);
}

TEST_CASE("iteration counts: lsjit counts the step on which a tolerance fires, Ceres does not") {
  // docs/porting_from_ceres.md ("Iteration counts"): Ceres returns as soon as its function
  // or parameter tolerance holds, without taking that step or recording that iteration;
  // lsjit takes the step when it lowers the cost and counts it. Same problem, same options.
  const CurveData d = curve_data();
  double m = 0, c = 0;
  ceres::Problem problem;
  lsjit::Problem p;
  for (size_t i = 0; i < d.x.size(); ++i) {
    problem.AddResidualBlock(new ceres::AutoDiffCostFunction<lsjit::testing::ExponentialFunctor, 1, 1, 1>(
                                 new lsjit::testing::ExponentialFunctor{d.x[i], d.y[i]}),
                             nullptr, &m, &c);
    p.add(exponential_cost(), lsjit::ScalarVar(0), lsjit::ScalarVar(1), d.x[i], d.y[i]);
  }
  ceres::Solver::Summary ceres_summary;
  ceres::Solve(lsjit::testing::quiet_options(ceres::DENSE_QR), &problem, &ceres_summary);
  lsjit::Values initial;
  initial.set(lsjit::ScalarVar(0), 0.0);
  initial.set(lsjit::ScalarVar(1), 0.0);
  lsjit::SolverOptions options;
  options.linear_solver = lsjit::LinearSolver::DenseCholesky;
  options.very_successful_radius_growth = 1;  // Ceres' schedule, step for step
  const lsjit::SolveSummary s = p.analyze().solve(initial, options).summary;
  CAPTURE(ceres_summary.FullReport());
  CAPTURE(s.report());
  REQUIRE(ceres_summary.termination_type == ceres::CONVERGENCE);
  REQUIRE(s.termination == lsjit::Termination::FunctionTolerance);
  // Ceres' iterations hold iteration 0 and every iteration but the last; lsjit's every
  // iteration but iteration 0. Ceres counts iteration 0 as a successful step, lsjit the
  // last step, which it took.
  CHECK(s.iterations == static_cast<int>(ceres_summary.iterations.size()));
  CHECK(s.iterations == ceres_summary.num_successful_steps + ceres_summary.num_unsuccessful_steps);
  CHECK(s.successful_steps == ceres_summary.num_successful_steps);
  CHECK(s.per_iteration.back().step_accepted);
  // The step Ceres did not take lowers the cost by at most function_tolerance of it.
  CHECK(s.final_cost <= ceres_summary.final_cost);
  CHECK(ceres_summary.final_cost - s.final_cost <= options.function_tolerance * ceres_summary.final_cost);
}
