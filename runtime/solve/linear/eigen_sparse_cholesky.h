// Sparse Cholesky with Eigen's SimplicialLLT: a left-looking, non-supernodal factorization
// with an AMD fill-reducing ordering: a cross-check of the supernodal Cholesky
// (sparse_cholesky). As fast as a supernodal factorization when the factor stays
// sparse, many times slower when it fills in (docs/linear_solvers.md has measurements).
//
// Analysis (constructor, once): builds the scalar lower triangle's compressed-column
// pattern with a map from each entry to its place in values(), and runs
// SimplicialLLT::analyzePattern (AMD ordering, elimination tree, column counts).
// solve(): copies values and shift into the pattern, SimplicialLLT::factorize (numeric
// only) and two triangular solves. A pivot <= 0 means not positive definite: ok = false.
#pragma once

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <vector>

#include "lsjit/runtime/solve/linear/linear_solver.h"

namespace lsjit::linear {

class EigenSparseCholesky final : public LinearSolver {
 public:
  // Throws lsjit::Error when the pattern has 2³¹ or more scalar entries (Eigen's int
  // indices), std::bad_alloc when out of memory.
  explicit EigenSparseCholesky(std::shared_ptr<const BlockPattern> pattern);
  std::string_view name() const override { return "eigen_sparse_cholesky"; }
  bool direct() const override { return true; }

 protected:
  LinearSolveSummary solve_checked(const BlockSparseSymmetric& A, const double* shift,
                                   const double* b, double* x,
                                   const LinearSolverOptions& options) override;

 private:
  using Matrix = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;
  Matrix lower_;                        // fixed pattern, values refilled per solve
  std::vector<int64_t> value_index_;    // lower_ entry -> values() index
  std::vector<int64_t> diagonal_entry_; // scalar row -> lower_ entry of its diagonal
  Eigen::SimplicialLLT<Matrix, Eigen::Lower, Eigen::AMDOrdering<int>> llt_;
};

}  // namespace lsjit::linear
