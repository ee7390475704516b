// compute_covariance: blocks of (JᵀJ)⁻¹ checked against inverses built independently in
// the test (a linear problem, finite differences of a curve fit), dense against sparse on
// pose graphs, and the errors that say why there is no covariance.
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "../support/memory_cache.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/lsjit.h"

using namespace lsjit;
using Algorithm = CovarianceOptions::Algorithm;

namespace {

CovarianceOptions with(Algorithm algorithm) {
  CovarianceOptions o;
  o.algorithm = algorithm;
  return o;
}

double relative_difference(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.cols() == b.cols());
  return (a - b).norm() / b.norm();
}

// The message of the lsjit::Error that f throws ("" if it throws none).
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Linear residuals over a chain of 2-vectors x_0..x_5 and a 3-vector z:
//   link  r = A x_i + B x_{i+1} − y     (3 rows, i = 0..4)
//   see   r = C z + D x_i − y           (3 rows, i = 0, 2, 4)
//   prior r = P x_0 − q                 (2 rows)
auto link_cost = cost("cov_link", [](const auto& v, VecVar<2> a, VecVar<2> b, const auto& A,
                                     const auto& B, const auto& y) {
  return (A * v[a] + B * v[b] - y).eval();
});
auto see_cost = cost("cov_see", [](const auto& v, VecVar<3> z, VecVar<2> x, const auto& C,
                                   const auto& D, const auto& y) {
  return (C * v[z] + D * v[x] - y).eval();
});
auto prior_cost = cost("cov_prior", [](const auto& v, VecVar<2> x, const auto& P, const auto& q) {
  return (P * v[x] - q).eval();
});

struct LinearProblem {
  Problem problem;
  Values values;
  Eigen::MatrixXd J;  // columns: x_i at 2i, z at 12 (the test's order, not lsjit's)
};

LinearProblem linear_problem(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  auto random = [&](int rows, int cols) {
    Eigen::MatrixXd m(rows, cols);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) m(r, c) = u(rng);
    return m;
  };
  LinearProblem p;
  std::vector<Eigen::MatrixXd> rows;  // J's rows, per residual block
  auto add_rows = [&](int n, std::vector<std::pair<int, Eigen::MatrixXd>> blocks) {
    Eigen::MatrixXd R = Eigen::MatrixXd::Zero(n, 15);
    for (auto& [col, M] : blocks) R.middleCols(col, M.cols()) = M;
    rows.push_back(R);
  };
  for (int i = 0; i < 5; ++i) {
    const Eigen::Matrix<double, 3, 2> A = random(3, 2), B = random(3, 2);
    const Eigen::Vector3d y = random(3, 1);
    p.problem.add(link_cost, VecVar<2>(i), VecVar<2>(i + 1), A, B, y);
    add_rows(3, {{2 * i, A}, {2 * i + 2, B}});
  }
  for (int i : {0, 2, 4}) {
    const Eigen::Matrix3d C = random(3, 3);
    const Eigen::Matrix<double, 3, 2> D = random(3, 2);
    const Eigen::Vector3d y = random(3, 1);
    p.problem.add(see_cost, VecVar<3>(0), VecVar<2>(i), C, D, y);
    add_rows(3, {{12, C}, {2 * i, D}});
  }
  const Eigen::Matrix2d P = random(2, 2);
  p.problem.add(prior_cost, VecVar<2>(0), P, Eigen::Vector2d(random(2, 1)));
  add_rows(2, {{0, P}});
  p.J.resize(0, 15);
  for (const Eigen::MatrixXd& R : rows) {
    p.J.conservativeResize(p.J.rows() + R.rows(), Eigen::NoChange);
    p.J.bottomRows(R.rows()) = R;
  }
  // Any point: a linear problem's JᵀJ does not depend on it.
  for (int i = 0; i < 6; ++i) p.values.set(VecVar<2>(i), Eigen::Vector2d(random(2, 1)));
  p.values.set(VecVar<3>(0), Eigen::Vector3d(random(3, 1)));
  return p;
}

