// SupernodalCholesky on two threads (supernodal_split.h): the split covers every supernode
// once, the two-thread solve is bit-identical to one thread's and correct, and a bad pivot
// is reported as one thread reports it.
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <random>
#include <vector>

#include "../support/random_block_sparse.h"
#include "lsjit/runtime/solve/linear/supernodal_cholesky.h"
#include "lsjit/runtime/solve/linear/supernodal_split.h"

namespace linear_supernodal_threads_test {  // its using-directives stay in this file (tests are unity-built)
using namespace lsjit::linear;
using lsjit::testing::fill_random;
using lsjit::testing::make_matrix;
using lsjit::testing::random_block_structure;
using lsjit::testing::random_vector;
using lsjit::testing::set_diagonal;
using lsjit::testing::two_chains;

namespace {

LinearSolverOptions threads(int n) {
  LinearSolverOptions o;
  o.num_threads = n;
  return o;
}

}  // namespace

TEST_CASE("linear supernodal threads: the split covers every supernode once") {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 6; ++trial) {
    const auto structure = random_block_structure(rng, 20 + 30 * trial, 6, 1.2);
    const BlockSparseSymmetric A = make_matrix(structure);
    const SupernodalAnalysis a = analyze_supernodal(A.pattern(), SupernodalOrdering::Automatic);
    const SupernodalSplit split = split_supernodal_tree(a);
    std::vector<int> seen(a.num_supernodes(), 0);
    for (int bin = 0; bin < 2; ++bin)
      for (const auto& [first, last] : split.ranges[bin])
        for (int s = first; s <= last; ++s) ++seen[s];
    for (int t : split.top) {
      ++seen[t];
      CHECK(split.private_offset[t] >= 0);
    }
    for (int s = 0; s < a.num_supernodes(); ++s) CHECK(seen[s] == 1);
    CHECK(split.predicted_speedup >= 1.0);
    CHECK(split.predicted_speedup <= 2.0);
  }
  const BlockSparseSymmetric chains = two_chains(200);
  const SupernodalSplit split =
      split_supernodal_tree(analyze_supernodal(chains.pattern(), SupernodalOrdering::NestedDissection));
  CHECK(split.predicted_speedup > 1.5);
  CHECK(!split.ranges[0].empty());
  CHECK(!split.ranges[1].empty());
}

TEST_CASE("linear supernodal threads: two threads give one thread's solution bit for bit") {
  std::mt19937_64 rng(11);
  BlockSparseSymmetric A = two_chains(150);
  std::uniform_real_distribution<double> u(-1, 1);
  for (double& v : A.values()) v = u(rng);
  set_diagonal(A, 100.0);  // dominant: at most 5 neighbours of 6 columns in [-1, 1]
  const Eigen::VectorXd b = random_vector(A.dim(), rng);
  for (SupernodalOrdering ordering : {SupernodalOrdering::Amd, SupernodalOrdering::NestedDissection}) {
    SupernodalCholesky one(A.shared_pattern(), ordering), two(A.shared_pattern(), ordering);
    Eigen::VectorXd x1(A.dim()), x2(A.dim()), x2_again(A.dim());
    REQUIRE(two.split() != nullptr);  // two chains: worth splitting
    REQUIRE(one.solve(A, nullptr, b.data(), x1.data(), threads(1)).ok);
    REQUIRE(two.solve(A, nullptr, b.data(), x2.data(), threads(2)).ok);
    REQUIRE(two.solve(A, nullptr, b.data(), x2_again.data(), threads(2)).ok);
    CHECK(x2 == x1);
    CHECK(x2 == x2_again);
    // The residual of the two-thread solution, against A itself.
    Eigen::VectorXd Ax(A.dim());
    A.multiply(x2.data(), Ax.data());
    CHECK((Ax - b).norm() <= 1e-10 * b.norm());
  }
}

TEST_CASE("linear supernodal threads: a bad pivot is the one one thread reports") {
  BlockSparseSymmetric A = two_chains(120);
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> u(-1, 1);
  for (double& v : A.values()) v = u(rng);
  set_diagonal(A, 100.0);
  const Eigen::VectorXd b = Eigen::VectorXd::Ones(A.dim());
  for (int block : {3, 130, 240}) {  // in either chain, and the joint
    CAPTURE(block);
    Eigen::VectorXd shift = Eigen::VectorXd::Zero(A.dim());
    shift[A.scalar_offset(block) + 2] = -1e3;
    SupernodalCholesky one(A.shared_pattern(), SupernodalOrdering::NestedDissection),
        two(A.shared_pattern(), SupernodalOrdering::NestedDissection);
    Eigen::VectorXd x(A.dim());
    const LinearSolveSummary s1 = one.solve(A, shift.data(), b.data(), x.data(), threads(1));
    const LinearSolveSummary s2 = two.solve(A, shift.data(), b.data(), x.data(), threads(2));
    CHECK(!s1.ok);
    CHECK(!s2.ok);
    CHECK(s2.message == s1.message);
  }
}
}  // namespace linear_supernodal_threads_test
