// lsjit's own supernodal sparse Cholesky: lsjit's SparseCholesky (make_linear_solver).
//
// The thesis is "specialize to the static structure": everything that depends on the
// pattern only — ordering, elimination tree, supernodes, where every value of A goes,
// where every supernode's update goes — is computed once, in the constructor
// (supernodal_analysis.h), and the panels' memory on the first solve in each precision
// (so that a solver that only ever factors in float never touches a double factor).
// Every later solve only does arithmetic, into memory that already exists: it allocates
// nothing (tests/runtime_alloc/linear_supernodal_alloc_test.cpp).
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
// Mixed precision (LinearSolverOptions::mixed_precision: Always, or Automatic where
// mixed_precision_pays()): steps 1-2 in float, into a float factor of its own, then
// iterative refinement in double:
// x ← x + L⁻ᵀL⁻¹ r with r = b − (A + diag(shift)) x computed in double, until
// ‖r‖₂ <= kMixedPrecisionTolerance·‖b‖₂. A float pivot that is not > 0, a step that does
// not at least halve ‖r‖, or max_num_refinement_iterations steps without reaching the
// tolerance fall back to the double factorization for that solve and every later one:
// LM's damping shrinks as it converges, so a system float could not solve is followed by
// worse-conditioned ones (no retry on the shared graphs or a 100,000-pose graph ever
// succeeded, and each cost a float factorization). A fallback frees the float factor
// before the double one is made, so the two never coexist (together they would be half
// as large again as the double factor, at the solve's peak). The float
// factor halves the bytes every step moves and doubles the lanes of every vector; each
// refinement step costs a substitution and a product with A. Each factor is allocated on
// its first use. The summary says which precision solved (LinearSolveSummary).
//
// OpenBLAS runs single-threaded (set once, process-wide): lsjit decides its threading.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lsjit/runtime/evaluate/huge_page_allocator.h"
#include "lsjit/runtime/evaluate/thread_pool.h"
#include "lsjit/runtime/solve/linear/linear_solver.h"
#include "lsjit/runtime/solve/linear/supernodal_analysis.h"
#include "lsjit/runtime/solve/linear/supernodal_split.h"

namespace lsjit::linear {

class SupernodalCholesky final : public LinearSolver {
 public:
  // Automatic: AMD or METIS nested dissection on the block graph, whichever predicts fewer
  // flops. Throws lsjit::Error when the analysis fails (see analyze_supernodal).
  explicit SupernodalCholesky(std::shared_ptr<const BlockPattern> pattern,
                              SupernodalOrdering ordering = SupernodalOrdering::Automatic);
  // With an analysis already made of this pattern by analyze_supernodal (LinearSolver::Auto
  // makes one to predict the factor's size): the constructor then only allocates, and shares
  // the analysis rather than copying it. Throws lsjit::Error when it is
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

  // Relative residual a mixed-precision solve refines to.
  static constexpr double kMixedPrecisionTolerance = 1e-10;
  // MixedPrecision::Automatic's rule. A refinement step costs about a substitution, ~4
  // flops per stored entry of the factor, and two or three are needed; the float
  // factorization saves about a third of its flops' time. So it pays on factors with many
  // flops per stored entry, and costs on thin ones; the threshold lies between the two
  // (docs/benchmarks-history.md, "Mixed precision", has the measurements).
  static constexpr double kMixedPrecisionMinFlopsPerEntry = 100;
  bool mixed_precision_pays() const {
    return analysis_.factorization_flops >=
           kMixedPrecisionMinFlopsPerEntry * static_cast<double>(analysis_.panel_offset.back());
  }
  // Solves done in mixed precision, and solves that fell back to double (at most one: the
  // solver then stays in double).
  int64_t mixed_precision_solves() const { return mixed_solves_; }
  int64_t mixed_precision_fallbacks() const { return mixed_fallbacks_; }

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
  // The numeric factor in one precision T (double, or float for mixed-precision solves):
  // the panels (supernodal_analysis.h's layout, padded: below_product's loops read up to
  // kProductRowPad - 1 scalars past a column), the update of one supernode (W,
  // max_below_rows²), bin 1's updates of the top and its W (with a split), and the
  // substitution's buffers. Huge-page backed, because first touching them a 4 KiB page at a
  // time is a page fault each, and a large factor's are megabytes. Empty until
  // allocate<T>().
  template <class T>
  struct Factor {
    detail::BigVector<T> panels, workspace, private_top, second_workspace;
    std::vector<T> permuted;  // dim(): the permuted right-hand side / solution
    std::vector<T> gathered;  // max_rows: a supernode's rows of the solution
  };

  template <class T>
  Factor<T>& factor_of();
  void make_split();  // split_, when worth it (constructors)
  template <class T>
  void allocate();  // Factor<T>'s memory, once (a no-op after the first call)
  // Steps 1 and 2 into Factor<T>; the permuted scalar column of the first bad pivot, or -1.
  template <class T>
  int64_t factor(const BlockSparseSymmetric& A, const double* shift, int threads = 1);
  // One supernode's step 2, its update into W; updates of top supernodes go to
  // private_top (see supernodal_split.h) when it is not null. The permuted scalar column
  // of a bad pivot, or -1.
  template <class T>
  int64_t factor_supernode(int supernode, T* W, T* private_top);
  template <class T>
  int64_t factor_split(int threads);  // step 2 by the split, after scatter()
  template <class T>
  void scatter(const BlockSparseSymmetric& A, const double* shift);
  template <class T>
  void update_ancestors(int supernode, int64_t below, const T* W, T* private_top);
  template <class T>
  void substitute(T* y);  // step 3 on the permuted right-hand side, in place
  template <class T>
  void solve_with_factor(const double* b, double* x);  // permute, substitute, permute back
  // A mixed-precision solve into summary and x; false when it fell back (x is then
  // undefined and the caller solves in double).
  bool solve_mixed(const BlockSparseSymmetric& A, const double* shift, const double* b, double* x,
                   int threads, int max_refinements, LinearSolveSummary& summary);
  std::string not_positive_definite(int64_t bad_column, int* block) const;

  std::shared_ptr<const SupernodalAnalysis> shared_analysis_;  // never null
  const SupernodalAnalysis& analysis_;  // *shared_analysis_
  const int uniform_block_size_;  // every block's size, or 0 when they differ (scatter)
  Factor<double> double_;
  Factor<float> single_;
  std::vector<double> residual_, correction_;  // dim(): the refinement's r and L⁻ᵀL⁻¹r
  int64_t mixed_solves_ = 0, mixed_fallbacks_ = 0;
  bool float_failed_ = false;  // a mixed solve fell back: double from then on

  // The split (null: none is worth it) and the threads it runs on (made on the first solve
  // that asks for two).
  std::unique_ptr<SupernodalSplit> split_;
  std::unique_ptr<detail::ThreadPool> pool_;
};

}  // namespace lsjit::linear
