// BlockPattern and BlockSparseSymmetric: the storage layout, assembly, and the products and
// views that the solvers build on, checked against dense JᵀJ computed independently.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "../support/random_block_sparse.h"
#include "lsjit/runtime/solve/linear/block_sparse.h"

using lsjit::linear::BlockPattern;
using lsjit::linear::BlockSparseSymmetric;

TEST_CASE("linear BlockSparseSymmetric::uninitialized: the pattern's size, NaN under the sanitizers") {
  auto pattern = std::make_shared<const BlockPattern>(std::vector<int>{2, 1, 3}, std::vector<std::pair<int, int>>{{0, 2}});
  BlockSparseSymmetric A = BlockSparseSymmetric::uninitialized(pattern);
  CHECK(A.values().size() == static_cast<size_t>(pattern->num_values()));
  CHECK(&A.pattern() == pattern.get());
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // So that the sanitizer builds' tests catch a caller that reads a block it never wrote.
  CHECK(std::all_of(A.values().begin(), A.values().end(), [](double x) { return std::isnan(x); }));
#endif
  A.set_zero();  // written, the matrix is an ordinary one
  CHECK(A.to_dense().isZero(0));
  const BlockSparseSymmetric zero(pattern);  // the ordinary constructor still zeroes
  CHECK(std::all_of(zero.values().begin(), zero.values().end(), [](double x) { return x == 0.0; }));
}

TEST_CASE("linear BlockPattern: pairs in any order and duplicates give one block each") {
  // (2, 0) and (0, 2) are one block; (1, 1) is implied anyway.
  const BlockPattern p({2, 1, 3, 2}, {{2, 0}, {0, 2}, {1, 3}, {3, 1}, {0, 2}, {1, 1}});
  CHECK(p.num_blocks() == 4);
  CHECK(p.dim() == 8);
  CHECK(p.scalar_offset(2) == 3);
  CHECK(p.num_stored_blocks() == 6);
  // Row-major blocks back to back in row order: (0,0) 2x2, (0,2) 2x3, (1,1), (1,3) 1x2,
  // (2,2) 3x3, (3,3) 2x2.
  CHECK(p.find(0, 0) == 0);
  CHECK(p.find(0, 2) == 4);
  CHECK(p.find(1, 1) == 10);
  CHECK(p.find(1, 3) == 11);
  CHECK(p.find(2, 2) == 13);
  CHECK(p.find(3, 3) == 22);
  CHECK(p.num_values() == 26);
  // Each row starts with its diagonal block.
  for (int i = 0; i < p.num_blocks(); ++i) CHECK(p.col(p.row_begin(i)) == i);
  CHECK(p.row_end(0) - p.row_begin(0) == 2);
  CHECK(p.row_end(2) - p.row_begin(2) == 1);
}

TEST_CASE("linear BlockPattern: pair_blocks gives each pair's stored block, as find_index") {
  const std::vector<std::pair<int, int>> pairs = {{2, 0}, {0, 2}, {1, 3}, {3, 1}, {0, 2}, {1, 1}, {4, 0}};
  std::vector<int64_t> blocks;
  const BlockPattern p({2, 1, 3, 2, 1}, pairs, &blocks);
  REQUIRE(blocks.size() == pairs.size());
  for (size_t k = 0; k < pairs.size(); ++k) {
    CAPTURE(k);
    const auto [i, j] = pairs[k];
    CHECK(blocks[k] == p.find_index(std::min(i, j), std::max(i, j)));
    CHECK(blocks[k] >= 0);
  }
  // Random patterns: every pair, duplicates and both orders included.
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 30);
    std::vector<std::pair<int, int>> random_pairs;
    for (int k = 0; k < 3 * n; ++k)
      random_pairs.emplace_back(static_cast<int>(rng() % n), static_cast<int>(rng() % n));
    const BlockPattern q(std::vector<int>(static_cast<size_t>(n), 2), random_pairs, &blocks);
    REQUIRE(blocks.size() == random_pairs.size());
    for (size_t k = 0; k < random_pairs.size(); ++k) {
      const auto [i, j] = random_pairs[k];
      CHECK(blocks[k] == q.find_index(std::min(i, j), std::max(i, j)));
    }
    // The span form (analyze()'s) reads the pairs in place and writes the same blocks; an
    // empty span asks for none, any other size is refused.
    std::vector<int64_t> spanned(random_pairs.size(), -7);
    const BlockPattern r(std::vector<int>(static_cast<size_t>(n), 2), std::span<const std::pair<int, int>>(random_pairs),
                         std::span<int64_t>(spanned));
    CHECK(r == q);
    CHECK(spanned == blocks);
    CHECK(BlockPattern(std::vector<int>(static_cast<size_t>(n), 2), std::span<const std::pair<int, int>>(random_pairs),
                       std::span<int64_t>()) == q);
    std::vector<int64_t> short_by_one(random_pairs.size() - 1);
    CHECK_THROWS_AS(BlockPattern(std::vector<int>(static_cast<size_t>(n), 2),
                                 std::span<const std::pair<int, int>>(random_pairs), std::span<int64_t>(short_by_one)),
                    std::invalid_argument);
  }
}