template <class Var>
io::PoseGraph generated(int64_t poses, int64_t loops) {
  io::PoseGraphSpec spec;
  spec.dimension = std::is_same_v<Var, SE2Var> ? 2 : 3;
  spec.poses = poses;
  spec.loop_closures = loops;
  return io::generate_pose_graph(spec).graph;
}

// A solved pose graph (vertex 0 held constant, as make_pose_graph_problem does).
struct Solved {
  AnalyzedProblem analyzed;
  Values values;
};
Solved solved(const io::PoseGraph& graph) {
  PoseGraphProblem p = make_pose_graph_problem(graph);
  AnalyzedProblem analyzed = p.problem.analyze(lsjit::testing::analyze_with());
  const SolveResult r = analyzed.solve(p.initial);
  REQUIRE(converged(r.summary.termination));
  return {analyzed, r.values};
}

}  // namespace

TEST_CASE("covariance of a linear problem equals the blocks of the inverse of JtJ, dense and sparse") {
  const LinearProblem p = linear_problem(7);
  const AnalyzedProblem analyzed = p.problem.analyze(lsjit::testing::analyze_with());
  const Eigen::MatrixXd JtJ = p.J.transpose() * p.J;
  const Eigen::MatrixXd inverse = JtJ.ldlt().solve(Eigen::MatrixXd::Identity(15, 15));
  auto ref = [&](int col_a, int dim_a, int col_b, int dim_b) {
    return Eigen::MatrixXd(inverse.block(col_a, col_b, dim_a, dim_b));
  };
  const VecVar<2> x0(0), x1(1), x3(3), x4(4), x5(5);
  const VecVar<3> z(0);
  for (Algorithm algorithm : {Algorithm::Dense, Algorithm::Sparse}) {
    CAPTURE(static_cast<int>(algorithm));
    const Covariance c = compute_covariance(analyzed, p.values,
                                            {{x0, x0}, {x3, x3}, {z, z}, {x1, x4}, {z, x3}, {x3, x5}, {z, x1}},
                                            with(algorithm));
    CHECK(c.algorithm() == algorithm);
    CHECK(relative_difference(c.block(x0), ref(0, 2, 0, 2)) < 1e-10);
    CHECK(relative_difference(c.block(x3), ref(6, 2, 6, 2)) < 1e-10);
    CHECK(relative_difference(c.block(z), ref(12, 3, 12, 3)) < 1e-10);
    CHECK(relative_difference(c.block(x1, x4), ref(2, 2, 8, 2)) < 1e-10);
    CHECK(relative_difference(c.block(x4, x1), ref(8, 2, 2, 2)) < 1e-10);
    CHECK(relative_difference(c.block(z, x3), ref(12, 3, 6, 2)) < 1e-10);
    CHECK(relative_difference(c.block(x3, z), ref(6, 2, 12, 3)) < 1e-10);
    // Blocks the sparse path takes from the first variable's columns (theirs are needed anyway).
    CHECK(relative_difference(c.block(x3, x5), ref(6, 2, 10, 2)) < 1e-10);
    CHECK(relative_difference(c.block(z, x1), ref(12, 3, 2, 2)) < 1e-10);
    CHECK(c.block(z).isApprox(c.block(z).transpose(), 0.0));  // exactly symmetric
    CHECK(c.reciprocal_condition_number() > 0);
  }
  // Dense measures λ_min/λ_max exactly.
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(JtJ);
  const double rcond = eigen.eigenvalues()(0) / eigen.eigenvalues()(14);
  CHECK(compute_covariance(analyzed, p.values, {}, with(Algorithm::Dense)).reciprocal_condition_number() ==
        doctest::Approx(rcond).epsilon(1e-8));
}

