#include "lsjit/runtime/solve/linear/eigen_sparse_cholesky.h"

#include <algorithm>
#include <limits>

#include "lsjit/common/error.h"

namespace lsjit::linear {

EigenSparseCholesky::EigenSparseCholesky(std::shared_ptr<const BlockPattern> pattern)
    : LinearSolver(std::move(pattern)) {
  BlockPattern::LowerCsc csc = pattern_->lower_csc();
  const int64_t n = pattern_->dim(), nnz = static_cast<int64_t>(csc.row.size());
  if (nnz > std::numeric_limits<int>::max())
    throw Error("eigen_sparse_cholesky: " + std::to_string(nnz) +
                " nonzeros exceed Eigen's int indices; use sparse_cholesky (supernodal)");
  // Build the compressed matrix directly from the pattern: rows within a column are
  // already sorted, which is what Eigen's compressed format requires.
  lower_.resize(static_cast<int>(n), static_cast<int>(n));
  lower_.resizeNonZeros(static_cast<Eigen::Index>(nnz));
  std::copy(csc.column_begin.begin(), csc.column_begin.end(), lower_.outerIndexPtr());
  std::copy(csc.row.begin(), csc.row.end(), lower_.innerIndexPtr());
  std::fill(lower_.valuePtr(), lower_.valuePtr() + nnz, 0.0);
  value_index_ = std::move(csc.value_index);
  diagonal_entry_.assign(csc.column_begin.begin(), csc.column_begin.end() - 1);
  llt_.analyzePattern(lower_);
  analyses_ = 1;
}

LinearSolveSummary EigenSparseCholesky::solve_checked(const BlockSparseSymmetric& A,
                                                      const double* shift, const double* b,
                                                      double* x, const LinearSolverOptions&) {
  const double* values = A.values().data();
  double* entries = lower_.valuePtr();
  for (size_t e = 0; e < value_index_.size(); ++e) entries[e] = values[value_index_[e]];
  if (shift != nullptr)
    for (size_t r = 0; r < diagonal_entry_.size(); ++r) entries[diagonal_entry_[r]] += shift[r];

  LinearSolveSummary summary;
  ++factorizations_;
  llt_.factorize(lower_);
  if (llt_.info() != Eigen::Success) {
    summary.message =
        "the matrix is not positive definite (Eigen SimplicialLLT found a pivot <= 0)";
    return summary;
  }
  const Eigen::Index n = lower_.rows();
  Eigen::Map<Eigen::VectorXd>(x, n) = llt_.solve(Eigen::Map<const Eigen::VectorXd>(b, n));
  summary.ok = summary.converged = true;
  summary.iterations = 1;
  return summary;
}

}  // namespace lsjit::linear
