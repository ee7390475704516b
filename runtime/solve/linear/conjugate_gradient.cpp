#include "lsjit/runtime/solve/linear/conjugate_gradient.h"

#include "lsjit/runtime/solve/linear/pcg.h"

#include <algorithm>
#include <cmath>

namespace lsjit::linear {

ConjugateGradient::ConjugateGradient(std::shared_ptr<const BlockPattern> pattern)
    : LinearSolver(std::move(pattern)) {
  const BlockPattern& p = *pattern_;
  factor_offsets_.resize(p.num_blocks());
  int64_t total = 0;
  for (int i = 0; i < p.num_blocks(); ++i) {
    factor_offsets_[i] = total;
    total += int64_t{p.block_size(i)} * p.block_size(i);
  }
  factors_.resize(total);
  vectors_.resize(p.dim());
  analyses_ = 1;
}

int ConjugateGradient::factor_preconditioner(const BlockSparseSymmetric& A, const double* shift) {
  const BlockPattern& p = *pattern_;
  for (int i = 0; i < p.num_blocks(); ++i) {
    const int n = p.block_size(i);
    const double* M = A.values().data() + p.offset(p.row_begin(i));  // upper triangle read
    const double* s = shift != nullptr ? shift + p.scalar_offset(i) : nullptr;
    double* U = factors_.data() + factor_offsets_[i];
    // Row-oriented Cholesky M = UᵀU: row k of U from M's row k and the rows above.
    for (int k = 0; k < n; ++k) {
      double d = M[k * n + k] + (s != nullptr ? s[k] : 0.0);
      for (int m = 0; m < k; ++m) d -= U[m * n + k] * U[m * n + k];
      if (!(d > 0)) return i;
      const double ukk = std::sqrt(d);
      U[k * n + k] = ukk;
      for (int c = k + 1; c < n; ++c) {
        double v = M[k * n + c];
        for (int m = 0; m < k; ++m) v -= U[m * n + k] * U[m * n + c];
        U[k * n + c] = v / ukk;
      }
    }
  }
  return -1;
}

void ConjugateGradient::apply_preconditioner(const double* r, double* z) const {
  const BlockPattern& p = *pattern_;
  for (int i = 0; i < p.num_blocks(); ++i) {
    const int n = p.block_size(i);
    const double* U = factors_.data() + factor_offsets_[i];
    const double* ri = r + p.scalar_offset(i);
    double* zi = z + p.scalar_offset(i);
    for (int k = 0; k < n; ++k) {  // Uᵀy = r
      double v = ri[k];
      for (int m = 0; m < k; ++m) v -= U[m * n + k] * zi[m];
      zi[k] = v / U[k * n + k];
    }
    for (int k = n - 1; k >= 0; --k) {  // U z = y
      double v = zi[k];
      for (int c = k + 1; c < n; ++c) v -= U[k * n + c] * zi[c];
      zi[k] = v / U[k * n + k];
    }
  }
}

LinearSolveSummary ConjugateGradient::solve_checked(const BlockSparseSymmetric& A,
                                                    const double* shift, const double* b,
                                                    double* x,
                                                    const LinearSolverOptions& options) {
  LinearSolveSummary summary;
  if (summary.message = invalid_cg_options(options, "cg"); !summary.message.empty()) return summary;
  ++factorizations_;
  if (const int block = factor_preconditioner(A, shift); block >= 0) {
    summary.message = "the matrix is not positive definite (cg: diagonal block " +
                      std::to_string(block) + " of A + diag(shift) is not)";
    return summary;
  }

  const size_t n = static_cast<size_t>(pattern_->dim());
  return preconditioned_cg(
      n, b, x, options,
      [&](const double* p, double* q) { multiply_shifted(A, shift, p, q); },
      [&](const double* r, double* z) { apply_preconditioner(r, z); }, "cg", "pᵀ(A + diag(shift))p",
      vectors_);
}

}  // namespace lsjit::linear