TEST_CASE("covariance blocks that were not requested throw, and more threads give the same blocks") {
  const LinearProblem p = linear_problem(8);
  const AnalyzedProblem analyzed = p.problem.analyze(lsjit::testing::analyze_with());
  const Covariance c = compute_covariance(analyzed, p.values, {{VecVar<2>(1), VecVar<2>(2)}});
  CHECK(c.has_block(VecVar<2>(1), VecVar<2>(2)));
  CHECK(c.has_block(VecVar<2>(2), VecVar<2>(1)));
  CHECK_FALSE(c.has_block(VecVar<2>(1), VecVar<2>(1)));
  const std::string message = error_of([&] { c.block(VecVar<2>(1)); });
  CHECK(message.find("Covariance: the block (Vec2 variable 1, Vec2 variable 1) was not computed") == 0);

  CovarianceOptions threads;
  threads.num_threads = 2;
  const Covariance c2 = compute_covariance(analyzed, p.values, {{VecVar<2>(1), VecVar<2>(2)}}, threads);
  CHECK(c2.block(VecVar<2>(1), VecVar<2>(2)) == c.block(VecVar<2>(1), VecVar<2>(2)));
}

TEST_CASE("pose graph covariance: dense and sparse agree on SE2 and SE3 graphs") {
  auto check = [](const io::PoseGraph& graph, auto var) {
    using Var = decltype(var);
    const Solved s = solved(graph);
    // Every pose's marginal (more columns than one sparse solve takes) and a few cross blocks.
    std::vector<std::pair<VariableRef, VariableRef>> pairs;
    for (int64_t id = 1; id < 30; ++id) pairs.push_back({Var(id), Var(id)});
    pairs.push_back({Var(1), Var(29)});
    pairs.push_back({Var(17), Var(3)});
    const Covariance dense = compute_covariance(s.analyzed, s.values, pairs, with(Algorithm::Dense));
    const Covariance sparse = compute_covariance(s.analyzed, s.values, pairs, with(Algorithm::Sparse));
    CHECK(dense.algorithm() == Algorithm::Dense);
    CHECK(sparse.algorithm() == Algorithm::Sparse);
    for (const auto& [a, b] : pairs) {
      CAPTURE(a.id);
      CAPTURE(b.id);
      CHECK(dense.block(a, b).rows() == Var::kTangent);
      CHECK(relative_difference(sparse.block(a, b), dense.block(a, b)) < 1e-9);
    }
    // Uncertainty grows away from the held vertex 0 along the odometry chain.
    CHECK(dense.block(Var(29)).trace() > dense.block(Var(1)).trace());
  };
  check(generated<SE2Var>(30, 8), SE2Var());
  check(generated<SE3Var>(30, 8), SE3Var());
}

TEST_CASE("covariance of the held vertex or of a variable outside the problem is rejected by name") {
  const Solved s = solved(generated<SE2Var>(20, 5));
  for (Algorithm algorithm : {Algorithm::Dense, Algorithm::Sparse}) {
    const std::string held = error_of(
        [&] { compute_covariance(s.analyzed, s.values, {{SE2Var(3), SE2Var(0)}}, with(algorithm)); });
    CHECK(held.find("Covariance: SE2 variable 0 is not a free variable of the problem: it is held constant") == 0);
    const std::string absent = error_of(
        [&] { compute_covariance(s.analyzed, s.values, {{SE2Var(99), SE2Var(99)}}, with(algorithm)); });
    CHECK(absent.find("Covariance: SE2 variable 99 is not a free variable") == 0);
    // The same id under another type is another variable.
    CHECK_FALSE(error_of([&] {
      compute_covariance(s.analyzed, s.values, {{SE3Var(3), SE3Var(3)}}, with(algorithm));
    }).empty());
  }
  Values missing;
  missing.set(SE2Var(1), SE2d::identity());
  const std::string message = error_of([&] { compute_covariance(s.analyzed, missing, {{SE2Var(1), SE2Var(1)}}); });
  CHECK(message.find("Covariance: ") == 0);
  CHECK(message.find("no initial value for SE2 variable 0") != std::string::npos);
}

