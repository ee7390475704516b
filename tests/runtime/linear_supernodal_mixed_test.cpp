// SupernodalCholesky's mixed-precision solves (supernodal_cholesky.h): a float factor
// refined in double agrees with Eigen's dense LLT in double, reaches its residual
// tolerance, falls back to double where float cannot do it, is chosen by Automatic only
// where the analysis predicts a gain, and stays bit-identical across thread counts.
#include <doctest/doctest.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "../support/random_block_sparse.h"
#include "lsjit/runtime/solve/linear/supernodal_cholesky.h"

namespace linear_supernodal_mixed_test {  // its using-directives stay in this file (tests are unity-built)
using namespace lsjit::linear;
using lsjit::testing::fill_random;
using lsjit::testing::make_matrix;
using lsjit::testing::random_block_structure;
using lsjit::testing::random_vector;

namespace {

LinearSolverOptions mixed(MixedPrecision m, int max_refinements = 10, int threads = 1) {
  LinearSolverOptions o;
  o.mixed_precision = m;
  o.max_num_refinement_iterations = max_refinements;
  o.num_threads = threads;
  return o;
}

// ‖b − (A + diag(shift)) x‖ / ‖b‖ in double, through the dense matrix.
double relative_residual(const BlockSparseSymmetric& A, const Eigen::VectorXd& shift,
                         const Eigen::VectorXd& b, const Eigen::VectorXd& x) {
  Eigen::MatrixXd dense = A.to_dense();
  dense.diagonal() += shift;
  return (b - dense * x).norm() / b.norm();
}

Eigen::VectorXd dense_solution(const BlockSparseSymmetric& A, const Eigen::VectorXd& shift,
                               const Eigen::VectorXd& b) {
  Eigen::MatrixXd dense = A.to_dense();
  dense.diagonal() += shift;
  const Eigen::LLT<Eigen::MatrixXd> llt(dense);
  REQUIRE(llt.info() == Eigen::Success);
  return llt.solve(b);
}

}  // namespace

TEST_CASE("linear supernodal mixed: a float factor refined in double agrees with dense LLT") {
  struct Shape {
    const char* name;
    int blocks, max_block_size;
    double couplings;
  };
  // The last is dense enough for supernodes past the BLAS threshold (spotrf, strsm, ssyrk).
  const Shape shapes[] = {{"mixed sizes", 60, 9, 1.5},
                          {"6x6-ish blocks, sparse", 100, 6, 0.6},
                          {"1x1 blocks", 80, 1, 2.0},
                          {"large supernodes", 40, 12, 6.0}};
  uint64_t seed = 11;
  for (const Shape& shape : shapes) {
    CAPTURE(shape.name);
    std::mt19937_64 rng(seed++);
    const auto structure = random_block_structure(rng, shape.blocks, shape.max_block_size, shape.couplings);
    BlockSparseSymmetric A = make_matrix(structure);
    SupernodalCholesky solver(A.shared_pattern());
    for (int round = 0; round < 3; ++round) {
      fill_random(structure, A, rng);
      const Eigen::VectorXd b = random_vector(A.dim(), rng);
      const Eigen::VectorXd shift = random_vector(A.dim(), rng, 0.0, 1.0);
      Eigen::VectorXd x = Eigen::VectorXd::Constant(A.dim(), -99.0);
      const LinearSolveSummary s =
          solver.solve(A, shift.data(), b.data(), x.data(), mixed(MixedPrecision::Always));
      CAPTURE(s.message);
      REQUIRE(s.ok);
      CHECK(s.mixed_precision);
      CHECK_FALSE(s.mixed_precision_fallback);
      CHECK(s.direct);
      CHECK(s.iterations >= 1);
      CHECK(s.relative_residual <= SupernodalCholesky::kMixedPrecisionTolerance);
      // The residual the solver reports is the one it reached, checked independently.
      CHECK(relative_residual(A, shift, b, x) <= 2 * SupernodalCholesky::kMixedPrecisionTolerance);
      const Eigen::VectorXd reference = dense_solution(A, shift, b);
      CHECK((x - reference).norm() / reference.norm() <= 1e-8);
    }
    CHECK(solver.mixed_precision_solves() == 3);
    CHECK(solver.mixed_precision_fallbacks() == 0);
    CHECK(solver.factorizations() == 3);
  }
}

TEST_CASE("linear supernodal mixed: where float cannot refine, double solves, and stays") {
  // A = v vᵀ + 1e-9 I on one 6x6 block and a chain of well-conditioned 3x3 blocks: its
  // condition number (~6e9) is past what a float factor can refine (each step would have
  // to gain against float's 6e-8 with an error amplified 6e9 times).
  std::vector<int> sizes = {6, 3, 3, 3};
  BlockSparseSymmetric A(sizes, {{0, 1}, {1, 2}, {2, 3}});
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  for (double& v : A.values()) v = 0;
  Eigen::VectorXd v(6);
  for (int i = 0; i < 6; ++i) v[i] = u(rng);
  double* block0 = A.values().data() + A.find(0, 0);
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 6; ++c) block0[r * 6 + c] = v[r] * v[c] + (r == c ? 1e-9 : 0.0);
  for (int i = 1; i < 4; ++i) {
    double* block = A.values().data() + A.find(i, i);
    for (int r = 0; r < 3; ++r) block[r * 3 + r] = 4.0;
  }
  // The couplings stay zero: against the nearly singular block any would make A indefinite.
  const Eigen::VectorXd b = random_vector(A.dim(), rng);
  const Eigen::VectorXd shift = Eigen::VectorXd::Zero(A.dim());
  const Eigen::VectorXd reference = dense_solution(A, shift, b);

