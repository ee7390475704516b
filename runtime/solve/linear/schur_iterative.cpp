#include "lsjit/runtime/solve/linear/schur_iterative.h"

#include <algorithm>
#include <cmath>

#include "lsjit/runtime/solve/linear/pcg.h"
#include "lsjit/runtime/solve/linear/schur_kernels.h"

namespace lsjit::linear {

IterativeSchur::IterativeSchur(std::shared_ptr<const BlockPattern> pattern,
                               int first_eliminated_block)
    : SchurSolver(std::move(pattern), first_eliminated_block) {
  camera_inverses_.resize(structure_.camera_square_total());
  vectors_.resize(structure_.camera_dim());
  w_.resize(structure_.point_dim());
  analyses_ = 1;
}

std::string IterativeSchur::invalid_options(const LinearSolverOptions& options) const {
  return invalid_cg_options(options, "iterative_schur");
}

void IterativeSchur::multiply(const double* H, const double* shift, const double* p, double* q) {
  double* w = w_.data();
  eliminate(H, nullptr, p, w);  // w = −(C + D_C)⁻¹Bᵀp
  parallel_for(structure_.num_cameras(), [&](int begin, int end) {
    kernels().multiply_schur(H, shift, p, w, q, begin, end);
  });
}

LinearSolveSummary IterativeSchur::solve_reduced(const BlockSparseSymmetric& A,
                                                 const double* shift, const double*,
                                                 double* r, double* x_A,
                                                 const LinearSolverOptions& options) {
  LinearSolveSummary summary;
  const size_t n = static_cast<size_t>(structure_.camera_dim());
  const double* H = A.values().data();
  double* inverses = camera_inverses_.data();
  const int failed = parallel_find(structure_.num_cameras(), [&](int begin, int end) {
    return kernels().invert_schur_diagonal(H, shift, point_inverses(), inverses, begin, end);
  });
  if (failed >= 0) {
    summary.message = "the matrix is not positive definite (iterative Schur: the diagonal "
                      "block of camera " + std::to_string(failed) +
                      " in the reduced camera system is not)";
    return summary;
  }
  return preconditioned_cg(
      n, r, x_A, options, [&](const double* p, double* q) { multiply(H, shift, p, q); },
      [&](const double* residual, double* z) {
        parallel_for(structure_.num_cameras(), [&](int begin, int end) {
          kernels().multiply_camera_inverses(inverses, residual, z, begin, end);
        });
      },
      "iterative Schur", "pᵀSp", vectors_);
}

}  // namespace lsjit::linear