TEST_CASE("covariance of a pose graph with nothing held constant is rank deficient and the error says so") {
  const io::PoseGraph graph = generated<SE2Var>(20, 5);
  Problem problem;  // make_pose_graph_problem would hold vertex 0
  std::vector<int64_t> from, to;
  std::vector<SE2d> z;
  std::vector<Eigen::Matrix3d> U;
  for (const auto& e : graph.edges2) {
    from.push_back(e.from);
    to.push_back(e.to);
    z.push_back(e.measurement);
    U.push_back(e.sqrt_information);
  }
  problem.add(standard_costs::se2_between_cost(), SE2Var::batch(from), SE2Var::batch(to), z, U);
  const Solved held = solved(graph);  // its solution is a minimum of the gauge-free problem too
  const AnalyzedProblem analyzed = problem.analyze(lsjit::testing::analyze_with());
  REQUIRE(analyzed.tangent_dim() == 60);

  const std::string dense = error_of([&] {
    compute_covariance(analyzed, held.values, {{SE2Var(3), SE2Var(3)}}, with(Algorithm::Dense));
  });
  CAPTURE(dense);
  CHECK(dense.find("Covariance: the Gauss-Newton matrix is rank deficient (reciprocal condition number ") == 0);
  // The gauge of a planar pose graph: a global rotation and translation, 3 directions.
  CHECK(dense.find("3 of 60 tangent directions are unobservable") != std::string::npos);
  CHECK(dense.find("set_constant") != std::string::npos);

  const std::string sparse = error_of([&] {
    compute_covariance(analyzed, held.values, {{SE2Var(3), SE2Var(3)}}, with(Algorithm::Sparse));
  });
  CAPTURE(sparse);
  CHECK(sparse.find("Covariance: the Gauss-Newton matrix is rank deficient (") == 0);
  CHECK(sparse.find("sparse LDLᵀ") != std::string::npos);
}

TEST_CASE("covariance rank threshold is min_reciprocal_condition_number") {
  // Two nearly parallel measurements of (a, b): JᵀJ has λ_min/λ_max ≈ 6e-10.
  auto two = cost("cov_two", [](const auto& v, ScalarVar a, ScalarVar b, const auto& w) {
    return std::array<Sym, 2>{v[a] + v[b], v[a] + w * v[b]};
  });
  Problem problem;
  problem.add(two, ScalarVar(0), ScalarVar(1), 1.0 + 1e-4);
  Values values;
  values.set(ScalarVar(0), 1.0);
  values.set(ScalarVar(1), 2.0);
  const AnalyzedProblem analyzed = problem.analyze(lsjit::testing::analyze_with());
  const Eigen::Matrix2d J{{1, 1}, {1, 1 + 1e-4}};
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> eigen(J.transpose() * J);
  const double rcond = eigen.eigenvalues()(0) / eigen.eigenvalues()(1);
  REQUIRE(rcond > 1e-10);
  REQUIRE(rcond < 1e-9);
  for (Algorithm algorithm : {Algorithm::Dense, Algorithm::Sparse}) {
    CAPTURE(static_cast<int>(algorithm));
    CovarianceOptions o = with(algorithm);
    const Covariance c = compute_covariance(analyzed, values, {{ScalarVar(0), ScalarVar(1)}}, o);
    const Eigen::Matrix2d inverse = (J.transpose() * J).inverse();
    CHECK(c.block(ScalarVar(0), ScalarVar(1))(0, 0) == doctest::Approx(inverse(0, 1)).epsilon(1e-5));
    o.min_reciprocal_condition_number = 1e-8;
    CHECK(error_of([&] { compute_covariance(analyzed, values, {{ScalarVar(0), ScalarVar(1)}}, o); })
              .find("rank deficient") != std::string::npos);
  }
  CovarianceOptions zero;
  zero.min_reciprocal_condition_number = 0;
  CHECK(error_of([&] { compute_covariance(analyzed, values, {}, zero); })
            .find("min_reciprocal_condition_number must be in (0, 1)") != std::string::npos);
}

