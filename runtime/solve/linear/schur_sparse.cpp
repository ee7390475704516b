#include "lsjit/runtime/solve/linear/schur_sparse.h"

#include "lsjit/common/error.h"
#include "lsjit/runtime/solve/linear/schur_kernels.h"

namespace lsjit::linear {

namespace {

lsjit::LinearSolver checked(lsjit::LinearSolver type) {
  if (type != lsjit::LinearSolver::SparseCholesky && type != lsjit::LinearSolver::EigenSparseCholesky)
    throw Error("sparse_schur factors the reduced camera system with sparse_cholesky or "
                "eigen_sparse_cholesky, not " + std::string(linear_solver_name(type)));
  return type;
}

}  // namespace

SparseSchur::SparseSchur(std::shared_ptr<const BlockPattern> pattern, int first_eliminated_block,
                         lsjit::LinearSolver reduced_type)
    : SchurSolver(std::move(pattern), first_eliminated_block),
      S_(structure_.camera_sizes(), structure_.reduced_pairs()),
      pairs_(structure_),
      reduced_solver_(make_linear_solver(checked(reduced_type), S_.shared_pattern())) {
  analyses_ = reduced_solver_->analyses();
}

LinearSolveSummary SparseSchur::solve_reduced(const BlockSparseSymmetric& A, const double* shift,
                                              const double* b, double* r, double* x_A,
                                              const LinearSolverOptions& options) {
  if (S_.dim() == 0) {  // only points; the empty r and x_A may be null
    LinearSolveSummary summary;
    summary.ok = summary.converged = true;
    summary.iterations = 1;
    return summary;
  }
  const SchurTarget target{.sparse = &S_};
  parallel_for(structure_.num_cameras(), [&](int begin, int end) {
    kernels().assemble_schur(A.values().data(), shift, point_inverses(), pairs_, target, b, r,
                             begin, end);
  });
  // The damping of the cameras is already in S. The solve checks S for non-finite values
  // (an overflow in the elimination) and names the camera block.
  LinearSolveSummary summary = reduced_solver_->solve(S_, nullptr, r, x_A, options);
  analyses_ = reduced_solver_->analyses();
  if (!summary.ok) summary.message = "Schur complement of the points: " + summary.message;
  return summary;
}

}  // namespace lsjit::linear