  SupernodalCholesky solver(A.shared_pattern());
  for (int solve = 0; solve < 4; ++solve) {
    CAPTURE(solve);
    Eigen::VectorXd x = Eigen::VectorXd::Zero(A.dim());
    const LinearSolveSummary s = solver.solve(A, shift.data(), b.data(), x.data(), mixed(MixedPrecision::Always));
    CAPTURE(s.message);
    REQUIRE(s.ok);
    CHECK_FALSE(s.mixed_precision);
    // The first solve tries float and falls back; the solver then no longer tries.
    CHECK(s.mixed_precision_fallback == (solve == 0));
    CHECK((x - reference).norm() / reference.norm() <= 1e-5);  // double's own accuracy here
  }
  CHECK(solver.mixed_precision_solves() == 0);
  CHECK(solver.mixed_precision_fallbacks() == 1);
}

TEST_CASE("linear supernodal mixed: the refinement cap, and a cap below 1, are honoured") {
  std::mt19937_64 rng(21);
  const auto structure = random_block_structure(rng, 40, 12, 6.0);
  BlockSparseSymmetric A = make_matrix(structure);
  fill_random(structure, A, rng);
  const Eigen::VectorXd b = random_vector(A.dim(), rng);
  const Eigen::VectorXd shift = Eigen::VectorXd::Constant(A.dim(), 1e-6);
  Eigen::VectorXd x(A.dim());
  SupernodalCholesky solver(A.shared_pattern());
  const LinearSolveSummary free = solver.solve(A, shift.data(), b.data(), x.data(), mixed(MixedPrecision::Always));
  REQUIRE(free.mixed_precision);
  REQUIRE(free.iterations >= 2);  // else the cap below would not bite
  // One step cannot reach 1e-10 here: the solve falls back to double and is still right.
  SupernodalCholesky capped(A.shared_pattern());
  const LinearSolveSummary one = capped.solve(A, shift.data(), b.data(), x.data(), mixed(MixedPrecision::Always, 1));
  CHECK(one.ok);
  CHECK_FALSE(one.mixed_precision);
  CHECK(one.mixed_precision_fallback);
  CHECK((x - dense_solution(A, shift, b)).norm() / x.norm() <= 1e-9);
  const LinearSolveSummary zero = capped.solve(A, shift.data(), b.data(), x.data(), mixed(MixedPrecision::Always, 0));
  CHECK_FALSE(zero.ok);
  CHECK(zero.message.find("max_num_refinement_iterations") != std::string::npos);
}

TEST_CASE("linear supernodal mixed: Automatic factors in float only where the analysis predicts a gain") {
  std::mt19937_64 rng(5);
  // Sparse, small supernodes: few flops per factor entry.
  const auto sparse = random_block_structure(rng, 100, 6, 0.6);
  // Dense enough that the factorization's flops dwarf a substitution's.
  const auto dense = random_block_structure(rng, 60, 12, 12.0);
  for (const auto* structure : {&sparse, &dense}) {
    BlockSparseSymmetric A = make_matrix(*structure);
    fill_random(*structure, A, rng);
    SupernodalCholesky solver(A.shared_pattern());
    const double per_entry = solver.factorization_flops() / static_cast<double>(solver.analysis().panel_offset.back());
    CAPTURE(per_entry);
    const bool pays = per_entry >= SupernodalCholesky::kMixedPrecisionMinFlopsPerEntry;
    CHECK(pays == solver.mixed_precision_pays());
    CHECK(pays == (structure == &dense));  // the two shapes fall on the two sides
    const Eigen::VectorXd b = random_vector(A.dim(), rng);
    const Eigen::VectorXd shift = Eigen::VectorXd::Constant(A.dim(), 1e-3);
    Eigen::VectorXd x(A.dim());
    const LinearSolveSummary automatic = solver.solve(A, shift.data(), b.data(), x.data(), mixed(MixedPrecision::Automatic));
    REQUIRE(automatic.ok);
    CHECK(automatic.mixed_precision == pays);
    const LinearSolveSummary never = solver.solve(A, shift.data(), b.data(), x.data(), mixed(MixedPrecision::Never));
    REQUIRE(never.ok);
    CHECK_FALSE(never.mixed_precision);
    CHECK_FALSE(never.mixed_precision_fallback);
  }
}

TEST_CASE("linear supernodal mixed: two threads give one thread's solution bit for bit") {
  // Two chains of blocks joined at the end: the elimination tree splits into two bins.
  BlockSparseSymmetric A = lsjit::testing::two_chains(40);
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(-0.1, 0.1);
  for (double& v : A.values()) v = u(rng);
  lsjit::testing::set_diagonal(A, 10.0);  // dominant
  const Eigen::VectorXd b = random_vector(A.dim(), rng);
  Eigen::VectorXd one(A.dim()), two(A.dim());
  SupernodalCholesky a(A.shared_pattern(), SupernodalOrdering::NestedDissection);
  SupernodalCholesky c(A.shared_pattern(), SupernodalOrdering::NestedDissection);
  REQUIRE(c.split() != nullptr);
  REQUIRE(a.solve(A, nullptr, b.data(), one.data(), mixed(MixedPrecision::Always, 10, 1)).mixed_precision);
  REQUIRE(c.solve(A, nullptr, b.data(), two.data(), mixed(MixedPrecision::Always, 10, 2)).mixed_precision);
  CHECK(one == two);
}
}  // namespace linear_supernodal_mixed_test
