// analyze()'s passes (runtime/analyze/), each checked through what it decides:
// trace_groups merges identical traces, number_variables orders the free variables by type
// name with the eliminated type last and independently of add() order, place_instances and
// build_gather_lists assemble exactly the Gauss-Newton system of the instances' own
// Jacobians, and the ID tables map sparse and dense IDs alike.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "lsjit/lsjit.h"
#include "lsjit/runtime/analyze/id_tables.h"

using namespace lsjit;

namespace {

auto analyze_offset_cost(const char* name) {
  return cost(name, [](const auto& v, VecVar<2> a, VecVar<2> b, const auto& z) {
    return Eigen::Matrix<Sym, 2, 1>(v[b] - v[a] - z);
  });
}

auto analyze_prior_cost() {
  return cost("analyze_prior", [](const auto& v, VecVar<2> a, const auto& z) {
    return Eigen::Matrix<Sym, 2, 1>(v[a] - z);
  });
}

// A chain 0-1-2-3 of offsets with a prior on 0, the edges added in the given order.
Problem analyze_chain(const std::vector<int>& edge_order) {
  Problem p;
  auto offset = analyze_offset_cost("analyze_offset");
  for (int e : edge_order)
    p.add(offset, VecVar<2>(e), VecVar<2>(e + 1), Eigen::Vector2d(1.0 + e, 0.5 * e));
  p.add(analyze_prior_cost(), VecVar<2>(0), Eigen::Vector2d(0.1, -0.2));
  return p;
}

Values analyze_chain_values() {
  Values v;
  for (int i = 0; i < 4; ++i) v.set(VecVar<2>(i), Eigen::Vector2d(0.3 * i, -0.7 * i * i));
  return v;
}

}  // namespace

TEST_CASE("trace_groups: two cost objects with identical traces share one kernel group") {
  Problem p;
  auto first = analyze_offset_cost("analyze_same");
  auto second = analyze_offset_cost("analyze_same");  // another object, the same graph
  p.add(first, VecVar<2>(0), VecVar<2>(1), Eigen::Vector2d(1, 0));
  p.add(second, VecVar<2>(1), VecVar<2>(2), Eigen::Vector2d(1, 0));
  const AnalyzedProblem a = p.analyze();
  REQUIRE(a.groups().size() == 1);
  CHECK(a.groups()[0].instances == 2);
  CHECK(a.num_instances() == 2);
}

TEST_CASE("number_variables: the free variables in type-name order, then ID, whatever the add() order") {
  const AnalyzedProblem forward = analyze_chain({0, 1, 2}).analyze();
  const AnalyzedProblem backward = analyze_chain({2, 0, 1}).analyze();
  const auto f = forward.free_variables(), b = backward.free_variables();
  REQUIRE(f.size() == 4);
  REQUIRE(b.size() == 4);
  for (size_t k = 0; k < f.size(); ++k) {
    CHECK(f[k].id == static_cast<int64_t>(k));
    CHECK(f[k].offset == 2 * k);
    CHECK(b[k].id == f[k].id);
    CHECK(b[k].offset == f[k].offset);
  }
  // The same system, so the same solve, bit for bit.
  SolverOptions o;
  o.linear_solver = LinearSolver::DenseCholesky;
  const SolveResult rf = forward.solve(analyze_chain_values(), o);
  const SolveResult rb = backward.solve(analyze_chain_values(), o);
  CHECK(rf.summary.final_cost == rb.summary.final_cost);
  for (int i = 0; i < 4; ++i) CHECK(rf.values.get(VecVar<2>(i)) == rb.values.get(VecVar<2>(i)));
}

TEST_CASE("number_variables: the eliminated type goes last, held variables are not free") {
  auto observe = cost("analyze_observe", [](const auto& v, SE2Var pose, VecVar<2> point, const auto& z) {
    return Eigen::Matrix<Sym, 2, 1>(v[pose].inverse() * v[point] - z);
  });
  Problem p;
  for (int pose = 0; pose < 2; ++pose)
    for (int point = 0; point < 3; ++point) p.add(observe, SE2Var(pose), VecVar<2>(point), Eigen::Vector2d(1, 2));
  p.set_constant(SE2Var(0));
  AnalyzeOptions options;
  options.schur_elimination = "auto";
  const auto free = p.analyze(options).free_variables();
  REQUIRE(free.size() == 4);  // SE2 1, then the three points
  CHECK(free[0].id == 1);
  CHECK(free[0].tangent == 3);
  for (size_t k = 1; k < 4; ++k) {
    CHECK(free[k].tangent == 2);
    CHECK(free[k].id == static_cast<int64_t>(k - 1));
  }
}

TEST_CASE("place_instances and build_gather_lists: H and g are J^T J and J^T r of the instances' own Jacobians") {
  const AnalyzedProblem a = analyze_chain({1, 2, 0}).analyze();
  const Values values = analyze_chain_values();
  const AnalyzedProblem::Evaluation e = a.evaluate(values, true);
  const auto free = a.free_variables();
  std::map<int64_t, size_t> offset_of;
  for (const auto& f : free) offset_of[f.id] = f.offset;
  const size_t n = a.tangent_dim();
  Eigen::MatrixXd H = Eigen::MatrixXd::Zero(n, n);
  Eigen::VectorXd g = Eigen::VectorXd::Zero(n);
  double cost_sum = 0;
  for (const InstanceEvaluation& ie : a.evaluate_instances(values, a.all_instances())) {
    cost_sum += ie.cost;
    for (const JacobianBlock& bs : ie.blocks) {
      const size_t rs = offset_of.at(bs.id);
      g.segment(rs, 2) += bs.jacobian.transpose() * ie.residuals;
      for (const JacobianBlock& bt : ie.blocks)
        H.block(rs, offset_of.at(bt.id), 2, 2) += bs.jacobian.transpose() * bt.jacobian;
    }
  }
  CHECK(e.cost == doctest::Approx(cost_sum));
  CHECK((e.gradient - g).norm() <= 1e-12 * (1 + g.norm()));
  CHECK((e.gauss_newton - H).norm() <= 1e-12 * (1 + H.norm()));
}

TEST_CASE("id_tables: sorted distinct IDs and their rows, dense spans and sparse ones") {
  using detail::BigVector;
  SUBCASE("dense: an array over the span") {
    BigVector<int64_t> ids = {5, 3, 9, 3, 5, 4};
    detail::sort_unique(ids);
    CHECK(ids == BigVector<int64_t>{3, 4, 5, 9});
    const detail::RowOfId row(ids);
    CHECK(row(3) == 0);
    CHECK(row(9) == 3);
  }
  SUBCASE("sparse: the int64 extremes, a binary search") {
    const int64_t lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
    CHECK(detail::dense_span(lo, hi, 3) == 0);
    BigVector<int64_t> ids = {hi, 0, lo, 0, hi};
    detail::sort_unique(ids);
    CHECK(ids == BigVector<int64_t>{lo, 0, hi});
    const detail::RowOfId row(ids);
    CHECK(row(lo) == 0);
    CHECK(row(0) == 1);
    CHECK(row(hi) == 2);
  }
}
