// Lie-group variables through Ceres: lsjit::ceres_manifold's Plus, Minus and Jacobians;
// the ambient Jacobians of wrapped costs (against AutoDiff, finite differences and lsjit's
// own tangent Jacobian); pose graphs solved by Ceres reaching lsjit's final cost.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "lsjit/lsjit.h"
#include "ceres_test_support.h"  // last: see its CHECK

namespace {

using lsjit::testing::scaled_difference;
using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <class Var>
using Group = typename Var::template Value<double>;
template <class Var>
using Params = Eigen::Matrix<double, Var::kAmbient, 1>;
template <class Var>
using Tangent = Eigen::Matrix<double, Var::kTangent, 1>;

// A pseudo-random element: exp of a tangent vector with entries in [-scale, scale].
template <class Var>
Group<Var> random_element(double scale = 1.0) {
  return Group<Var>::exp(scale * Tangent<Var>::Random());
}

template <class Var>
RowMajor plus_jacobian(const ceres::Manifold& m, const double* x) {
  RowMajor j(Var::kAmbient, Var::kTangent);
  REQUIRE(m.PlusJacobian(x, j.data()));
  return j;
}

template <class Var>
void check_manifold() {
  std::unique_ptr<ceres::Manifold> m(lsjit::ceres_manifold<Var>());
  CHECK(m->AmbientSize() == Var::kAmbient);
  CHECK(m->TangentSize() == Var::kTangent);
  for (int trial = 0; trial < 5; ++trial) {
    const Params<Var> x = random_element<Var>().params();
    const double h = 1e-6;

    Params<Var> y;
    REQUIRE(m->Plus(x.data(), Tangent<Var>::Zero().eval().data(), y.data()));
    CHECK((y - x).cwiseAbs().maxCoeff() <= 1e-15);

    // Minus inverts Plus.
    const Tangent<Var> delta = 0.3 * Tangent<Var>::Random();
    REQUIRE(m->Plus(x.data(), delta.data(), y.data()));
    Tangent<Var> back;
    REQUIRE(m->Minus(y.data(), x.data(), back.data()));
    CHECK((back - delta).cwiseAbs().maxCoeff() <= 1e-12);

    // PlusJacobian: central differences of Plus.
    const RowMajor pj = plus_jacobian<Var>(*m, x.data());
    for (int k = 0; k < Var::kTangent; ++k) {
      Params<Var> up, down;
      const Tangent<Var> e = h * Tangent<Var>::Unit(k);
      REQUIRE(m->Plus(x.data(), e.data(), up.data()));
      REQUIRE(m->Plus(x.data(), (-e).eval().data(), down.data()));
      CHECK(((up - down) / (2 * h) - pj.col(k)).cwiseAbs().maxCoeff() <= 1e-8);
    }

    // MinusJacobian: central differences of Minus(·, x) along the ambient axes, and a
    // left inverse of PlusJacobian.
    RowMajor mj(Var::kTangent, Var::kAmbient);
    REQUIRE(m->MinusJacobian(x.data(), mj.data()));
    for (int k = 0; k < Var::kAmbient; ++k) {
      Tangent<Var> up, down;
      const Params<Var> xp = x + h * Params<Var>::Unit(k), xm = x - h * Params<Var>::Unit(k);
      REQUIRE(m->Minus(xp.data(), x.data(), up.data()));
      REQUIRE(m->Minus(xm.data(), x.data(), down.data()));
      CHECK(((up - down) / (2 * h) - mj.col(k)).cwiseAbs().maxCoeff() <= 1e-8);
    }
    const RowMajor identity = mj * pj;
    CHECK((identity - RowMajor::Identity(Var::kTangent, Var::kTangent)).cwiseAbs().maxCoeff() <= 1e-12);
  }
}

// lsjit's own tangent-space Jacobians of `traced` (lsjit::trace) at one instance.
std::vector<RowMajor> tangent_jacobians(const lsjit::ir::Trace& traced, const std::vector<const double*>& values,
                                        const std::vector<double>& data) {
  const auto kernel = lsjit::compiler::default_cache().get(traced, lsjit::compiler::KernelMode::ResidualJacobian);
  const uint32_t rows = traced.signature.residual_dim;
  std::vector<double> residual(rows);
  std::vector<RowMajor> jacobians;
  std::vector<double*> outputs{residual.data()};
  for (const auto& v : traced.signature.vars) jacobians.emplace_back(rows, v.tangent);
  for (auto& j : jacobians) outputs.push_back(j.data());
  lsjit::detail::run_one_instance(*kernel, values.data(), data.data(), outputs.data());
  return jacobians;
}

template <class Var>
std::vector<double> flattened(const Group<Var>& z, const auto& U) {
  std::vector<double> data;
  lsjit::detail::flatten_data(data, z);
  lsjit::detail::flatten_data(data, U);
  return data;
}

// An upper triangular square-root information with a positive diagonal.
template <int N>
Eigen::Matrix<double, N, N> random_sqrt_information() {
  Eigen::Matrix<double, N, N> U = Eigen::Matrix<double, N, N>::Random().template triangularView<Eigen::Upper>();
  U.diagonal() = U.diagonal().cwiseAbs() + Eigen::Matrix<double, N, 1>::Constant(1.0);
  return U;
}

// GTSAM's BetweenFactor residual, through log: U·log(z⁻¹ a⁻¹ b).
template <class Var>
auto log_between_cost() {
  return lsjit::cost("ceres_log_between." + std::string(Var::kName),
                     [](const auto& v, Var a, Var b, const auto& z, const auto& U) {
                       return (U * (z.inverse() * v[a].inverse() * v[b]).log()).eval();
                     });
}

// For a Lie-group cost: the wrapped ambient Jacobians are the derivative of the double
// formula along the ambient axes, and projected by PlusJacobian they are lsjit's tangent
// Jacobians.
template <class Var>
void check_log_between_jacobians() {
  using Sqrt = Eigen::Matrix<double, Var::kTangent, Var::kTangent>;
  const auto cost = log_between_cost<Var>();
  std::unique_ptr<ceres::Manifold> manifold(lsjit::ceres_manifold<Var>());
  for (int trial = 0; trial < 5; ++trial) {
    const Group<Var> a = random_element<Var>(), b = random_element<Var>(), z = random_element<Var>(0.3);
    const Sqrt U = random_sqrt_information<Var::kTangent>();
    std::unique_ptr<ceres::CostFunction> f(lsjit::ceres_cost_function(cost, Var(), Var(), z, U));
    const Params<Var> pa = a.params(), pb = b.params();
    const std::vector<const double*> params{pa.data(), pb.data()};
    std::vector<std::vector<double>> ambient;
    const std::vector<double> r = lsjit::testing::evaluate_all(*f, params, ambient);

    auto formula = [&](const Params<Var>& qa, const Params<Var>& qb) -> Tangent<Var> {
      return U * (z.inverse() * Var::template from_params<double>(qa).inverse() *
                  Var::template from_params<double>(qb))
                     .log();
    };
    const Tangent<Var> r_double = formula(pa, pb);
    for (int i = 0; i < Var::kTangent; ++i) CHECK(scaled_difference(r[i], r_double(i)) <= 1e-12);
    const double h = 1e-6;
    for (int slot = 0; slot < 2; ++slot) {
      const Eigen::Map<const RowMajor> j(ambient[slot].data(), Var::kTangent, Var::kAmbient);
      for (int k = 0; k < Var::kAmbient; ++k) {
        Params<Var> up_a = pa, down_a = pa, up_b = pb, down_b = pb;
        (slot == 0 ? up_a : up_b)(k) += h;
        (slot == 0 ? down_a : down_b)(k) -= h;
        const Tangent<Var> fd = (formula(up_a, up_b) - formula(down_a, down_b)) / (2 * h);
        CHECK((fd - j.col(k)).cwiseAbs().maxCoeff() <= 1e-6 * std::max(1.0, fd.cwiseAbs().maxCoeff()));
      }
    }

    const std::vector<RowMajor> tangent =
        tangent_jacobians(lsjit::trace(cost, Var(), Var(), z, U), params, flattened<Var>(z, U));
    for (int slot = 0; slot < 2; ++slot) {
      const Eigen::Map<const RowMajor> j(ambient[slot].data(), Var::kTangent, Var::kAmbient);
      const RowMajor projected = j * plus_jacobian<Var>(*manifold, params[slot]);
      for (Eigen::Index i = 0; i < projected.size(); ++i)
        CHECK(scaled_difference(projected.data()[i], tangent[slot].data()[i]) <= 1e-12);
    }
  }
}

// Solves a g2o graph with Ceres: one parameter block per vertex in lsjit's layout with
// ceres_manifold<Var>(), one wrapped between cost per edge, the held-constant vertices
// constant. Returns Ceres' summary.
template <class Var, class Edges>
ceres::Solver::Summary solve_with_ceres(const std::vector<Group<Var>>& poses, const Edges& edges,
                                        const lsjit::io::PoseGraph& graph, const auto& between) {
  std::vector<Params<Var>> blocks;
  for (const auto& p : poses) blocks.push_back(p.params());
  const auto index = graph.vertex_index();
  ceres::Problem problem;
  for (auto& b : blocks) problem.AddParameterBlock(b.data(), Var::kAmbient, lsjit::ceres_manifold<Var>());
  for (const auto& e : edges)
    problem.AddResidualBlock(lsjit::ceres_cost_function(between, Var(), Var(), e.measurement, e.sqrt_information),
                             nullptr, blocks[index.at(e.from)].data(), blocks[index.at(e.to)].data());
  for (int64_t id : graph.held_constant()) problem.SetParameterBlockConstant(blocks[index.at(id)].data());
  ceres::Solver::Options options = lsjit::testing::quiet_options(ceres::DENSE_QR);
  options.function_tolerance = 1e-14;
  options.gradient_tolerance = 1e-14;
  options.parameter_tolerance = 1e-14;
  options.max_num_iterations = 100;
  ceres::Solver::Summary summary;
  ceres::Solve(options, &problem, &summary);
  return summary;
}

lsjit::SolveSummary solve_with_lsjit(const lsjit::io::PoseGraph& graph) {
  lsjit::PoseGraphProblem p = lsjit::make_pose_graph_problem(graph);
  lsjit::SolverOptions options;
  options.function_tolerance = 1e-14;
  options.gradient_tolerance = 1e-14;
  options.parameter_tolerance = 1e-14;
  options.max_iterations = 100;
  options.linear_solver = lsjit::LinearSolver::DenseCholesky;
  return p.problem.analyze().solve(p.initial, options).summary;
}

lsjit::io::PoseGraph generated_graph(int dimension) {
  lsjit::io::PoseGraphSpec spec;
  spec.dimension = dimension;
  spec.poses = 60;
  spec.loop_closures = 15;
  spec.translation_sigma = 0.05;
  spec.rotation_sigma = 0.05;
  spec.seed = 4;
  return lsjit::io::generate_pose_graph(spec).graph;
}

}  // namespace

