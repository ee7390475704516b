#include "lsjit/runtime/solve/linear/dense_cholesky.h"

#include <algorithm>

#include "lsjit/runtime/solve/linear/blocked_cholesky.h"

namespace lsjit::linear {

DenseCholesky::DenseCholesky(std::shared_ptr<const BlockPattern> pattern)
    : LinearSolver(std::move(pattern)) {
  const int64_t n = pattern_->dim();
  padded_ = blocked_cholesky_padded(n);
  a_.assign(static_cast<size_t>(padded_ * padded_), 0.0);
  x_.assign(static_cast<size_t>(padded_), 0.0);
  analyses_ = 1;
}

LinearSolveSummary DenseCholesky::solve_checked(const BlockSparseSymmetric& A,
                                                const double* shift, const double* b,
                                                double* x, const LinearSolverOptions&) {
  const BlockPattern& p = *pattern_;
  const int64_t n = p.dim(), m = padded_;
  LinearSolveSummary summary;
  summary.iterations = 1;
  if (n == 0) {  // nothing free: nothing to factor
    summary.ok = summary.converged = true;
    return summary;
  }
  ++factorizations_;
  // Row-major upper triangle, rows m apart (blocked_cholesky.h). The last factorization
  // left its factor there, and blocks absent from the pattern must read 0: each row is
  // cleared from its diagonal on, and the padding is an identity block again.
  double* a = a_.data();
  for (int64_t r = 0; r < m; ++r) std::fill(a + r * m + r, a + (r + 1) * m, 0.0);
  for (int64_t k = n; k < m; ++k) a[k * m + k] = 1.0;
  const double* values = A.values().data();
  for (int i = 0; i < p.num_blocks(); ++i) {
    const int ri = p.block_size(i);
    const int64_t r0 = p.scalar_offset(i);
    for (int64_t k = p.row_begin(i); k < p.row_end(i); ++k) {  // blocks (i, j >= i)
      const int j = p.col(k), cj = p.block_size(j);
      const int64_t c0 = p.scalar_offset(j);
      const double* B = values + p.offset(k);
      for (int r = 0; r < ri; ++r)
        for (int c = (j == i ? r : 0); c < cj; ++c) a[(r0 + r) * m + c0 + c] = B[r * cj + c];
    }
  }
  if (shift != nullptr)
    for (int64_t k = 0; k < n; ++k) a[k * m + k] += shift[k];
  if (blocked_cholesky(a, m) >= 0) {
    summary.message = "the matrix is not positive definite (dense Cholesky found a pivot <= 0)";
    return summary;
  }
  blocked_cholesky_solve_padded(a, m, n, b, x, x_.data());
  summary.ok = summary.converged = true;
  return summary;
}

}  // namespace lsjit::linear
