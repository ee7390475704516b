#include "lsjit/runtime/linear/schur_dense.h"

#include <Eigen/Cholesky>

#include "lsjit/runtime/linear/schur_kernels.h"

namespace lsjit::linear {

DenseSchur::DenseSchur(std::shared_ptr<const BlockPattern> pattern, int first_eliminated_block)
    : SchurSolver(std::move(pattern), first_eliminated_block), pairs_(structure_) {
  S_.resize(structure_.camera_dim(), structure_.camera_dim());
  analyses_ = 1;
}

LinearSolveSummary DenseSchur::solve_reduced(const BlockSparseSymmetric& A, const double* shift,
                                             const double* r, double* x_A,
                                             const LinearSolverOptions&) {
  LinearSolveSummary summary;
  summary.iterations = 1;
  const Eigen::Index n = S_.rows();
  if (n == 0) {  // only points: nothing left to factor
    summary.ok = summary.converged = true;
    return summary;
  }
  const SchurTarget target{.dense = S_.data(), .dense_stride = n};
  parallel_for(structure_.num_cameras(), [&](int begin, int end) {
    kernels().assemble_schur(A.values().data(), shift, point_inverses(), pairs_, target, begin,
                             end);
  });
  using Dense = decltype(S_);
  Eigen::LLT<Eigen::Ref<Dense>, Eigen::Upper> llt(S_);  // in place
  if (llt.info() != Eigen::Success) {
    summary.message =
        "the matrix is not positive definite (dense Schur: the reduced camera system has a "
        "pivot <= 0)";
    return summary;
  }
  Eigen::Map<Eigen::VectorXd>(x_A, n) = llt.solve(Eigen::Map<const Eigen::VectorXd>(r, n));
  summary.ok = summary.converged = true;
  return summary;
}

}  // namespace lsjit::linear