TEST_CASE("curve fit covariance matches the inverse of JtJ from finite differences") {
  // y = exp(m x + c) with noise, fitted for (m, c).
  auto curve = cost("cov_curve", [](const auto& v, ScalarVar m, ScalarVar c, const auto& xy) {
    return exp(v[m] * xy(0) + v[c]) - xy(1);
  });
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0, 0.2);
  std::vector<Eigen::Vector2d> data;
  for (int i = 0; i < 50; ++i) {
    const double x = 5.0 * i / 50;
    data.emplace_back(x, std::exp(0.3 * x + 0.1) + noise(rng));
  }
  Problem problem;
  problem.add(curve, ScalarVar(0), ScalarVar(1), data);
  Values initial;
  initial.set(ScalarVar(0), 0.0);
  initial.set(ScalarVar(1), 0.0);
  const AnalyzedProblem analyzed = problem.analyze(lsjit::testing::analyze_with());
  const SolveResult r = analyzed.solve(initial);
  REQUIRE(converged(r.summary.termination));
  const double m = r.values.get(ScalarVar(0)), c = r.values.get(ScalarVar(1));

  // Central differences of the residuals, in double, independent of lsjit's Jacobians.
  Eigen::MatrixXd J(data.size(), 2);
  const double h = 1e-6;
  for (size_t i = 0; i < data.size(); ++i) {
    auto residual = [&](double mm, double cc) { return std::exp(mm * data[i](0) + cc) - data[i](1); };
    J(i, 0) = (residual(m + h, c) - residual(m - h, c)) / (2 * h);
    J(i, 1) = (residual(m, c + h) - residual(m, c - h)) / (2 * h);
  }
  const Eigen::Matrix2d expected = (J.transpose() * J).inverse();
  for (Algorithm algorithm : {Algorithm::Dense, Algorithm::Sparse}) {
    const Covariance cov = compute_covariance(
        analyzed, r.values, {{ScalarVar(0), ScalarVar(0)}, {ScalarVar(1), ScalarVar(1)}, {ScalarVar(0), ScalarVar(1)}},
        with(algorithm));
    CHECK(cov.block(ScalarVar(0))(0, 0) == doctest::Approx(expected(0, 0)).epsilon(1e-6));
    CHECK(cov.block(ScalarVar(1))(0, 0) == doctest::Approx(expected(1, 1)).epsilon(1e-6));
    CHECK(cov.block(ScalarVar(0), ScalarVar(1))(0, 0) == doctest::Approx(expected(0, 1)).epsilon(1e-6));
  }
}

TEST_CASE("covariance Auto picks dense up to 1000 tangent dimensions and sparse above") {
  const Solved small = solved(generated<SE2Var>(30, 8));
  CHECK(compute_covariance(small.analyzed, small.values, {{SE2Var(5), SE2Var(5)}}).algorithm() ==
        Algorithm::Dense);
  const Solved large = solved(generated<SE2Var>(400, 60));
  REQUIRE(large.analyzed.tangent_dim() == 1197);
  const Covariance c = compute_covariance(large.analyzed, large.values,
                                          {{SE2Var(200), SE2Var(200)}, {SE2Var(399), SE2Var(7)}});
  CHECK(c.algorithm() == Algorithm::Sparse);
  // Against the dense inverse, by the free-variable order lsjit reports.
  const Eigen::MatrixXd H = large.analyzed.evaluate(large.values, true).gauss_newton;
  const Eigen::MatrixXd inverse = H.ldlt().solve(Eigen::MatrixXd::Identity(H.rows(), H.cols()));
  auto offset = [&](int64_t id) {
    for (const auto& f : large.analyzed.free_variables())
      if (f.id == id) return static_cast<Eigen::Index>(f.offset);
    FAIL("no free variable " << id);
    return Eigen::Index{0};
  };
  CHECK(relative_difference(c.block(SE2Var(200)), inverse.block(offset(200), offset(200), 3, 3)) < 1e-9);
  CHECK(relative_difference(c.block(SE2Var(399), SE2Var(7)), inverse.block(offset(399), offset(7), 3, 3)) < 1e-9);
}
