// DenseSchur: the reduced camera system S (schur_solver.h) assembled as a dense matrix and
// factored by blocked_cholesky (AVX-512 or AVX2 where the CPU has them). Right for tens to a few hundred cameras, where S is dense anyway
// (every two cameras share a point) and a dense factorization beats sparse bookkeeping;
// O(n_A³) per solve and 8·n_A² bytes for n_A = the cameras' scalar dimension.
//
// Analysis (constructor): the Schur structure, the observation pairs and the n_A x n_A
// buffer (padded to a multiple of kBlockedCholeskyPad). solve(): inverts the points, writes S's upper triangle row block by row block (one
// camera per task, so in parallel), factors it in place and solves; a non-positive pivot is
// ok = false.
#pragma once

#include <vector>

#include "lsjit/runtime/solve/linear/schur_solver.h"

namespace lsjit::linear {

class DenseSchur final : public SchurSolver {
 public:
  // Throws lsjit::Error when the blocks from first_eliminated_block on cannot be eliminated
  // (schur_structure.h), std::bad_alloc when S does not fit in memory.
  DenseSchur(std::shared_ptr<const BlockPattern> pattern, int first_eliminated_block);
  std::string_view name() const override { return "dense_schur"; }
  bool direct() const override { return true; }

 protected:
  LinearSolveSummary solve_reduced(const BlockSparseSymmetric& A, const double* shift,
                                   const double* b, double* r, double* x_A,
                                   const LinearSolverOptions& options) override;
  bool forms_reduced_rhs() const override { return true; }
  // With the fixed-size kernels: every value of A it reads reaches S or a point inverse,
  // and a non-finite one makes S or that inversion non-finite (a point block's is rejected
  // by its Cholesky; a camera block is copied into S; a B_ip with an infinite or NaN entry
  // in row r makes (B_ip C_p⁻¹ B_ipᵀ)(r, r), subtracted from S(r, r), infinite or NaN, C_p⁻¹
  // being positive definite), so checking S's n_A² / 2 values replaces the scan of all of A.
  bool finds_non_finite_matrix() const override;

 private:
  // S's upper triangle row-major, rows padded_ doubles apart, then its Cholesky factor (the
  // same memory read column-major, as blocked_cholesky.h lays it out); a row-major row of S
  // is contiguous for the task that writes it. The padding rows and columns past n_A hold an
  // identity block, which the factorization keeps.
  int64_t padded_ = 0;
  detail::BigVector<double> S_;
  std::vector<double> x_;  // the padded right-hand side and solution
  ObservationPairs pairs_;  // what S's update walks, block by block
};

}  // namespace lsjit::linear
