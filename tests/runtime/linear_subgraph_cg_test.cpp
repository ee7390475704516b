// Subgraph-preconditioned CG (runtime/solve/linear/subgraph_cg.h): the sparsified pattern it
// factors (subgraph.h), the supernodal Cholesky's factor-once/solve-many entry points it
// relies on, and its solutions against a dense reference.
#include <doctest/doctest.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "../support/random_block_sparse.h"
#include "lsjit/runtime/solve/linear/subgraph.h"
#include "lsjit/runtime/solve/linear/subgraph_cg.h"
#include "lsjit/runtime/solve/linear/supernodal_cholesky.h"

namespace linear_subgraph_cg_test {  // its using-directives stay in this file (tests are unity-built)
using namespace lsjit::linear;
using lsjit::testing::fill_random;
using lsjit::testing::make_matrix;
using lsjit::testing::random_block_structure;
using lsjit::testing::random_vector;

namespace {

// A pose-graph-like pattern: a chain of n blocks of size 6 and `loops` random extra pairs.
BlockPattern chain_with_loops(int n, int loops, std::mt19937_64& rng) {
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i + 1 < n; ++i) pairs.emplace_back(i, i + 1);
  std::uniform_int_distribution<int> block(0, n - 1);
  for (int l = 0; l < loops; ++l) pairs.emplace_back(block(rng), block(rng));
  return BlockPattern(std::vector<int>(n, 6), pairs);
}

bool connects_all(const BlockPattern& p, const std::vector<std::pair<int, int>>& pairs) {
  std::vector<std::vector<int>> adjacent(p.num_blocks());
  for (const auto& [i, j] : pairs) adjacent[i].push_back(j), adjacent[j].push_back(i);
  std::vector<char> seen(p.num_blocks(), 0);
  std::vector<int> stack{0};
  seen[0] = 1;
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    for (int w : adjacent[v])
      if (!seen[w]) seen[w] = 1, stack.push_back(w);
  }
  return std::all_of(seen.begin(), seen.end(), [](char c) { return c != 0; });
}

}  // namespace

TEST_CASE("subgraph: the forest alone is a spanning tree of a connected pattern, and takes the chain") {
  std::mt19937_64 rng(3);
  const BlockPattern p = chain_with_loops(200, 80, rng);
  const Subgraph s = choose_subgraph(p, 0);
  CHECK(s.clusters == 0);
  CHECK(s.pairs.size() == 199);
  CHECK(s.forest_blocks == 199);
  CHECK(connects_all(p, s.pairs));
  // Blocks in increasing |i − j|: the chain's (i, i + 1) come first and already span.
  for (const auto& [i, j] : s.pairs) CHECK(j == i + 1);
  // Its factor has no fill: L has exactly the pattern's kept blocks.
  const SupernodalAnalysis a = analyze_supernodal(BlockPattern(std::vector<int>(200, 6), s.pairs),
                                                  SupernodalOrdering::Automatic);
  CHECK(a.factor_nonzeros == doctest::Approx(200 * 21 + 199 * 36));
}

TEST_CASE("subgraph: clusters keep their inner blocks and a forest joins them") {
  std::mt19937_64 rng(4);
  const BlockPattern p = chain_with_loops(400, 300, rng);
  const Subgraph s = choose_subgraph(p, 20);
  CHECK(s.clusters == 20);
  CHECK(connects_all(p, s.pairs));
  const int64_t off_diagonal = p.num_stored_blocks() - p.num_blocks();
  CHECK(static_cast<int64_t>(s.pairs.size()) > 399);          // more than a tree
  CHECK(static_cast<int64_t>(s.pairs.size()) < off_diagonal);  // but not everything
  std::set<std::pair<int, int>> unique(s.pairs.begin(), s.pairs.end());
  CHECK(unique.size() == s.pairs.size());
  for (const auto& [i, j] : s.pairs) CHECK(p.find(i, j) >= 0);
  // One cluster holding everything drops nothing.
  CHECK(static_cast<int64_t>(choose_subgraph(p, 400).pairs.size()) == off_diagonal);
}

