// The linear solvers against a dense LDLT reference on random SPD block-sparse problems,
// the reuse of their symbolic analysis, and their failures: singular, indefinite and
// non-finite systems must give ok = false with a message, never a crash or a silent NaN.
#include <doctest/doctest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../support/random_block_sparse.h"
#include "lsjit/runtime/solve/linear/cholmod_cholesky.h"
#include "lsjit/runtime/solve/linear/linear_solver.h"
#include "lsjit/runtime/solve/linear/supernodal_cholesky.h"

namespace linear_solver_test {  // its using-directives stay in this file (tests are unity-built)
using namespace lsjit::linear;
using lsjit::testing::fill_random;
using lsjit::testing::make_matrix;
using lsjit::testing::random_block_structure;
using lsjit::testing::random_vector;

namespace {

constexpr lsjit::LinearSolver kAllTypes[] = {
    lsjit::LinearSolver::DenseCholesky, lsjit::LinearSolver::SparseCholesky,
    lsjit::LinearSolver::EigenSparseCholesky, lsjit::LinearSolver::ConjugateGradient};

// CG converges to (almost) the direct solution only with a tolerance near machine precision.
LinearSolverOptions tight_linear() {
  LinearSolverOptions o;
  o.cg_relative_tolerance = 1e-14;
  o.max_cg_iterations = 10000;
  return o;
}

// Every solver to test: the four types, the supernodal Cholesky with each forced ordering
// (the default one picks either), plus CHOLMOD with both of its orderings when lsjit has it.
std::vector<std::unique_ptr<LinearSolver>> all_solvers(const BlockSparseSymmetric& A) {
  std::vector<std::unique_ptr<LinearSolver>> solvers;
  for (lsjit::LinearSolver t : kAllTypes) solvers.push_back(make_linear_solver(t, A.shared_pattern()));
  for (SupernodalOrdering o : {SupernodalOrdering::Amd, SupernodalOrdering::NestedDissection})
    solvers.push_back(std::make_unique<SupernodalCholesky>(A.shared_pattern(), o));
  if (cholmod_available()) {
    solvers.push_back(std::make_unique<CholmodCholesky>(A.shared_pattern()));
    solvers.push_back(std::make_unique<CholmodCholesky>(A.shared_pattern(),
                                                        CholmodCholesky::Ordering::ScalarAmd));
  }
  return solvers;
}

Eigen::VectorXd reference_solution(const BlockSparseSymmetric& A, const Eigen::VectorXd* shift,
                                   const Eigen::VectorXd& b) {
  Eigen::MatrixXd dense = A.to_dense();
  if (shift != nullptr) dense.diagonal() += *shift;
  return dense.ldlt().solve(b);
}

double relative_error(const Eigen::VectorXd& x, const Eigen::VectorXd& reference) {
  return (x - reference).norm() / reference.norm();
}

// Solves and checks against the reference; returns the summary.
LinearSolveSummary check_solve(LinearSolver& solver, const BlockSparseSymmetric& A,
                               const Eigen::VectorXd* shift, const Eigen::VectorXd& b) {
  CAPTURE(solver.name());
  Eigen::VectorXd x = Eigen::VectorXd::Constant(A.dim(), -99.0);
  const LinearSolveSummary s =
      solver.solve(A, shift != nullptr ? shift->data() : nullptr, b.data(), x.data(), tight_linear());
  CAPTURE(s.message);
  CHECK(s.ok);
  CHECK(s.converged);
  CHECK(s.seconds >= 0);
  CHECK(relative_error(x, reference_solution(A, shift, b)) <= 1e-9);
  // direct: the identity the LM model decrease relies on, xᵀAx = bᵀx − Σ shift x², holds to
  // rounding; CG claims no such thing.
  CHECK(s.direct == (solver.name() != "cg"));
  if (s.direct) {
    const Eigen::MatrixXd dense = A.to_dense();
    const double damped = shift != nullptr ? x.dot(shift->cwiseProduct(x)) : 0.0;
    CHECK(std::abs(x.dot(dense * x) - (b.dot(x) - damped)) <= 1e-10 * std::abs(x.dot(dense * x) + damped));
  }
  return s;
}

LinearSolveSummary solve(LinearSolver& solver, const BlockSparseSymmetric& A,
                         const double* shift, const double* b,
                         const LinearSolverOptions& options = tight_linear()) {
  std::vector<double> x(A.dim());
  return solver.solve(A, shift, b, x.data(), options);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("linear solvers match a dense LDLT on random SPD block-sparse systems") {
  std::mt19937_64 rng(10);
  for (int trial = 0; trial < 24; ++trial) {
    CAPTURE(trial);
    const auto s = random_block_structure(rng, 1 + (7 * trial) % 40);
    BlockSparseSymmetric A = make_matrix(s);
    fill_random(s, A, rng);
    const Eigen::VectorXd b = random_vector(A.dim(), rng);
    const Eigen::VectorXd shift = random_vector(A.dim(), rng, 0.0, 2.0);
    for (auto& solver : all_solvers(A)) {
      check_solve(*solver, A, nullptr, b);
      check_solve(*solver, A, &shift, b);
    }
  }
}

TEST_CASE("linear solvers reuse the symbolic analysis across new values and shifts") {
  std::mt19937_64 rng(11);
  const auto s = random_block_structure(rng, 30);
  BlockSparseSymmetric A = make_matrix(s);
  const BlockSparseSymmetric structure = A;  // zero values: only the pattern is used
  std::vector<std::unique_ptr<LinearSolver>> solvers = all_solvers(structure);
  const int rounds = 4;
  for (int round = 0; round < rounds; ++round) {
    fill_random(s, A, rng);
    const Eigen::VectorXd b = random_vector(A.dim(), rng);
    // An LM iteration: several damping vectors on one matrix.
    for (double lambda : {1e-4, 1e-1, 10.0}) {
      Eigen::VectorXd shift(A.dim());
      A.diagonal(shift.data());
      shift *= lambda;
      for (auto& solver : solvers) check_solve(*solver, A, &shift, b);
    }
  }
  for (auto& solver : solvers) {
    CAPTURE(solver->name());
    CHECK(solver->analyses() == 1);
    CHECK(solver->factorizations() == rounds * 3);
  }
}

TEST_CASE("linear solvers reject an all-zero diagonal block: singular") {
  // Block 1 is touched by no residual and not damped.
  BlockSparseSymmetric A({2, 3, 1}, {{0, 2}});
  const double D0[4] = {4, 1, 1, 3}, D2[1] = {2}, B02[2] = {1, -1};
  A.add_to_block(0, 0, D0);
  A.add_to_block(2, 2, D2);
  A.add_to_block(0, 2, B02);
  const std::vector<double> b(A.dim(), 1.0);
  for (auto& solver : all_solvers(A)) {
    CAPTURE(solver->name());
    const LinearSolveSummary s = solve(*solver, A, nullptr, b.data());
    CHECK(!s.ok);
    CHECK(contains(s.message, "not positive definite"));
    // Damping the empty block makes the system solvable, with the same solver object.
    const std::vector<double> shift = {0, 0, 1, 1, 1, 0};
    const Eigen::VectorXd shift_vector = Eigen::Map<const Eigen::VectorXd>(shift.data(), 6);
    check_solve(*solver, A, &shift_vector, Eigen::VectorXd::Ones(6));
  }
}

TEST_CASE("linear solvers reject singular and indefinite matrices whose diagonal blocks are fine") {
  // [[1, c], [c, 1]] with 1x1 blocks: singular for c = 1, indefinite for c = 2. With b along
  // the (1, -1) eigenvector, CG's first direction has pᵀAp = 1 - c <= 0: a breakdown.
  for (double c : {1.0, 2.0}) {
    CAPTURE(c);
    BlockSparseSymmetric A({1, 1}, {{0, 1}});
    const double one = 1;
    A.add_to_block(0, 0, &one);
    A.add_to_block(1, 1, &one);
    A.add_to_block(0, 1, &c);
    const double b[2] = {1, -1};
    for (auto& solver : all_solvers(A)) {
      CAPTURE(solver->name());
      const LinearSolveSummary s = solve(*solver, A, nullptr, b);
      CHECK(!s.ok);
      CHECK(contains(s.message, "not positive definite"));
    }
  }
}

TEST_CASE("linear solvers reject a random system made indefinite by a negative shift") {
  std::mt19937_64 rng(12);
  const auto s = random_block_structure(rng, 25);
  BlockSparseSymmetric A = make_matrix(s);
  fill_random(s, A, rng);
  // Shift by -c with c between the smallest eigenvalue and both the second smallest and
  // the smallest eigenvalue of any diagonal block (which is >= the smallest, by interlacing):
  // one negative eigenvalue, every diagonal block positive definite, so that CG has to find
  // the negative curvature itself.
  const Eigen::MatrixXd dense = A.to_dense();
  const Eigen::VectorXd eigenvalues =
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(dense).eigenvalues();
  double next = eigenvalues(1);
  for (int i = 0; i < A.num_blocks(); ++i) {
    const Eigen::Index n = A.block_size(i), r = A.scalar_offset(i);
    const Eigen::MatrixXd block = dense.block(r, r, n, n);
    next = std::min(next, Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(block).eigenvalues()(0));
  }
  REQUIRE(next - eigenvalues(0) > 1e-3 * eigenvalues(0));
  const double c = 0.5 * (eigenvalues(0) + next);
  const Eigen::VectorXd shift = Eigen::VectorXd::Constant(A.dim(), -c);
  const Eigen::VectorXd b = random_vector(A.dim(), rng);
  for (auto& solver : all_solvers(A)) {
    CAPTURE(solver->name());
    const LinearSolveSummary bad = solve(*solver, A, shift.data(), b.data());
    CAPTURE(bad.message);
    CHECK(!bad.ok);
    CHECK(contains(bad.message, "not positive definite"));
    // LM's answer to a failed step is more damping: the solver must work again.
    const Eigen::VectorXd damped = Eigen::VectorXd::Constant(A.dim(), 0.5);
    check_solve(*solver, A, &damped, b);
  }
}

TEST_CASE("linear solvers reject NaN and infinity in A, the shift and b") {
  std::mt19937_64 rng(13);
  const auto s = random_block_structure(rng, 8);
  BlockSparseSymmetric good = make_matrix(s);
  fill_random(s, good, rng);
  const Eigen::VectorXd b = random_vector(good.dim(), rng);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const int64_t last = good.dim() - 1;

  BlockSparseSymmetric nan_in_diagonal = good;
  nan_in_diagonal.values()[good.find(3, 3)] = nan;
  BlockSparseSymmetric inf_off_diagonal = good;
  int i = 0;  // a block row with an off-diagonal block
  while (good.pattern().row_end(i) - good.pattern().row_begin(i) < 2) REQUIRE(++i < good.num_blocks());
  inf_off_diagonal.values()[good.pattern().offset(good.pattern().row_begin(i) + 1)] = -inf;
  Eigen::VectorXd nan_shift = Eigen::VectorXd::Ones(good.dim());
  nan_shift(last) = nan;
  Eigen::VectorXd inf_b = b;
  inf_b(0) = inf;

  for (auto& solver : all_solvers(good)) {
    CAPTURE(solver->name());
    LinearSolveSummary r = solve(*solver, nan_in_diagonal, nullptr, b.data());
    CHECK(!r.ok);
    CHECK(contains(r.message, "block (3, 3)"));
    r = solve(*solver, inf_off_diagonal, nullptr, b.data());
    CHECK(!r.ok);
    CHECK(contains(r.message, "block (" + std::to_string(i) + ", "));
    r = solve(*solver, good, nan_shift.data(), b.data());
    CHECK(!r.ok);
    CHECK(contains(r.message, "shift[" + std::to_string(last) + "] = nan"));
    r = solve(*solver, good, nullptr, inf_b.data());
    CHECK(!r.ok);
    CHECK(contains(r.message, "b[0] = inf"));
    check_solve(*solver, good, nullptr, b);  // still usable
  }
}

TEST_CASE("linear solvers ignore the lower triangle of diagonal blocks") {
  std::mt19937_64 rng(14);
  const auto s = random_block_structure(rng, 15);
  BlockSparseSymmetric A = make_matrix(s);
  fill_random(s, A, rng);
  const Eigen::VectorXd b = random_vector(A.dim(), rng);
  const Eigen::VectorXd clean = reference_solution(A, nullptr, b);
  for (int i = 0; i < A.num_blocks(); ++i) {
    const int n = A.block_size(i);
    double* D = A.values().data() + A.find(i, i);
    for (int a = 1; a < n; ++a)
      for (int c = 0; c < a; ++c) D[a * n + c] = std::numeric_limits<double>::quiet_NaN();
  }
  for (auto& solver : all_solvers(A)) {
    CAPTURE(solver->name());
    Eigen::VectorXd x(A.dim());
    const LinearSolveSummary r = solver->solve(A, nullptr, b.data(), x.data(), tight_linear());
    CAPTURE(r.message);
    CHECK(r.ok);
    CHECK(relative_error(x, clean) <= 1e-9);
  }
}

TEST_CASE("linear solvers reject a matrix with another pattern, accept an equal pattern") {
  const BlockSparseSymmetric structure({2, 2, 2}, {{0, 1}});
  BlockSparseSymmetric other({2, 2, 2}, {{0, 2}});
  BlockSparseSymmetric equal({2, 2, 2}, {{1, 0}});  // a different object, the same pattern
  for (BlockSparseSymmetric* A : {&other, &equal})
    for (int i = 0; i < 3; ++i) {
      const double D[4] = {2, 0, 0, 2};
      A->add_to_block(i, i, D);
    }
  const std::vector<double> b(6, 1.0);
  for (auto& solver : all_solvers(structure)) {
    CAPTURE(solver->name());
    const LinearSolveSummary r = solve(*solver, other, nullptr, b.data());
    CHECK(!r.ok);
    CHECK(contains(r.message, "pattern"));
    CHECK(solve(*solver, equal, nullptr, b.data()).ok);
  }
}

TEST_CASE("linear solvers handle an empty system and null b or x") {
  const BlockSparseSymmetric empty({}, {});
  for (auto& solver : all_solvers(empty)) {
    CAPTURE(solver->name());
    CHECK(solver->solve(empty, nullptr, nullptr, nullptr, tight_linear()).message ==
          "b and x must not be null");
    double unused = 0;
    CHECK(solver->solve(empty, nullptr, &unused, &unused, tight_linear()).ok);
  }
}

TEST_CASE("linear cg: iteration limit, runtime tolerance, zero right-hand side, bad options") {
  std::mt19937_64 rng(15);
  const auto s = random_block_structure(rng, 40);
  BlockSparseSymmetric A = make_matrix(s);
  fill_random(s, A, rng);
  const Eigen::VectorXd b = random_vector(A.dim(), rng);
  auto cg = make_linear_solver(lsjit::LinearSolver::ConjugateGradient, A.shared_pattern());
  Eigen::VectorXd x(A.dim());

  LinearSolverOptions options;
  options.max_cg_iterations = 3;
  options.cg_relative_tolerance = 1e-12;
  LinearSolveSummary r = cg->solve(A, nullptr, b.data(), x.data(), options);
  CHECK(r.ok);  // an inexact step is still a step
  CHECK(!r.converged);
  CHECK(r.iterations == 3);
  CHECK(r.relative_residual > 1e-12);
  CHECK(contains(r.message, "max_cg_iterations = 3"));

  // Loosening the tolerance, at runtime, stops earlier; the reported residual is the true one
  // up to the recurrence's rounding.
  int previous_iterations = 1 << 30;
  for (double tolerance : {1e-12, 1e-6, 1e-2}) {
    options.max_cg_iterations = 1000;
    options.cg_relative_tolerance = tolerance;
    r = cg->solve(A, nullptr, b.data(), x.data(), options);
    CAPTURE(tolerance);
    CHECK(r.ok);
    CHECK(r.converged);
    CHECK(r.relative_residual <= tolerance);
    CHECK(r.iterations < previous_iterations);
    previous_iterations = r.iterations;
    Eigen::VectorXd Ax(A.dim());
    A.multiply(x.data(), Ax.data());
    CHECK((b - Ax).norm() / b.norm() <= tolerance * 1.01 + 1e-13);
  }

  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(A.dim());
  x.setConstant(5);
  r = cg->solve(A, nullptr, zero.data(), x.data(), options);
  CHECK(r.ok);
  CHECK(r.iterations == 0);
  CHECK(x.isZero(0));

  for (auto [iterations, tolerance] : {std::pair{0, 1e-6}, std::pair{10, -1.0},
                                       std::pair{10, std::numeric_limits<double>::quiet_NaN()}}) {
    options.max_cg_iterations = iterations;
    options.cg_relative_tolerance = tolerance;
    r = cg->solve(A, nullptr, b.data(), x.data(), options);
    CHECK(!r.ok);
    CHECK(contains(r.message, "max_cg_iterations"));
  }
}

TEST_CASE("linear cholmod: the block AMD ordering avoids the fill of an arrowhead") {
  if (!cholmod_available()) {
    MESSAGE("lsjit built without CHOLMOD");
    return;
  }
  // Block 0 is coupled to every other block. Eliminated first (the natural order) it would
  // fill the whole matrix; AMD eliminates it last, and L has exactly A's lower triangle.
  const int n = 30;
  std::vector<int> sizes(n, 3);
  std::vector<std::pair<int, int>> pairs;
  for (int i = 1; i < n; ++i) pairs.emplace_back(0, i);
  const BlockSparseSymmetric A(sizes, pairs);
  const double lower_nonzeros = static_cast<double>(A.pattern().lower_csc().row.size());
  const CholmodCholesky block(A.shared_pattern(), CholmodCholesky::Ordering::BlockAmd);
  const CholmodCholesky scalar(A.shared_pattern(), CholmodCholesky::Ordering::ScalarAmd);
  CHECK(block.factor_nonzeros() == lower_nonzeros);
  CHECK(scalar.factor_nonzeros() == lower_nonzeros);
  CHECK(block.factorization_flops() > 0);
}

TEST_CASE("linear solver names and types") {
  for (lsjit::LinearSolver t : kAllTypes) CHECK(lsjit::linear_solver_from_name(linear_solver_name(t)) == t);
  CHECK(!lsjit::linear_solver_from_name("qr").has_value());
  const BlockSparseSymmetric A({1}, {});
  CHECK(make_linear_solver(lsjit::LinearSolver::SparseCholesky, A.shared_pattern())->name() ==
        "supernodal_cholesky");
  CHECK(make_linear_solver(lsjit::LinearSolver::DenseCholesky, A.shared_pattern())->name() == "dense_cholesky");
  CHECK(make_linear_solver(lsjit::LinearSolver::EigenSparseCholesky, A.shared_pattern())->name() ==
        "eigen_sparse_cholesky");
  CHECK(make_linear_solver(lsjit::LinearSolver::ConjugateGradient, A.shared_pattern())->name() == "cg");
}

TEST_CASE("linear all_finite finds a NaN or infinity at any position, and only those") {
  const double bad[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                        -std::numeric_limits<double>::infinity()};
  for (int n = 0; n <= 11; ++n) {
    CAPTURE(n);
    // Finite extremes: the largest and smallest magnitudes, negative zero.
    std::vector<double> v(n);
    for (int k = 0; k < n; ++k)
      v[k] = k % 4 == 0 ? std::numeric_limits<double>::max()
             : k % 4 == 1 ? -std::numeric_limits<double>::denorm_min()
             : k % 4 == 2 ? -0.0 : -std::numeric_limits<double>::max();
    CHECK(all_finite(v.data(), n));
    for (int k = 0; k < n; ++k)
      for (double b : bad) {
        CAPTURE(k);
        const double keep = v[k];
        v[k] = b;
        CHECK_FALSE(all_finite(v.data(), n));
        v[k] = keep;
      }
  }
}
}  // namespace linear_solver_test
