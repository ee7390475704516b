// SupernodalCholesky's factor-once, solve-many entry points (supernodal_cholesky.h). They
// live apart from supernodal_cholesky.cpp, whose numeric kernels change independently; they
// only compose its private factor() and substitute() as solve_checked() does.
#include <string>

#include "lsjit/runtime/linear/supernodal_cholesky.h"

namespace lsjit::linear {

std::string SupernodalCholesky::factorize(const BlockSparseSymmetric& A, const double* shift) {
  ++factorizations_;
  const int64_t bad = factor(A, shift);
  if (bad < 0) return "";
  const int64_t row = analysis_.scalar_perm[bad];  // back to A's numbering
  int block = 0;
  while (block + 1 < pattern_->num_blocks() && pattern_->scalar_offset(block + 1) <= row) ++block;
  return "the matrix is not positive definite (supernodal Cholesky: non-positive pivot at "
         "scalar row " + std::to_string(row) + ", block " + std::to_string(block) + ")";
}

void SupernodalCholesky::solve_factored(const double* b, double* x) {
  const int64_t n = pattern_->dim();
  for (int64_t k = 0; k < n; ++k) permuted_[k] = b[analysis_.scalar_perm[k]];
  substitute(permuted_.data());
  for (int64_t k = 0; k < n; ++k) x[analysis_.scalar_perm[k]] = permuted_[k];
}

}  // namespace lsjit::linear
