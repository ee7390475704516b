#include "lsjit/runtime/solve/linear/schur_dense.h"

#include "lsjit/runtime/solve/linear/blocked_cholesky.h"
#include "lsjit/runtime/solve/linear/schur_kernels.h"

namespace lsjit::linear {

DenseSchur::DenseSchur(std::shared_ptr<const BlockPattern> pattern, int first_eliminated_block)
    : SchurSolver(std::move(pattern), first_eliminated_block), pairs_(structure_) {
  const int64_t n = structure_.camera_dim();
  padded_ = blocked_cholesky_padded(n);
  S_.assign(static_cast<size_t>(padded_ * padded_), 0.0);
  for (int64_t i = n; i < padded_; ++i) S_[static_cast<size_t>(i * padded_ + i)] = 1.0;
  x_.assign(static_cast<size_t>(padded_), 0.0);
  analyses_ = 1;
}

bool DenseSchur::finds_non_finite_matrix() const {
  const auto [camera, point] = kernel_block_sizes();
  return camera > 0 && point > 0;  // Eigen::Dynamic (-1): the runtime-sized fallbacks
}

LinearSolveSummary DenseSchur::solve_reduced(const BlockSparseSymmetric& A, const double* shift,
                                             const double* b, double* r, double* x_A,
                                             const LinearSolverOptions&) {
  LinearSolveSummary summary;
  summary.iterations = 1;
  const int64_t n = structure_.camera_dim();
  if (n == 0) {  // only points: nothing left to factor
    summary.ok = summary.converged = true;
    return summary;
  }
  // Each block row's task also zeroes its row's padding columns (start_row clears the row to
  // its end), so the padding stays an identity block decoupled from S.
  const SchurTarget target{.dense = S_.data(), .dense_stride = padded_};
  parallel_for(structure_.num_cameras(), [&](int begin, int end) {
    kernels().assemble_schur(A.values().data(), shift, point_inverses(), pairs_, target, b, r,
                             begin, end);
  });
  for (int64_t row = 0; row < n; ++row)  // the part the factorization reads
    if (!all_finite(S_.data() + row * padded_ + row, n - row)) {  // solve() looks in A
      summary.message = "the reduced camera system is not finite (an overflow in the elimination)";
      return summary;
    }
  if (blocked_cholesky(S_.data(), padded_) >= 0) {
    summary.message =
        "the matrix is not positive definite (dense Schur: the reduced camera system has a "
        "pivot <= 0)";
    return summary;
  }
  blocked_cholesky_solve_padded(S_.data(), padded_, n, r, x_A, x_.data());
  summary.ok = summary.converged = true;
  return summary;
}

}  // namespace lsjit::linear
