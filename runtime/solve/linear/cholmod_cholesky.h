// Sparse Cholesky with CHOLMOD (SuiteSparse): supernodal where the fill is dense enough
// (bundle adjustment, 3D pose-graph cliques: BLAS-3 kernels), simplicial where it is thin
// (2D pose graphs), as CHOLMOD's own rule chooses. lsjit's SparseCholesky when it was built
// with CHOLMOD (cholmod_available()).
//
// Analysis (constructor, once per structure):
//   1. the fill-reducing permutation P: by default AMD on the *block* pattern (one node per
//      variable, as Ceres does), expanded to scalars block by block: a graph with
//      block_size² fewer edges, and a variable's scalars stay adjacent. Ordering::ScalarAmd
//      runs AMD on the scalar pattern instead (cholmod_l_analyze with CHOLMOD_AMD); on the
//      benchmarks of docs/linear_solvers.md both give the same fill. CHOLMOD's
//      postordering is folded into P.
//   2. the compressed-column pattern of the scalar lower triangle of P A Pᵀ (stype -1),
//      with the map from each entry to its place in A's values(), allocated once.
//   3. cholmod_l_analyze of that matrix in its natural order (CHOLMOD_NATURAL): the
//      symbolic factorization, supernodal or simplicial by CHOLMOD's rule; a numeric
//      factorization then never permutes (given P, CHOLMOD would form P A Pᵀ every call).
// solve(): copies values and shift into the permuted pattern, cholmod_l_factorize (numeric only,
// reusing the factor's memory) and cholmod_l_solve2 (reusing its workspace). CHOLMOD's
// "not positive definite" (a non-positive pivot; L->minor < n) is ok = false, with the
// scalar row and block where it happened.
//
// Each object has its own cholmod_common (CHOLMOD's state and workspace), so distinct
// objects may solve on distinct threads. CHOLMOD's own printing is switched off: every
// problem is reported through LinearSolveSummary. The supernodal kernels call the BLAS
// that libblas.so.3 resolves to (on Debian an alternative: reference, ATLAS or OpenBLAS).
#pragma once

#include <memory>

#include "lsjit/runtime/solve/linear/linear_solver.h"

namespace lsjit::linear {

class CholmodCholesky final : public LinearSolver {
 public:
  enum class Ordering { BlockAmd, ScalarAmd };

  // Throws lsjit::Error when lsjit was built without CHOLMOD or when the analysis fails
  // (out of memory).
  explicit CholmodCholesky(std::shared_ptr<const BlockPattern> pattern,
                           Ordering ordering = Ordering::BlockAmd);
  ~CholmodCholesky() override;
  std::string_view name() const override { return "cholmod_cholesky"; }
  bool direct() const override { return true; }

  // Nonzeros of the Cholesky factor L as the analysis predicts them (fill-in included), and
  // the floating-point operations of one numeric factorization: what an ordering is judged by.
  double factor_nonzeros() const;
  double factorization_flops() const;

 protected:
  LinearSolveSummary solve_checked(const BlockSparseSymmetric& A, const double* shift,
                                   const double* b, double* x,
                                   const LinearSolverOptions& options) override;

 private:
  struct State;  // CHOLMOD's types stay out of this header
  std::unique_ptr<State> state_;
};

}  // namespace lsjit::linear