TEST_CASE("ceres_manifold: Plus, Minus and their Jacobians are consistent for SO2 SE2 SO3 SE3") {
  std::srand(3);
  SUBCASE("SO2") { check_manifold<lsjit::SO2Var>(); }
  SUBCASE("SE2") { check_manifold<lsjit::SE2Var>(); }
  SUBCASE("SO3") { check_manifold<lsjit::SO3Var>(); }
  SUBCASE("SE3") { check_manifold<lsjit::SE3Var>(); }
}

TEST_CASE("the wrapped SE3 between cost: ambient Jacobians equal AutoDiff's, projected ones lsjit's") {
  std::srand(5);
  const auto cost = lsjit::standard_costs::se3_between_cost();
  std::unique_ptr<ceres::Manifold> manifold(lsjit::ceres_manifold<lsjit::SE3Var>());
  for (int trial = 0; trial < 10; ++trial) {
    const lsjit::SE3d a = random_element<lsjit::SE3Var>(), b = random_element<lsjit::SE3Var>();
    const lsjit::SE3d z = random_element<lsjit::SE3Var>(0.3);
    const Eigen::Matrix<double, 6, 6> U = random_sqrt_information<6>();
    std::unique_ptr<ceres::CostFunction> wrapped(
        lsjit::ceres_cost_function(cost, lsjit::SE3Var(), lsjit::SE3Var(), z, U));
    ceres::AutoDiffCostFunction<lsjit::testing::Se3BetweenFunctor, 6, 7, 7> autodiff(
        new lsjit::testing::Se3BetweenFunctor{z.translation(), z.rotation().quaternion(), U});
    const Params<lsjit::SE3Var> pa = a.params(), pb = b.params();
    const std::vector<const double*> params{pa.data(), pb.data()};
    std::vector<std::vector<double>> jw, ja;
    const std::vector<double> rw = lsjit::testing::evaluate_all(*wrapped, params, jw);
    const std::vector<double> ra = lsjit::testing::evaluate_all(autodiff, params, ja);
    for (size_t i = 0; i < ra.size(); ++i) CHECK(scaled_difference(rw[i], ra[i]) <= 1e-12);
    for (size_t s = 0; s < ja.size(); ++s)
      for (size_t i = 0; i < ja[s].size(); ++i) CHECK(scaled_difference(jw[s][i], ja[s][i]) <= 1e-12);

    const std::vector<RowMajor> tangent = tangent_jacobians(
        lsjit::trace(cost, lsjit::SE3Var(), lsjit::SE3Var(), z, U), params, flattened<lsjit::SE3Var>(z, U));
    for (int s = 0; s < 2; ++s) {
      const Eigen::Map<const RowMajor> j(jw[s].data(), 6, 7);
      const RowMajor projected = j * plus_jacobian<lsjit::SE3Var>(*manifold, params[s]);
      for (Eigen::Index i = 0; i < projected.size(); ++i)
        CHECK(scaled_difference(projected.data()[i], tangent[s].data()[i]) <= 1e-12);
    }
  }
}

