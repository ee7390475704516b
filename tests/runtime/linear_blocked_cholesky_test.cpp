// blocked_cholesky against Eigen's LLT on random SPD matrices, for this CPU's instruction set
// and the generic code: the factor, the solve, a padded identity block, and the column of the
// first bad pivot for matrices that are not positive definite.
#include <doctest/doctest.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "lsjit/runtime/solve/linear/blocked_cholesky.h"

using lsjit::linear::blocked_cholesky;
using lsjit::linear::blocked_cholesky_solve;

namespace {

// A random SPD n x n matrix, condition number around 1e3.
Eigen::MatrixXd random_spd(int64_t n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  Eigen::MatrixXd G(n, n);
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = 0; r < n; ++r) G(r, c) = normal(rng);
  Eigen::MatrixXd A = G * G.transpose() / static_cast<double>(n);
  A.diagonal().array() += 1e-3;
  return A;
}

// The column-major buffer blocked_cholesky takes: the lower triangle of A, the upper filled
// with garbage that must not be read.
std::vector<double> lower_with_garbage(const Eigen::MatrixXd& A) {
  const int64_t n = A.rows();
  std::vector<double> a(n * n);
  for (int64_t c = 0; c < n; ++c)
    for (int64_t r = 0; r < n; ++r)
      a[c * n + r] = r >= c ? A(r, c) : std::numeric_limits<double>::quiet_NaN();
  return a;
}

}  // namespace

TEST_CASE("linear blocked_cholesky: factor and solve match Eigen's LLT, host and generic code") {
  std::mt19937_64 rng(71);
  for (int64_t n : {16, 32, 48, 64, 80, 96, 144, 448}) {
    CAPTURE(n);
    const Eigen::MatrixXd A = random_spd(n, rng);
    const Eigen::MatrixXd L = A.llt().matrixL();
    const Eigen::VectorXd b = Eigen::VectorXd::Random(n);
    const Eigen::VectorXd reference = A.llt().solve(b);
    for (bool host : {true, false}) {
      CAPTURE(host);
      std::vector<double> a = lower_with_garbage(A);
      REQUIRE(blocked_cholesky(a.data(), n, host) == -1);
      Eigen::MatrixXd mine = Eigen::Map<Eigen::MatrixXd>(a.data(), n, n).triangularView<Eigen::Lower>();
      CHECK((mine - L).norm() <= 1e-12 * L.norm());
      Eigen::VectorXd x = b;
      blocked_cholesky_solve(a.data(), n, x.data(), host);
      CHECK((x - reference).norm() <= 1e-9 * reference.norm());
    }
  }
}

TEST_CASE("linear blocked_cholesky: an identity pad leaves the factor and solution of the rest") {
  std::mt19937_64 rng(72);
  const int64_t n = 41, padded = 48;
  const Eigen::MatrixXd A = random_spd(n, rng);
  Eigen::MatrixXd P = Eigen::MatrixXd::Identity(padded, padded);
  P.topLeftCorner(n, n) = A;
  std::vector<double> a = lower_with_garbage(P);
  REQUIRE(blocked_cholesky(a.data(), padded) == -1);
  const Eigen::MatrixXd L = A.llt().matrixL();
  const Eigen::Map<Eigen::MatrixXd> mine(a.data(), padded, padded);
  CHECK((Eigen::MatrixXd(mine.topLeftCorner(n, n).triangularView<Eigen::Lower>()) - L).norm() <= 1e-12 * L.norm());
  CHECK(mine.bottomRightCorner(padded - n, padded - n).diagonal().isOnes());
  Eigen::VectorXd x = Eigen::VectorXd::Zero(padded);
  const Eigen::VectorXd b = Eigen::VectorXd::Random(n);
  x.head(n) = b;
  blocked_cholesky_solve(a.data(), padded, x.data());
  const Eigen::VectorXd reference = A.llt().solve(b);
  CHECK((x.head(n) - reference).norm() <= 1e-9 * reference.norm());
  CHECK(x.tail(padded - n).isZero());
}

TEST_CASE("linear blocked_cholesky: reports the first column without a positive pivot") {
  std::mt19937_64 rng(73);
  const int64_t n = 96;
  for (int64_t bad : {0, 5, 31, 32, 33, 70, 95}) {
    CAPTURE(bad);
    // A with row and column `bad` replaced so that its Schur complement there is -1: the
    // leading bad x bad block stays positive definite, so `bad` is the first failing pivot.
    Eigen::MatrixXd A = random_spd(n, rng);
    const Eigen::VectorXd coupling = A.col(bad);
    if (bad > 0) {
      const Eigen::MatrixXd lead = A.topLeftCorner(bad, bad);
      const Eigen::VectorXd c = coupling.head(bad);
      A(bad, bad) = c.dot(lead.llt().solve(c)) - 1.0;
    } else {
      A(0, 0) = -1.0;
    }
    for (bool host : {true, false}) {
      CAPTURE(host);
      std::vector<double> a = lower_with_garbage(A);
      CHECK(blocked_cholesky(a.data(), n, host) == bad);
    }
  }
  // A NaN on the diagonal fails too.
  Eigen::MatrixXd A = random_spd(32, rng);
  A(7, 7) = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> a = lower_with_garbage(A);
  CHECK(blocked_cholesky(a.data(), 32) == 7);
}
