// lsjit's own supernodal sparse Cholesky: lsjit's SparseCholesky (make_linear_solver).
//
// The thesis is "specialize to the static structure": everything that depends on the
// pattern only — ordering, elimination tree, supernodes, the panels' memory, where every
// value of A goes, where every supernode's update goes — is computed once, in the
// constructor (supernodal_analysis.h). solve() then only does arithmetic, into memory that
// already exists: it allocates nothing (tests/runtime/linear_supernodal_alloc_test.cpp).
//
// solve():
//   1. zero the panels; copy A's read values (diagonal blocks: their upper triangle) and the
//      shift into them through the precomputed block map;
//   2. supernodes in postorder (right-looking, multifrontal-like): Cholesky of the diagonal
//      block, triangular solve of the rows below, their update L_b L_bᵀ into one
//      preallocated workspace, scatter-subtracted into the ancestors' panels through the
//      precomputed row runs. Large supernodes call OpenBLAS (dpotrf, dtrsm, dsyrk), small
//      ones loops of our own (supernodal_kernels.h), where a BLAS call's overhead dominates;
//   3. forward and back substitution supernode by supernode, in the permuted order.
// A pivot <= 0 or NaN is ok = false, naming the scalar row and block of A (A's numbering).
//
// Threads: the constructor cuts the elimination tree into two bins of independent subtrees
// and the top above them (supernodal_split.h) when that predicts a speed-up of at least
// kMinSplitSpeedup and the top's private copy is at most half the factor. Step 2
// then always factors bin 0, then bin 1 (its updates of the top into the private copy),
// adds the copy to the top and factors the top; with LinearSolverOptions::num_threads != 1
// (0: one per core) the two bins run at once. The arithmetic is the same either way, so
// results are bit-identical whatever the thread count. The second workspace and the
// threads are made on the first solve with more than one. Step 3 stays on one thread.
//
// OpenBLAS runs single-threaded (set once, process-wide): lsjit decides its threading.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lsjit/runtime/huge_page_allocator.h"
#include "lsjit/runtime/linear/linear_solver.h"
#include "lsjit/runtime/linear/supernodal_analysis.h"
#include "lsjit/runtime/linear/supernodal_split.h"
#include "lsjit/runtime/thread_pool.h"

namespace lsjit::linear {

class SupernodalCholesky final : public LinearSolver {
 public:
  // Automatic: AMD or METIS nested dissection on the block graph, whichever predicts fewer
  // flops. Throws lsjit::Error when the analysis fails (see analyze_supernodal).
  explicit SupernodalCholesky(std::shared_ptr<const BlockPattern> pattern,
                              SupernodalOrdering ordering = SupernodalOrdering::Automatic);
  // With an analysis already made of this pattern by analyze_supernodal (LinearSolver::Auto
  // makes one to predict the factor's size): the constructor then only allocates, and shares
  // the analysis rather than copying it (sphere2500: 5 ms). Throws lsjit::Error when it is
  // null or its dimension is not the pattern's.
  SupernodalCholesky(std::shared_ptr<const BlockPattern> pattern,
                     std::shared_ptr<const SupernodalAnalysis> analysis);
  std::string_view name() const override { return "supernodal_cholesky"; }
  bool direct() const override { return true; }

  // As the analysis predicts them: nonzeros of L (fill included, amalgamation zeros not)
  // and the flops of one numeric factorization (Σ over L's columns of count², as CHOLMOD).
  double factor_nonzeros() const { return analysis_.factor_nonzeros; }
  double factorization_flops() const { return analysis_.factorization_flops; }
  SupernodalOrdering ordering() const { return analysis_.ordering; }  // the chosen one
  int num_supernodes() const { return analysis_.num_supernodes(); }
  const SupernodalAnalysis& analysis() const { return analysis_; }
  const SupernodalSplit* split() const { return split_.get(); }  // null: not split

  // Factor once, solve many times: what a preconditioner needs (subgraph_cg.h), which
  // applies the same factor in every CG iteration. factorize() factors A + diag(shift)
  // (shift may be null) without solve()'s checks of A, shift and the pattern (the caller
  // made A on pattern()), and returns "" or the message solve() gives for a non-positive
  // pivot. solve_factored() then solves with that factor; b and x are dim() doubles and
  // may be the same array. Neither allocates. Defined in supernodal_factor_once.cpp.
  std::string factorize(const BlockSparseSymmetric& A, const double* shift);
  void solve_factored(const double* b, double* x);

 protected:
  LinearSolveSummary solve_checked(const BlockSparseSymmetric& A, const double* shift,
                                   const double* b, double* x,
                                   const LinearSolverOptions& options) override;

 private:
  // Steps 1 and 2; the permuted scalar column of the first bad pivot, or -1.
  void allocate();  // the factor, the workspaces: once, by the constructors
  int64_t factor(const BlockSparseSymmetric& A, const double* shift, int threads = 1);
  // One supernode's step 2, its update into W; updates of top supernodes go to
  // private_top (see supernodal_split.h) when it is not null. The permuted scalar column
  // of a bad pivot, or -1.
  int64_t factor_supernode(int supernode, double* W, double* private_top);
  int64_t factor_split(int threads);  // step 2 by the split, after scatter()
  void scatter(const BlockSparseSymmetric& A, const double* shift);
  void update_ancestors(int supernode, int64_t below, const double* W, double* private_top);
  void substitute(double* y);  // step 3 on the permuted right-hand side, in place

  std::shared_ptr<const SupernodalAnalysis> shared_analysis_;  // never null
  const SupernodalAnalysis& analysis_;  // *shared_analysis_
  // The factor (supernodal_analysis.h's layout) and the update of one supernode
  // (max_below_rows²): huge-page backed, because first touching them a 4 KiB page at a
  // time was a page fault each (sphere2500: 12.5 MB).
  detail::BigVector<double> panels_;
  detail::BigVector<double> workspace_;
  std::vector<double> permuted_;   // dim(): the permuted right-hand side / solution
  std::vector<double> gathered_;   // max_rows: a supernode's rows of the solution

  // The split (null: none is worth it), bin 1's updates of the top's panels, and what two
  // threads need (made on the first solve that asks for them).
  std::unique_ptr<SupernodalSplit> split_;
  detail::BigVector<double> private_top_;
  std::unique_ptr<detail::ThreadPool> pool_;
  detail::BigVector<double> second_workspace_;  // bin 1's W
};

}  // namespace lsjit::linear