TEST_CASE("supernodal cholesky: factorize once, solve_factored many times") {
  std::mt19937_64 rng(5);
  const auto structure = random_block_structure(rng, 40);
  BlockSparseSymmetric A = make_matrix(structure);
  fill_random(structure, A, rng);
  SupernodalCholesky solver(A.shared_pattern());
  const Eigen::VectorXd shift = random_vector(A.dim(), rng, 0.1, 1.0);
  REQUIRE(solver.factorize(A, shift.data()).empty());
  Eigen::MatrixXd dense = A.to_dense();
  dense.diagonal() += shift;
  for (int k = 0; k < 3; ++k) {
    const Eigen::VectorXd b = random_vector(A.dim(), rng);
    Eigen::VectorXd x(A.dim());
    solver.solve_factored(b.data(), x.data());
    CHECK((x - dense.ldlt().solve(b)).norm() <= 1e-10 * x.norm());
    Eigen::VectorXd in_place = b;  // b and x may be the same array
    solver.solve_factored(in_place.data(), in_place.data());
    CHECK((in_place - x).norm() == 0.0);
  }
  CHECK(solver.factorizations() == 1);
  // A non-positive pivot is reported as solve() reports it.
  Eigen::VectorXd negative = Eigen::VectorXd::Constant(A.dim(), -1e6);
  CHECK(solver.factorize(A, negative.data()).find("not positive definite") != std::string::npos);
}

TEST_CASE("subgraph_cg: solves to its tolerance, agreeing with the dense solution") {
  std::mt19937_64 rng(6);
  for (int cluster_blocks : {0, 8, 1000}) {
    CAPTURE(cluster_blocks);
    const auto structure = random_block_structure(rng, 60, 6, 2.0);
    BlockSparseSymmetric A = make_matrix(structure);
    fill_random(structure, A, rng);
    SubgraphCg solver(A.shared_pattern(), cluster_blocks);
    const Eigen::VectorXd shift = random_vector(A.dim(), rng, 0.01, 0.1);
    const Eigen::VectorXd b = random_vector(A.dim(), rng);
    Eigen::VectorXd x(A.dim());
    LinearSolverOptions options;
    options.cg_relative_tolerance = 1e-12;
    options.max_cg_iterations = 1000;
    const LinearSolveSummary s = solver.solve(A, shift.data(), b.data(), x.data(), options);
    REQUIRE(s.ok);
    CHECK(s.converged);
    CHECK_FALSE(s.direct);
    Eigen::MatrixXd dense = A.to_dense();
    dense.diagonal() += shift;
    const Eigen::VectorXd reference = dense.ldlt().solve(b);
    CHECK((x - reference).norm() <= 1e-9 * reference.norm());
    // The whole matrix as one cluster makes the preconditioner exact: one iteration.
    if (cluster_blocks == 1000) CHECK(s.iterations == 1);
    CHECK(solver.analyses() == 1);
  }
}

TEST_CASE("subgraph_cg: is made by name and rejects bad CG options") {
  std::mt19937_64 rng(7);
  const auto structure = random_block_structure(rng, 10);
  BlockSparseSymmetric A = make_matrix(structure);
  fill_random(structure, A, rng);
  REQUIRE(lsjit::linear_solver_from_name("subgraph_cg") == lsjit::LinearSolver::SubgraphConjugateGradient);
  auto solver = make_linear_solver(lsjit::LinearSolver::SubgraphConjugateGradient, A.shared_pattern());
  CHECK(solver->name() == "subgraph_cg");
  std::vector<double> b(A.dim(), 1.0), x(A.dim());
  LinearSolverOptions options;
  options.max_cg_iterations = 0;
  const LinearSolveSummary s = solver->solve(A, nullptr, b.data(), x.data(), options);
  CHECK_FALSE(s.ok);
  CHECK(s.message.find("subgraph_cg needs max_cg_iterations >= 1") != std::string::npos);
}
}  // namespace linear_subgraph_cg_test