TEST_CASE("linear BlockPattern: find returns -1 for lower, absent and out-of-range blocks") {
  const BlockPattern p({2, 1, 3, 2}, {{0, 2}, {1, 3}});
  CHECK(p.find(2, 0) == -1);  // stored as (0, 2)
  CHECK(p.find(0, 1) == -1);
  CHECK(p.find(2, 3) == -1);
  CHECK(p.find(-1, 0) == -1);
  CHECK(p.find(0, 4) == -1);
  CHECK(p.find(4, 4) == -1);
}

TEST_CASE("linear BlockPattern: invalid sizes and pairs throw, equal patterns compare equal") {
  CHECK_THROWS_AS(BlockPattern({2, 0, 1}, {}), std::invalid_argument);
  CHECK_THROWS_AS(BlockPattern({2, 1}, {{0, 2}}), std::invalid_argument);
  CHECK_THROWS_AS(BlockPattern({2, 1}, {{-1, 0}}), std::invalid_argument);
  CHECK_THROWS_AS(BlockSparseSymmetric(nullptr), std::invalid_argument);
  CHECK(BlockPattern({1, 2, 3}, {{0, 2}, {1, 2}}) == BlockPattern({1, 2, 3}, {{2, 1}, {2, 0}}));
  CHECK(!(BlockPattern({1, 2, 3}, {{0, 2}}) == BlockPattern({1, 2, 3}, {{0, 2}, {0, 1}})));
  CHECK(!(BlockPattern({1, 2, 3}, {}) == BlockPattern({1, 3, 2}, {})));
  const BlockPattern empty({}, {});
  CHECK(empty.dim() == 0);
  CHECK(empty.num_values() == 0);
}

TEST_CASE("linear BlockSparseSymmetric: add_to_block below the diagonal adds the transpose") {
  BlockSparseSymmetric A({2, 3}, {{0, 1}});
  const double B10[6] = {1, 2, 3, 4, 5, 6};  // 3x2 block (1, 0)
  A.add_to_block(1, 0, B10);
  const double B01[6] = {10, 20, 30, 40, 50, 60};  // 2x3 block (0, 1)
  A.add_to_block(0, 1, B01);
  const Eigen::MatrixXd dense = A.to_dense();
  // A(0, 2 + c) = B01(0, c) + B10(c, 0)
  CHECK(dense(0, 2) == 11);
  CHECK(dense(0, 3) == 23);
  CHECK(dense(1, 2) == 42);
  CHECK(dense(4, 1) == 66);
  CHECK(dense(1, 4) == 66);
  CHECK_THROWS_AS(BlockSparseSymmetric({1, 1, 1}, {{0, 1}}).add_to_block(2, 0, B10),
                  std::out_of_range);
}

TEST_CASE("linear BlockSparseSymmetric: to_dense, multiply and diagonal agree with dense JᵀJ") {
  std::mt19937_64 rng(1);
  for (int trial = 0; trial < 30; ++trial) {
    CAPTURE(trial);
    const auto s = lsjit::testing::random_block_structure(rng, 1 + trial % 25);
    BlockSparseSymmetric A = lsjit::testing::make_matrix(s);
    const Eigen::MatrixXd J = lsjit::testing::fill_random(s, A, rng);
    const Eigen::MatrixXd reference = J.transpose() * J;
    const Eigen::MatrixXd dense = A.to_dense();
    CHECK((dense - reference).norm() <= 1e-12 * reference.norm());

    const Eigen::VectorXd x = lsjit::testing::random_vector(A.dim(), rng);
    Eigen::VectorXd y = Eigen::VectorXd::Constant(A.dim(), 7.0);  // overwritten, not added to
    A.multiply(x.data(), y.data());
    CHECK((y - reference * x).norm() <= 1e-12 * (reference * x).norm());

    Eigen::VectorXd d(A.dim());
    A.diagonal(d.data());
    CHECK((d - reference.diagonal()).norm() <= 1e-12 * reference.diagonal().norm());
  }
}

