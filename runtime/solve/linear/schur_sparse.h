// SparseSchur: the reduced camera system S (schur_solver.h) assembled block-sparse and
// factored by a sparse Cholesky (lsjit's supernodal one, or Eigen's). For many cameras
// that each share points with few others (a city-scale reconstruction, a video sequence):
// S's blocks are the camera pairs with a common point, and no dense n_A x n_A matrix is
// ever made.
//
// Analysis (constructor, once): the Schur structure, S's block pattern (the blocks of A
// plus every two cameras observing a common point; the only part whose size is not linear
// in H's stored blocks, since a point seen by m cameras couples m² pairs) and the sparse
// Cholesky of that pattern, with its fill-reducing ordering and symbolic factorization.
// solve(): inverts the points, writes S block row by block row (one camera per task, in
// parallel) and calls the sparse Cholesky's solve() on it: a numeric factorization only.
#pragma once

#include <memory>

#include "lsjit/runtime/solve/linear/schur_solver.h"

namespace lsjit::linear {

class SparseSchur final : public SchurSolver {
 public:
  // reduced_type is the factorization of S: SparseCholesky (supernodal_cholesky.h) or
  // EigenSparseCholesky. Throws lsjit::Error for another type, when the blocks from
  // first_eliminated_block on cannot be eliminated (schur_structure.h), or when the sparse
  // Cholesky's analysis fails.
  SparseSchur(std::shared_ptr<const BlockPattern> pattern, int first_eliminated_block,
              lsjit::LinearSolver reduced_type = lsjit::LinearSolver::SparseCholesky);
  std::string_view name() const override { return "sparse_schur"; }
  bool direct() const override { return true; }

  // The sparse Cholesky of S: its name() says which library, its counters show the reuse
  // of its symbolic factorization.
  const LinearSolver& reduced_solver() const { return *reduced_solver_; }
  const BlockPattern& reduced_pattern() const { return S_.pattern(); }

 protected:
  LinearSolveSummary solve_reduced(const BlockSparseSymmetric& A, const double* shift,
                                   const double* b, double* r, double* x_A,
                                   const LinearSolverOptions& options) override;
  bool forms_reduced_rhs() const override { return true; }

 private:
  BlockSparseSymmetric S_;
  ObservationPairs pairs_;  // what S's update walks, block by block
  std::unique_ptr<LinearSolver> reduced_solver_;
};

}  // namespace lsjit::linear
