#include "lsjit/runtime/solve/linear/schur_solver.h"

#include <algorithm>
#include <string>
#include <thread>

#include "lsjit/common/error.h"
#include "lsjit/runtime/evaluate/thread_pool.h"
#include "lsjit/runtime/solve/linear/schur_dense.h"
#include "lsjit/runtime/solve/linear/schur_iterative.h"
#include "lsjit/runtime/solve/linear/schur_kernels.h"
#include "lsjit/runtime/solve/linear/schur_sparse.h"

namespace lsjit::linear {

std::unique_ptr<LinearSolver> make_schur_solver(lsjit::LinearSolver type,
                                                std::shared_ptr<const BlockPattern> pattern,
                                                int first_eliminated_block) {
  switch (type) {
    case lsjit::LinearSolver::DenseSchur:
      return std::make_unique<DenseSchur>(std::move(pattern), first_eliminated_block);
    case lsjit::LinearSolver::SparseSchur:
      return std::make_unique<SparseSchur>(std::move(pattern), first_eliminated_block);
    case lsjit::LinearSolver::IterativeSchur:
      return std::make_unique<IterativeSchur>(std::move(pattern), first_eliminated_block);
    default:
      throw Error("make_schur_solver: " + std::string(linear_solver_name(type)) +
                  " is not a Schur complement solver; use make_linear_solver");
  }
}

SchurSolver::SchurSolver(std::shared_ptr<const BlockPattern> pattern, int first_eliminated_block)
    : LinearSolver(pattern), structure_(std::move(pattern), first_eliminated_block) {
  kernels_ = make_schur_kernels(structure_);
  point_inverses_.resize(structure_.point_square_total());
  bt_products_.resize(structure_.observation_vector_total());
  reduced_rhs_.resize(structure_.camera_dim());
}

SchurSolver::~SchurSolver() = default;

std::pair<int, int> SchurSolver::kernel_block_sizes() const {
  return {kernels_->camera_block_size(), kernels_->point_block_size()};
}

int SchurSolver::num_ranges(int n) const {
  // A few ranges per thread, claimed dynamically, even out points of unequal cost.
  return pool_threads_ <= 1 ? std::min(n, 1) : std::min(n, 4 * pool_threads_);
}

void SchurSolver::run_ranges(int n, const std::function<void(int, int, int)>& f) {
  const int ranges = num_ranges(n);
  auto range = [&](size_t r) {
    const int index = static_cast<int>(r);
    f(index, static_cast<int>(int64_t{n} * index / ranges),
      static_cast<int>(int64_t{n} * (index + 1) / ranges));
  };
  if (ranges <= 1 || !pool_) {
    for (int r = 0; r < ranges; ++r) range(r);
    return;
  }
  pool_->run(static_cast<size_t>(ranges), range);
}

LinearSolveSummary SchurSolver::solve_checked(const BlockSparseSymmetric& A, const double* shift,
                                              const double* b, double* x,
                                              const LinearSolverOptions& options) {
  LinearSolveSummary summary;
  if (options.num_threads < 0) {
    summary.message = "num_threads must be >= 0 (0: one per core), got " +
                      std::to_string(options.num_threads);
    return summary;
  }
  if (summary.message = invalid_options(options); !summary.message.empty()) return summary;
  const int threads = options.num_threads == 0
                          ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))
                          : options.num_threads;
  if (threads != pool_threads_) {
    pool_.reset();  // its threads end before the new pool's start
    if (threads > 1) pool_ = std::make_unique<detail::ThreadPool>(threads);
    pool_threads_ = threads;
  }

  const SchurStructure& s = structure_;
  const SchurKernels& k = *kernels_;
  const double* H = A.values().data();
  const int64_t na = s.camera_dim();
  ++factorizations_;
  double* inverses = point_inverses_.data();
  const int failed = parallel_find(s.num_points(), [&](int begin, int end) {
    return k.invert_points(H, shift, inverses, begin, end);
  });
  if (failed >= 0) {
    // A non-finite entry in a fixed-size point block is always such a failure
    // (invert_spd_fixed): how DenseSchur finds those of C (schur_dense.h).
    summary.message = "the matrix is not positive definite (Schur: diagonal block " +
                      std::to_string(s.first_eliminated_block() + failed) +
                      " of A + diag(shift), an eliminated point, is not)";
    return summary;
  }
  double* r = reduced_rhs_.data();
  if (!forms_reduced_rhs()) {
    point_work_.resize(static_cast<size_t>(s.point_dim()));  // once: only these solvers use it
    double* v = point_work_.data();
    eliminate(H, b + na, nullptr, v);
    parallel_for(s.num_cameras(), [&](int begin, int end) {
      k.reduce_rhs(H, v, b, r, begin, end);
    });
  }

  summary = solve_reduced(A, shift, b, r, x, options);
  if (!summary.ok) return summary;
  eliminate(H, b + na, x, x + na);
  return summary;
}

void SchurSolver::eliminate(const double* H, const double* b_C, const double* x_A, double* out) {
  const SchurKernels& k = *kernels_;
  double* products = nullptr;
  if (x_A != nullptr) {
    products = bt_products_.data();
    parallel_for(structure_.num_cameras(), [&](int begin, int end) {
      k.multiply_bt(H, x_A, products, begin, end);
    });
  }
  parallel_for(structure_.num_points(), [&](int begin, int end) {
    k.solve_points(point_inverses_.data(), b_C, products, out, begin, end);
  });
}

}  // namespace lsjit::linear
