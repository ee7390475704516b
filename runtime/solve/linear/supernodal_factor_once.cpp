// SupernodalCholesky's factor-once, solve-many entry points (supernodal_cholesky.h). They
// live apart from supernodal_cholesky.cpp, whose numeric kernels change independently; they
// only compose its private factor() and substitute() as solve_checked() does.
#include <string>

#include "lsjit/runtime/solve/linear/supernodal_cholesky.h"

namespace lsjit::linear {

std::string SupernodalCholesky::factorize(const BlockSparseSymmetric& A, const double* shift) {
  ++factorizations_;
  const int64_t bad = factor<double>(A, shift);
  if (bad < 0) return "";
  int block = 0;
  return not_positive_definite(bad, &block);
}

void SupernodalCholesky::solve_factored(const double* b, double* x) {
  solve_with_factor<double>(b, x);
}

}  // namespace lsjit::linear
