// Dense Cholesky: the matrix assembled into a dense dim() x dim() buffer, factored by
// Eigen's LLT. O(n³) per solve and 8·n² bytes of memory, but no sparse bookkeeping: the
// fastest choice for small problems (up to roughly a thousand scalar unknowns) and the
// reference the sparse solvers are tested against.
//
// Analysis (constructor): allocates the dense buffer once. solve(): writes the upper
// triangle of A + diag(shift) into it, factors in place (Eigen::LLT on the upper
// triangle), and solves. A pivot <= 0 means not positive definite: ok = false.
#pragma once

#include <Eigen/Core>

#include "lsjit/runtime/linear/linear_solver.h"

namespace lsjit::linear {

class DenseCholesky final : public LinearSolver {
 public:
  // Throws std::bad_alloc when the dense matrix does not fit in memory.
  explicit DenseCholesky(std::shared_ptr<const BlockPattern> pattern);
  std::string_view name() const override { return "dense_cholesky"; }
  bool direct() const override { return true; }

 protected:
  LinearSolveSummary solve_checked(const BlockSparseSymmetric& A, const double* shift,
                                   const double* b, double* x,
                                   const LinearSolverOptions& options) override;

 private:
  Eigen::MatrixXd factor_;  // upper triangle: A + diag(shift), then its Cholesky factor
};

}  // namespace lsjit::linear