TEST_CASE("wrapped log-based between costs: ambient Jacobians are the formula's, projected ones lsjit's") {
  std::srand(7);
  SUBCASE("SO2") { check_log_between_jacobians<lsjit::SO2Var>(); }
  SUBCASE("SE2") { check_log_between_jacobians<lsjit::SE2Var>(); }
  SUBCASE("SO3") { check_log_between_jacobians<lsjit::SO3Var>(); }
  SUBCASE("SE3") { check_log_between_jacobians<lsjit::SE3Var>(); }
}

TEST_CASE("the ambient trace of a Lie-group cost names its slots TYPE.ambient, ambient = tangent") {
  const lsjit::ir::Trace t = lsjit::trace_ambient(lsjit::standard_costs::se3_between_cost(), lsjit::SE3Var(),
                                                  lsjit::SE3Var(), lsjit::SE3d(), Eigen::Matrix<double, 6, 6>::Zero());
  REQUIRE(t.signature.vars.size() == 2);
  for (const auto& v : t.signature.vars) {
    CHECK(v.type == "SE3.ambient");
    CHECK(v.ambient == 7);
    CHECK(v.tangent == 7);
  }
}

TEST_CASE("an SE3 pose graph solved by Ceres with the lsjit manifold and cost reaches lsjit's final cost") {
  const lsjit::io::PoseGraph graph = generated_graph(3);
  const lsjit::SolveSummary own = solve_with_lsjit(graph);
  const ceres::Solver::Summary ceres = solve_with_ceres<lsjit::SE3Var>(
      graph.poses3, graph.edges3, graph, lsjit::standard_costs::se3_between_cost());
  CAPTURE(own.report());
  CAPTURE(ceres.FullReport());
  REQUIRE(own.usable());
  CHECK(ceres.termination_type == ceres::CONVERGENCE);
  CHECK(std::abs(ceres.initial_cost - own.initial_cost) <= 1e-12 * own.initial_cost);
  CHECK(own.final_cost < 0.1 * own.initial_cost);  // a real solve, not a no-op
  CHECK(std::abs(ceres.final_cost - own.final_cost) <= 1e-8 * own.final_cost);
}

TEST_CASE("an SE2 pose graph solved by Ceres with the lsjit manifold and cost reaches lsjit's final cost") {
  const lsjit::io::PoseGraph graph = generated_graph(2);
  const lsjit::SolveSummary own = solve_with_lsjit(graph);
  const ceres::Solver::Summary ceres = solve_with_ceres<lsjit::SE2Var>(
      graph.poses2, graph.edges2, graph, lsjit::standard_costs::se2_between_cost());
  CAPTURE(own.report());
  CAPTURE(ceres.FullReport());
  REQUIRE(own.usable());
  CHECK(ceres.termination_type == ceres::CONVERGENCE);
  CHECK(std::abs(ceres.initial_cost - own.initial_cost) <= 1e-12 * own.initial_cost);
  CHECK(own.final_cost < 0.1 * own.initial_cost);  // a real solve, not a no-op
  CHECK(std::abs(ceres.final_cost - own.final_cost) <= 1e-8 * own.final_cost);
}
