// SupernodalCholesky (runtime/solve/linear/supernodal_cholesky.h) against Eigen's dense LLT on
// random block-sparse SPD matrices of many shapes, with both orderings; the reuse of its
// analysis; and its failures, which must name the right block of A.
#include <doctest/doctest.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../support/random_block_sparse.h"
#include "lsjit/common/error.h"
#include "lsjit/runtime/solve/linear/supernodal_cholesky.h"

namespace linear_supernodal_test {  // its using-directives stay in this file (tests are unity-built)
using namespace lsjit::linear;
using lsjit::testing::fill_random;
using lsjit::testing::make_matrix;
using lsjit::testing::random_block_structure;
using lsjit::testing::random_vector;

namespace {

constexpr SupernodalOrdering kOrderings[] = {SupernodalOrdering::Amd,
                                             SupernodalOrdering::NestedDissection,
                                             SupernodalOrdering::Automatic};

bool mentions(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Solves (A + diag(shift)) x = b with the solver and with Eigen's dense LLT; the relative
// difference of the solutions.
double solve_error(SupernodalCholesky& solver, const BlockSparseSymmetric& A,
                   const Eigen::VectorXd* shift, const Eigen::VectorXd& b) {
  Eigen::MatrixXd dense = A.to_dense();
  if (shift != nullptr) dense.diagonal() += *shift;
  const Eigen::LLT<Eigen::MatrixXd> llt(dense);
  REQUIRE(llt.info() == Eigen::Success);
  const Eigen::VectorXd reference = llt.solve(b);
  Eigen::VectorXd x = Eigen::VectorXd::Constant(A.dim(), -99.0);
  const LinearSolveSummary s = solver.solve(A, shift ? shift->data() : nullptr, b.data(),
                                            x.data(), LinearSolverOptions{});
  CAPTURE(s.message);
  REQUIRE(s.ok);
  CHECK(s.direct);
  return (x - reference).norm() / reference.norm();
}

// Several value sets and shifts on one solver object per ordering: all agree with LLT, and
// the analysis runs once.
void check_structure(const lsjit::testing::RandomBlockStructure& structure, uint64_t seed) {
  std::mt19937_64 rng(seed);
  BlockSparseSymmetric A = make_matrix(structure);
  for (SupernodalOrdering ordering : kOrderings) {
    CAPTURE(supernodal_ordering_name(ordering));
    SupernodalCholesky solver(A.shared_pattern(), ordering);
    CHECK(solver.factor_nonzeros() > 0);
    CHECK(solver.factorization_flops() >= solver.factor_nonzeros());
    for (int round = 0; round < 3; ++round) {
      fill_random(structure, A, rng);
      const Eigen::VectorXd b = random_vector(A.dim(), rng);
      const Eigen::VectorXd shift = random_vector(A.dim(), rng, 0.0, 2.0);
      CHECK(solve_error(solver, A, nullptr, b) <= 1e-10);
      CHECK(solve_error(solver, A, &shift, b) <= 1e-10);
    }
    CHECK(solver.analyses() == 1);
    CHECK(solver.factorizations() == 6);
  }
}

}  // namespace

TEST_CASE("linear supernodal: agrees with dense LLT on random block-sparse matrices") {
  struct Shape {
    const char* name;
    int blocks, max_block_size;
    double couplings;
  };
  const Shape shapes[] = {
      {"mixed sizes", 60, 9, 1.5},
      {"1x1 blocks", 80, 1, 2.0},
      {"6x6-ish blocks, sparse", 100, 6, 0.6},
      {"very sparse (mostly disconnected)", 50, 4, 0.2},
      {"block diagonal (all disconnected)", 20, 5, 0.0},
      {"dense-ish", 30, 5, 8.0},
      {"a single block", 1, 7, 0.0},
      {"two blocks", 2, 3, 1.0},
  };
  uint64_t seed = 1;
  for (const Shape& shape : shapes) {
    CAPTURE(shape.name);
    std::mt19937_64 rng(seed++);
    check_structure(random_block_structure(rng, shape.blocks, shape.max_block_size, shape.couplings),
                    seed);
  }
}

TEST_CASE("linear supernodal: patterns of one block size (pose graphs) agree with dense LLT") {
  // All blocks 3 x 3 or 6 x 6: the scatter copies them in loops of that size, unrolled
  // (supernodal_cholesky.cpp); the same structures with a block of another size take the
  // general loop.
  uint64_t seed = 40;
  for (int size : {3, 6}) {
    for (bool uniform : {true, false}) {
      CAPTURE(size);
      CAPTURE(uniform);
      std::mt19937_64 rng(seed++);
      lsjit::testing::RandomBlockStructure structure = random_block_structure(rng, 70, 1, 1.5);
      std::fill(structure.block_sizes.begin(), structure.block_sizes.end(), size);
      if (!uniform) structure.block_sizes[35] = size - 1;
      for (int i = 0; i < 70; ++i) structure.residuals[i].rows = structure.block_sizes[i];  // full-rank priors
      check_structure(structure, seed++);
    }
  }
}

TEST_CASE("linear supernodal: large supernodes (BLAS kernels) agree with dense LLT") {
  // Many couplings among few large blocks: the fill makes supernodes past the size at which
  // the kernels switch from our loops to OpenBLAS.
  std::mt19937_64 rng(77);
  lsjit::testing::RandomBlockStructure structure = random_block_structure(rng, 40, 12, 6.0);
  check_structure(structure, 78);
  SupernodalCholesky solver(make_matrix(structure).shared_pattern());
  int64_t widest = 0;
  const auto& a = solver.analysis();
  for (int s = 0; s < solver.num_supernodes(); ++s)
    widest = std::max(widest, a.column_begin[s + 1] - a.column_begin[s]);
  CHECK(widest > 24);
}

TEST_CASE("linear supernodal: two separate chains of blocks") {
  // Blocks 0-9 and 10-19 form two paths with no coupling between them: two trees.
  std::vector<int> sizes(20, 3);
  std::vector<std::pair<int, int>> pairs;
  lsjit::testing::RandomBlockStructure structure;
  structure.block_sizes = sizes;
  for (int i = 0; i < 20; ++i) structure.residuals.push_back({{i}, 3});
  for (int i = 0; i + 1 < 20; ++i)
    if (i != 9) {
      structure.residuals.push_back({{i, i + 1}, 2});
      structure.pairs.emplace_back(i, i + 1);
    }
  check_structure(structure, 5);
}

TEST_CASE("linear supernodal: the block orderings avoid the fill of an arrowhead") {
  // Block 0 is coupled to every other block: eliminated first it would fill everything.
  const int n = 30;
  std::vector<int> sizes(n, 3);
  std::vector<std::pair<int, int>> pairs;
  for (int i = 1; i < n; ++i) pairs.emplace_back(0, i);
  const BlockSparseSymmetric A(sizes, pairs);
  const double lower_nonzeros = static_cast<double>(A.pattern().lower_csc().row.size());
  for (SupernodalOrdering ordering : kOrderings) {
    CAPTURE(supernodal_ordering_name(ordering));
    const SupernodalCholesky solver(A.shared_pattern(), ordering);
    CHECK(solver.factor_nonzeros() == lower_nonzeros);
  }
  const SupernodalCholesky forced(A.shared_pattern(), SupernodalOrdering::NestedDissection);
  CHECK(forced.ordering() == SupernodalOrdering::NestedDissection);
}

TEST_CASE("linear supernodal: Automatic asks METIS only for a factor costly enough to repay it") {
  // A chain: AMD's factor has no fill, a few hundred flops per block; METIS is not asked.
  std::vector<int> chain_sizes(300, 6);
  std::vector<std::pair<int, int>> chain_pairs;
  for (int i = 1; i < 300; ++i) chain_pairs.emplace_back(i - 1, i);
  const BlockSparseSymmetric chain(chain_sizes, chain_pairs);
  const SupernodalAnalysis cheap = analyze_supernodal(chain.pattern(), SupernodalOrdering::Automatic);
  CHECK(cheap.ordering == SupernodalOrdering::Amd);
  CHECK(cheap.seconds.nested_dissection == 0);
  // An 80 x 80 grid of 6-blocks: AMD's factor is over a GFlop; METIS is asked, and the
  // analysis keeps whichever ordering predicts fewer flops. A 25 x 25 one stays under it
  // (as sphere2500's 0.38 GFlop does), and METIS is not asked.
  auto grid_of_side = [](int side) {  // side x side 6-blocks, each joined to its right and lower neighbour
    std::vector<std::pair<int, int>> pairs;
    for (int r = 0; r < side; ++r)
      for (int c = 0; c < side; ++c) {
        if (c + 1 < side) pairs.emplace_back(r * side + c, r * side + c + 1);
        if (r + 1 < side) pairs.emplace_back(r * side + c, (r + 1) * side + c);
      }
    return BlockSparseSymmetric(std::vector<int>(side * side, 6), pairs);
  };
  const int side = 80;
  const BlockSparseSymmetric grid = grid_of_side(side);
  const SupernodalAnalysis costly = analyze_supernodal(grid.pattern(), SupernodalOrdering::Automatic);
  CHECK(costly.seconds.nested_dissection > 0);
  const double amd = analyze_supernodal(grid.pattern(), SupernodalOrdering::Amd).factorization_flops;
  const double nd = analyze_supernodal(grid.pattern(), SupernodalOrdering::NestedDissection).factorization_flops;
  CHECK(amd >= 1e9);
  CHECK(costly.factorization_flops == std::min(amd, nd));
  const BlockSparseSymmetric small_grid = grid_of_side(25);
  const SupernodalAnalysis moderate = analyze_supernodal(small_grid.pattern(), SupernodalOrdering::Automatic);
  CHECK(moderate.factorization_flops > 1e7);  // far from free, yet not worth METIS
  CHECK(moderate.factorization_flops < 1e9);
  CHECK(moderate.ordering == SupernodalOrdering::Amd);
  CHECK(moderate.seconds.nested_dissection == 0);
}

TEST_CASE("linear supernodal: a non-positive pivot names A's scalar row and block") {
  // A negative enough shift on one scalar r of a random SPD matrix: every leading principal
  // submatrix without r stays positive definite, so r is the first pivot to fail whatever
  // the ordering, and the message must name r and its block in A's numbering.
  std::mt19937_64 rng(31);
  const auto structure = random_block_structure(rng, 40, 6, 1.5);
  BlockSparseSymmetric A = make_matrix(structure);
  fill_random(structure, A, rng);
  const Eigen::VectorXd b = random_vector(A.dim(), rng);
  for (SupernodalOrdering ordering : kOrderings) {
    SupernodalCholesky solver(A.shared_pattern(), ordering);
    for (int block : {0, 17, 39}) {
      const int64_t row = A.scalar_offset(block) + A.block_size(block) - 1;
      CAPTURE(row);
      Eigen::VectorXd shift = Eigen::VectorXd::Zero(A.dim());
      shift[row] = -1e6;
      Eigen::VectorXd x(A.dim());
      const LinearSolveSummary s = solver.solve(A, shift.data(), b.data(), x.data(), {});
      CHECK(!s.ok);
      CHECK(s.message == "the matrix is not positive definite (supernodal Cholesky: "
                         "non-positive pivot at scalar row " + std::to_string(row) +
                         ", block " + std::to_string(block) + ")");
    }
    // Singular: block 5 zeroed out entirely (its diagonal block too).
    BlockSparseSymmetric singular = A;
    for (int64_t k = singular.pattern().row_begin(5); k < singular.pattern().row_end(5); ++k) {
      const int j = singular.pattern().col(k);
      std::fill_n(singular.values().data() + singular.pattern().offset(k),
                  singular.block_size(5) * singular.block_size(j), 0.0);
    }
    for (int i = 0; i < 5; ++i)
      if (const int64_t off = singular.find(i, 5); off >= 0)
        std::fill_n(singular.values().data() + off, singular.block_size(i) * singular.block_size(5), 0.0);
    Eigen::VectorXd x(A.dim());
    const LinearSolveSummary s = solver.solve(singular, nullptr, b.data(), x.data(), {});
    CHECK(!s.ok);
    CHECK(mentions(s.message, "not positive definite"));
    CHECK(mentions(s.message, ", block 5)"));
    // And the same object still solves the good matrix.
    CHECK(solve_error(solver, A, nullptr, b) <= 1e-10);
  }
}

TEST_CASE("linear supernodal: NaN or infinity in A, shift or b, and a foreign pattern, are rejected") {
  std::mt19937_64 rng(41);
  const auto structure = random_block_structure(rng, 15, 4, 1.5);
  BlockSparseSymmetric A = make_matrix(structure);
  fill_random(structure, A, rng);
  SupernodalCholesky solver(A.shared_pattern());
  const Eigen::VectorXd b = random_vector(A.dim(), rng);
  Eigen::VectorXd x(A.dim());
  const double bad_values[] = {std::numeric_limits<double>::quiet_NaN(),
                               std::numeric_limits<double>::infinity()};
  for (double bad : bad_values) {
    BlockSparseSymmetric badA = A;
    badA.values()[A.pattern().offset(A.pattern().row_end(3) - 1)] = bad;
    LinearSolveSummary s = solver.solve(badA, nullptr, b.data(), x.data(), {});
    CHECK(!s.ok);
    CHECK(mentions(s.message, "A has a non-finite value in block (3, "));
    Eigen::VectorXd shift = Eigen::VectorXd::Ones(A.dim());
    shift[4] = bad;
    s = solver.solve(A, shift.data(), b.data(), x.data(), {});
    CHECK(!s.ok);
    CHECK(mentions(s.message, "shift[4]"));
    Eigen::VectorXd bad_b = b;
    bad_b[2] = bad;
    s = solver.solve(A, nullptr, bad_b.data(), x.data(), {});
    CHECK(!s.ok);
    CHECK(mentions(s.message, "b[2]"));
  }
  // One more coupling than A has: a different pattern.
  int partner = 1;
  while (A.find(0, partner) >= 0) ++partner;
  REQUIRE(partner < A.num_blocks());
  auto other = structure;
  other.pairs.emplace_back(0, partner);
  other.residuals.push_back({{0, partner}, 1});
  BlockSparseSymmetric B = make_matrix(other);
  fill_random(other, B, rng);
  const LinearSolveSummary s = solver.solve(B, nullptr, b.data(), x.data(), {});
  CHECK(!s.ok);
  CHECK(mentions(s.message, "does not have the block pattern"));
  CHECK(solver.factorizations() == 0);  // every call above was refused before factoring
  CHECK(solve_error(solver, A, nullptr, b) <= 1e-10);
}

TEST_CASE("linear supernodal: a solver made from a given analysis solves as one that made its own") {
  std::mt19937_64 rng(43);
  const auto structure = random_block_structure(rng, 60, 6, 1.5);
  BlockSparseSymmetric A = make_matrix(structure);
  fill_random(structure, A, rng);
  const Eigen::VectorXd b = random_vector(A.dim(), rng);
  auto analysis = std::make_shared<const SupernodalAnalysis>(
      analyze_supernodal(A.pattern(), SupernodalOrdering::Automatic));
  SupernodalCholesky given(A.shared_pattern(), analysis), own(A.shared_pattern());
  CHECK(given.ordering() == own.ordering());
  CHECK(given.factorization_flops() == own.factorization_flops());
  CHECK(solve_error(given, A, nullptr, b) < 1e-10);
  Eigen::VectorXd x_given(A.dim()), x_own(A.dim());
  REQUIRE(given.solve(A, nullptr, b.data(), x_given.data(), {}).ok);
  REQUIRE(own.solve(A, nullptr, b.data(), x_own.data(), {}).ok);
  CHECK(x_given == x_own);  // the same analysis, the same arithmetic

  // An analysis of another pattern is refused, naming both sizes.
  const auto other_structure = random_block_structure(rng, 10, 6, 1.5);
  const BlockSparseSymmetric other = make_matrix(other_structure);
  auto wrong = std::make_shared<const SupernodalAnalysis>(analyze_supernodal(other.pattern(), SupernodalOrdering::Amd));
  CHECK_THROWS_WITH_AS(SupernodalCholesky(A.shared_pattern(), wrong),
                       doctest::Contains("not one of this pattern"), lsjit::Error);
  CHECK_THROWS_WITH_AS(SupernodalCholesky(A.shared_pattern(), std::shared_ptr<const SupernodalAnalysis>()),
                       doctest::Contains("null"), lsjit::Error);
}
}  // namespace linear_supernodal_test
