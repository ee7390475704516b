// Preconditioned conjugate gradients with a block-Jacobi preconditioner: an inexact solver
// that needs only products with A (BlockSparseSymmetric::multiply), so its memory is a few
// vectors and its work per iteration one pass over the stored blocks. For problems whose
// factorization fills in too much. Levenberg-Marquardt tolerates an inexact step (Ceres'
// iterative solvers rely on the same), so a loose tolerance is often enough.
//
// Analysis (constructor): allocates the iteration vectors and the preconditioner storage.
// solve():
//   1. preconditioner M = the block diagonal of A + diag(shift), each block factored by a
//      small in-place Cholesky. A diagonal block that is not positive definite proves that
//      A + diag(shift) is not either (it is a principal submatrix): ok = false, naming it.
//   2. PCG from x = 0, stopping when ‖r‖₂ <= cg_relative_tolerance·‖b‖₂ (r = b − (A +
//      diag(shift))x as updated by the recurrence) or after max_cg_iterations iterations.
//      Reaching the iteration limit is ok = true, converged = false, iterations = the limit:
//      the iterate is still a descent direction that LM may use. A breakdown (pᵀ(A +
//      diag(shift))p <= 0: the matrix is not positive definite) is ok = false.
// b = 0 gives x = 0 after 0 iterations. An indefinite A + diag(shift) whose diagonal blocks
// are positive definite is caught only through a breakdown, which happens when the matrix
// is not positive definite on the Krylov space CG has explored so far. CG may reach its
// tolerance first (b in an invariant subspace, a loose tolerance) and then returns ok = true
// with a step that solves the indefinite system.
#pragma once

#include <vector>

#include "lsjit/runtime/solve/linear/linear_solver.h"
#include "lsjit/runtime/solve/linear/pcg.h"

namespace lsjit::linear {

class ConjugateGradient final : public LinearSolver {
 public:
  explicit ConjugateGradient(std::shared_ptr<const BlockPattern> pattern);
  std::string_view name() const override { return "cg"; }
  bool direct() const override { return false; }

 protected:
  LinearSolveSummary solve_checked(const BlockSparseSymmetric& A, const double* shift,
                                   const double* b, double* x,
                                   const LinearSolverOptions& options) override;

 private:
  // Factors every diagonal block of A + diag(shift) into factors_; the index of the first
  // block that is not positive definite, or -1.
  int factor_preconditioner(const BlockSparseSymmetric& A, const double* shift);
  // z = M⁻¹ r with the factored blocks.
  void apply_preconditioner(const double* r, double* z) const;

  std::vector<int64_t> factor_offsets_;  // per block: its ri x ri factor in factors_
  std::vector<double> factors_;          // upper Cholesky factors U (M_i = UᵀU), row-major
  PcgVectors vectors_;
};

}  // namespace lsjit::linear
