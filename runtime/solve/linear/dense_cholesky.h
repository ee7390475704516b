// Dense Cholesky: the matrix assembled into a dense buffer and factored by blocked_cholesky
// (blocked_cholesky.h: register tiles for AVX-512, AVX2 + FMA or generic x86-64, chosen by
// the CPU), as dense_schur factors its reduced camera system. O(n³) per solve and 8·n²
// bytes of memory, but no sparse bookkeeping: the fastest choice for small problems (the
// automatic choice takes it up to kAutoDenseMax scalars) and the reference the sparse
// solvers are tested against. (It was Eigen's LLT, compiled for generic x86-64 and asking
// the CPU its cache sizes, a CPUID trap each under a hypervisor, on its first blocked call.)
//
// Analysis (constructor): allocates the buffer once, dim() rounded up to
// kBlockedCholeskyPad with an identity block in the padding. solve(): writes the upper
// triangle of A + diag(shift) into it row-major (the layout blocked_cholesky reads), factors
// in place and solves. A pivot that is not > 0 (NaN included) means not positive definite:
// ok = false.
#pragma once

#include <vector>

#include "lsjit/runtime/solve/linear/linear_solver.h"

namespace lsjit::linear {

class DenseCholesky final : public LinearSolver {
 public:
  // Throws std::bad_alloc when the dense matrix does not fit in memory.
  explicit DenseCholesky(std::shared_ptr<const BlockPattern> pattern);
  std::string_view name() const override { return "dense_cholesky"; }
  bool direct() const override { return true; }

 protected:
  LinearSolveSummary solve_checked(const BlockSparseSymmetric& A, const double* shift,
                                   const double* b, double* x,
                                   const LinearSolverOptions& options) override;

 private:
  int64_t padded_ = 0;         // dim() rounded up to kBlockedCholeskyPad
  std::vector<double> a_;      // padded_ x padded_: A + diag(shift), then its factor
  std::vector<double> x_;      // the padded right-hand side and solution
};

}  // namespace lsjit::linear
