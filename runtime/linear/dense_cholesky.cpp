#include "lsjit/runtime/linear/dense_cholesky.h"

#include <Eigen/Cholesky>

namespace lsjit::linear {

DenseCholesky::DenseCholesky(std::shared_ptr<const BlockPattern> pattern)
    : LinearSolver(std::move(pattern)) {
  factor_.resize(pattern_->dim(), pattern_->dim());
  analyses_ = 1;
}

LinearSolveSummary DenseCholesky::solve_checked(const BlockSparseSymmetric& A,
                                                const double* shift, const double* b,
                                                double* x, const LinearSolverOptions&) {
  const BlockPattern& p = *pattern_;
  const double* values = A.values().data();
  // Only the upper triangle is written and read: the factorization overwrites it, and the
  // blocks absent from the pattern must be zeroed each time.
  factor_.triangularView<Eigen::Upper>().setZero();
  for (int i = 0; i < p.num_blocks(); ++i) {
    const int ri = p.block_size(i);
    const int64_t r0 = p.scalar_offset(i);
    for (int64_t k = p.row_begin(i); k < p.row_end(i); ++k) {
      const int j = p.col(k), cj = p.block_size(j);
      const int64_t c0 = p.scalar_offset(j);
      const double* B = values + p.offset(k);
      for (int a = 0; a < ri; ++a)
        for (int c = (j == i ? a : 0); c < cj; ++c) factor_(r0 + a, c0 + c) = B[a * cj + c];
    }
  }
  if (shift != nullptr) factor_.diagonal() += Eigen::Map<const Eigen::VectorXd>(shift, p.dim());

  LinearSolveSummary summary;
  ++factorizations_;
  Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>, Eigen::Upper> llt(factor_);  // in place
  if (llt.info() != Eigen::Success) {
    summary.message = "the matrix is not positive definite (dense Cholesky found a pivot <= 0)";
    return summary;
  }
  Eigen::Map<Eigen::VectorXd>(x, p.dim()) = llt.solve(Eigen::Map<const Eigen::VectorXd>(b, p.dim()));
  summary.ok = summary.converged = true;
  summary.iterations = 1;
  return summary;
}

}  // namespace lsjit::linear
