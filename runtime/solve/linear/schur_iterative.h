// IterativeSchur: the reduced camera system S x_A = r (schur_solver.h) solved by
// preconditioned conjugate gradients without ever forming S. Each iteration multiplies by
//
//   S p = (A + D_A) p − B ((C + D_C)⁻¹ (Bᵀ p))
//
// one pass over the observations per point (Bᵀp, then the point's inverse) and one per
// camera (A p and B w), so memory stays linear in H's stored blocks however many cameras
// share a point. The preconditioner is Schur-Jacobi: the diagonal blocks of S,
// S_ii = A_ii + D_i − Σ_p B_ip (C_p + D_p)⁻¹ B_ipᵀ, each inverted through its Cholesky
// factor. That is Ceres' ITERATIVE_SCHUR with SCHUR_JACOBI; for a large scene it is the only
// Schur solver whose memory does not grow with the number of camera pairs.
//
// Conventions as conjugate_gradient.h, on the reduced system: PCG from x_A = 0 until
// ‖r − S x_A‖₂ <= cg_relative_tolerance·‖r‖₂ (the recurrence's residual) or
// max_cg_iterations; stopping at the limit is ok = true, converged = false. Because back
// substitution solves the point rows exactly, r − S x_A is also the camera part of the full
// system's residual, whose point part is zero. A diagonal block of S that is not positive
// definite, or pᵀSp <= 0, is ok = false ("not positive definite"); as for CG an indefinite
// system may also be solved before that is seen. r = 0 gives x_A = 0 after 0 iterations.
#pragma once

#include <vector>

#include "lsjit/runtime/solve/linear/pcg.h"
#include "lsjit/runtime/solve/linear/schur_solver.h"

namespace lsjit::linear {

class IterativeSchur final : public SchurSolver {
 public:
  // Throws lsjit::Error when the blocks from first_eliminated_block on cannot be eliminated
  // (schur_structure.h).
  IterativeSchur(std::shared_ptr<const BlockPattern> pattern, int first_eliminated_block);
  std::string_view name() const override { return "iterative_schur"; }
  bool direct() const override { return false; }

 protected:
  std::string invalid_options(const LinearSolverOptions& options) const override;
  LinearSolveSummary solve_reduced(const BlockSparseSymmetric& A, const double* shift,
                                   const double* b, double* r, double* x_A,
                                   const LinearSolverOptions& options) override;

 private:
  // q = S p, in parallel over points and then cameras.
  void multiply(const double* H, const double* shift, const double* p, double* q);

  std::vector<double> camera_inverses_;  // (S_ii)⁻¹ at camera_square_offset(i)
  PcgVectors vectors_;                   // camera vectors
  std::vector<double> w_;                // point vector: −(C + D_C)⁻¹ Bᵀ p
};

}  // namespace lsjit::linear
