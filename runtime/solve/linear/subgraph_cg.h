// Subgraph-preconditioned conjugate gradients (GTSAM's SubgraphSolver idea, with lsjit's
// supernodal Cholesky as the factorization): for systems whose own Cholesky factor would
// not fit a memory or flop budget (LinearSolver::Auto picks it then, solver_options.h).
//
// Analysis (constructor): choose_subgraph (subgraph.h) drops off-diagonal blocks of A down
// to a spanning forest plus the blocks inside clusters of about `cluster_blocks` variables;
// the supernodal analysis of that sparsified pattern is done once.
// solve():
//   1. copy A's kept blocks into the sparsified matrix S and factor S + diag(shift) once;
//   2. PCG on A + diag(shift) (pcg.h), each iteration applying S⁻¹ with that factor.
// Stopping rules, and what ok/converged mean, are ConjugateGradient's (conjugate_gradient.h):
// cg_relative_tolerance, max_cg_iterations, ok = false on a breakdown. A factorization of
// S + diag(shift) that fails is ok = false with its message (see subgraph.h for when that
// can happen while A + diag(shift) is positive definite).
#pragma once

#include <memory>
#include <vector>

#include "lsjit/runtime/solve/linear/linear_solver.h"
#include "lsjit/runtime/solve/linear/pcg.h"
#include "lsjit/runtime/solve/linear/subgraph.h"
#include "lsjit/runtime/solve/linear/supernodal_cholesky.h"

namespace lsjit::linear {

class SubgraphCg final : public LinearSolver {
 public:
  // Clusters of 64 variables: on generated SE3 pose graphs of 10^4-10^5 poses (docs/
  // benchmarks-history.md) they cut CG iterations against the forest alone at little fill.
  static constexpr int kDefaultClusterBlocks = 64;

  explicit SubgraphCg(std::shared_ptr<const BlockPattern> pattern,
                      int cluster_blocks = kDefaultClusterBlocks);
  std::string_view name() const override { return "subgraph_cg"; }
  bool direct() const override { return false; }

  const Subgraph& subgraph() const { return subgraph_; }
  const SupernodalCholesky& preconditioner() const { return *factor_; }

 protected:
  LinearSolveSummary solve_checked(const BlockSparseSymmetric& A, const double* shift,
                                   const double* b, double* x,
                                   const LinearSolverOptions& options) override;

 private:
  void copy_kept_blocks(const BlockSparseSymmetric& A);

  Subgraph subgraph_;
  BlockSparseSymmetric sparsified_;      // S, on the subgraph's pattern
  std::vector<int64_t> source_offset_;   // per stored block of S: its block's offset in A
  std::unique_ptr<SupernodalCholesky> factor_;
  PcgVectors vectors_;
};

}  // namespace lsjit::linear