TEST_CASE("linear BlockSparseSymmetric: the strictly lower triangle of diagonal blocks is never read") {
  std::mt19937_64 rng(2);
  const auto s = lsjit::testing::random_block_structure(rng, 12);
  BlockSparseSymmetric A = lsjit::testing::make_matrix(s);
  lsjit::testing::fill_random(s, A, rng);
  const Eigen::MatrixXd dense = A.to_dense();
  const Eigen::VectorXd x = lsjit::testing::random_vector(A.dim(), rng);
  Eigen::VectorXd y_before(A.dim()), d_before(A.dim());
  A.multiply(x.data(), y_before.data());
  A.diagonal(d_before.data());

  int poisoned = 0;
  for (int i = 0; i < A.num_blocks(); ++i) {
    const int n = A.block_size(i);
    double* D = A.values().data() + A.find(i, i);
    for (int a = 1; a < n; ++a)
      for (int b = 0; b < a; ++b, ++poisoned) D[a * n + b] = std::numeric_limits<double>::quiet_NaN();
  }
  REQUIRE(poisoned > 0);
  CHECK(A.to_dense() == dense);
  Eigen::VectorXd y(A.dim()), d(A.dim());
  A.multiply(x.data(), y.data());
  A.diagonal(d.data());
  CHECK(y == y_before);
  CHECK(d == d_before);
}

TEST_CASE("linear BlockPattern: lower_csc is the scalar lower triangle with a map to values") {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 10; ++trial) {
    const auto s = lsjit::testing::random_block_structure(rng, 3 + 2 * trial);
    BlockSparseSymmetric A = lsjit::testing::make_matrix(s);
    lsjit::testing::fill_random(s, A, rng);
    const BlockPattern::LowerCsc csc = A.pattern().lower_csc();
    REQUIRE(static_cast<int64_t>(csc.column_begin.size()) == A.dim() + 1);
    Eigen::MatrixXd lower = Eigen::MatrixXd::Zero(A.dim(), A.dim());
    for (int64_t c = 0; c < A.dim(); ++c) {
      REQUIRE(csc.column_begin[c] < csc.column_begin[c + 1]);
      CHECK(csc.row[csc.column_begin[c]] == c);  // diagonal first
      for (int64_t e = csc.column_begin[c]; e < csc.column_begin[c + 1]; ++e) {
        if (e > csc.column_begin[c]) CHECK(csc.row[e] > csc.row[e - 1]);
        lower(csc.row[e], c) = A.values()[csc.value_index[e]];
      }
    }
    const Eigen::MatrixXd dense = A.to_dense();
    CHECK(lower == Eigen::MatrixXd(dense.triangularView<Eigen::Lower>()));
  }
}

TEST_CASE("linear BlockSparseSymmetric: copies share the pattern and own their values") {
  BlockSparseSymmetric A({2, 2}, {{0, 1}});
  A.values()[0] = 3;
  BlockSparseSymmetric B = A;
  CHECK(B.shared_pattern() == A.shared_pattern());
  B.values()[0] = 5;
  CHECK(A.values()[0] == 3);
  BlockSparseSymmetric C(A.shared_pattern());
  CHECK(C.values().size() == A.values().size());
  for (double v : C.values()) CHECK(v == 0);
  A.set_zero();
  for (double v : A.values()) CHECK(v == 0);
}

TEST_CASE("linear BlockPattern: uniform_block_size is the size a range of blocks shares, else 0") {
  const BlockPattern p({6, 6, 6, 3, 3}, {{0, 3}, {1, 4}});
  CHECK(p.uniform_block_size(0, 3) == 6);
  CHECK(p.uniform_block_size(3, 5) == 3);
  CHECK(p.uniform_block_size(1, 2) == 6);
  CHECK(p.uniform_block_size(0, 5) == 0);
  CHECK(p.uniform_block_size(2, 4) == 0);
  CHECK(p.uniform_block_size(2, 2) == 0);  // empty
}
