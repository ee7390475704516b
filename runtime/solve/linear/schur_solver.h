// Schur complement solvers for bundle adjustment: LinearSolvers that eliminate the point
// blocks of (H + diag(D)) x = b before solving for the cameras (schur_structure.h has the
// notation). With D split as D_A, D_C,
//
//   S = (A + D_A) − B (C + D_C)⁻¹ Bᵀ                 the reduced camera system
//   S x_A = r,   r = b_A − B (C + D_C)⁻¹ b_C
//   x_C = (C + D_C)⁻¹ (b_C − Bᵀ x_A)                 back substitution
//
// C + D_C is block diagonal, so its inverse is one small Cholesky per point, and S has one
// block row per camera: a system of a few thousand unknowns where H has millions. Three ways
// to solve it (make_schur_solver):
//   DenseSchur      S as a dense matrix, blocked Cholesky: tens to a few hundred cameras.
//   SparseSchur     S block-sparse (cameras coupled when they share a point), sparse
//                   Cholesky: many cameras that each see a small part of the scene.
//   IterativeSchur  S never formed: PCG with products S·x = (A + D_A)x − B((C + D_C)⁻¹(Bᵀx))
//                   and the Schur-Jacobi preconditioner (S's diagonal blocks): memory linear
//                   in the observations, inexact.
//
// All three are LinearSolvers with the contract of linear_solver.h (never throw in solve(),
// ok = false with a message; "not positive definite" covers C_p + D_p or S not being so,
// which for a Cholesky is equivalent to H + diag(D) not being so). analyses() is 1 for the
// constructor's analysis (for SparseSchur: the sparse Cholesky's count, whose symbolic
// factorization of S is part of it) and stays 1; factorizations() counts the solve() calls
// that reached the point inversions.
//
// Threads. LinearSolverOptions::num_threads (0 = hardware concurrency, read on every solve)
// splits the work into contiguous ranges of points (inverting C_p + D_p, summing a point's
// terms of Bᵀx, back substitution) or of cameras (a block row of S, S's diagonal blocks,
// B w, the camera's terms of Bᵀx, the reduced right-hand side). Every output belongs to one
// point, camera or observation and is summed in an order fixed by the structure (a row of S
// over its points in increasing order, a point's Bᵀx over its cameras in increasing order),
// never across threads: results are bit-identical for any num_threads. Memory is linear in
// H's stored blocks (an inverse per point, a point-sized vector per observation for Bᵀx),
// plus for the direct solvers S (dense n_A², or its block pattern) and the ObservationPairs
// its update walks (16 bytes per pair of observations of a point, i.e. linear for a bounded
// number of observations per point); IterativeSchur allocates nothing per pair.
//
// Point and camera blocks of the sizes of schur_kernels.h (camera 1..12 with point 1..4)
// run fixed-size Eigen code, others a runtime-sized fallback: kernel_block_sizes() says
// which.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lsjit/runtime/evaluate/huge_page_allocator.h"
#include "lsjit/runtime/solve/linear/linear_solver.h"
#include "lsjit/runtime/solve/linear/schur_structure.h"

namespace lsjit::detail {
class ThreadPool;
}

namespace lsjit::linear {

class SchurKernels;

// The Schur solver of `type` (DenseSchur, SparseSchur or IterativeSchur) for matrices with
// this pattern, eliminating blocks [first_eliminated_block, num_blocks). Throws
// lsjit::Error for another type, for first_eliminated_block outside [0, num_blocks], when
// two eliminated blocks are coupled, and what the solver's constructor throws.
std::unique_ptr<LinearSolver> make_schur_solver(lsjit::LinearSolver type,
                                                std::shared_ptr<const BlockPattern> pattern,
                                                int first_eliminated_block);

// What the three Schur solvers share: the structure, the fixed-size kernels, the point
// inverses, the thread pool, and the elimination and back substitution around the reduced
// solve that each implements.
class SchurSolver : public LinearSolver {
 public:
  ~SchurSolver() override;
  const SchurStructure& structure() const { return structure_; }
  // The (camera, point) block sizes the kernels were compiled for; -1 (Eigen::Dynamic) is a
  // size known only at runtime.
  std::pair<int, int> kernel_block_sizes() const;

 protected:
  // Throws what SchurStructure's constructor throws.
  SchurSolver(std::shared_ptr<const BlockPattern> pattern, int first_eliminated_block);

  // Inverts the points, forms the reduced right-hand side r, calls solve_reduced for x_A
  // (the first camera_dim() entries of x) and back-substitutes x_C.
  LinearSolveSummary solve_checked(const BlockSparseSymmetric& A, const double* shift,
                                   const double* b, double* x,
                                   const LinearSolverOptions& options) final;

  // Why options cannot be used by this solver, or "" (checked before any work).
  virtual std::string invalid_options(const LinearSolverOptions& options) const { return ""; }

  // Solves S x_A = r; point_inverses() holds (C_p + D_p)⁻¹. r and x_A are camera_dim()
  // doubles (possibly none). r holds the reduced right-hand side, except for a solver whose
  // forms_reduced_rhs() is true: that one fills r from b (the full right-hand side) as it
  // assembles S. Fills the summary as solve_checked would.
  virtual LinearSolveSummary solve_reduced(const BlockSparseSymmetric& A, const double* shift,
                                           const double* b, double* r, double* x_A,
                                           const LinearSolverOptions& options) = 0;
  // Whether solve_reduced forms r itself (assemble_schur with b), sparing solve_checked its
  // own pass over B for it.
  virtual bool forms_reduced_rhs() const { return false; }

  // Runs f(begin, end) on contiguous ranges covering [0, n), on the pool's threads.
  template <typename F>
  void parallel_for(int n, const F& f) {
    run_ranges(n, [&](int, int begin, int end) { f(begin, end); });
  }
  // The same for a kernel that returns the first failing index of its range or -1: the
  // smallest failing index overall (ranges are in increasing order), or -1.
  template <typename F>
  int parallel_find(int n, const F& f) {
    std::vector<int> found(num_ranges(n), -1);
    run_ranges(n, [&](int range, int begin, int end) { found[range] = f(begin, end); });
    for (int index : found)
      if (index >= 0) return index;
    return -1;
  }

  // out = (C + D_C)⁻¹ (b_C − Bᵀ x_A), point_dim() doubles, with the current point inverses;
  // b_C or x_A null is zero. In parallel over cameras (Bᵀx_A), then points.
  void eliminate(const double* H, const double* b_C, const double* x_A, double* out);

  const double* point_inverses() const { return point_inverses_.data(); }
  const SchurKernels& kernels() const { return *kernels_; }

  SchurStructure structure_;

 private:
  int num_ranges(int n) const;
  // f(range, begin, end) for each of the num_ranges(n) ranges.
  void run_ranges(int n, const std::function<void(int, int, int)>& f);

  std::unique_ptr<SchurKernels> kernels_;
  std::unique_ptr<detail::ThreadPool> pool_;
  int pool_threads_ = 0;
  detail::BigVector<double> point_inverses_;  // (C_p + D_p)⁻¹, point_square_offset(p)
  std::vector<double> point_work_;      // (C + D_C)⁻¹ b_C, unless forms_reduced_rhs()
  detail::BigVector<double> bt_products_;     // B_ipᵀ x_i per observation, for eliminate()
  std::vector<double> reduced_rhs_;     // r
};

}  // namespace lsjit::linear
