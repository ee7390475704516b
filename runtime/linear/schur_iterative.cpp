#include "lsjit/runtime/linear/schur_iterative.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "lsjit/runtime/linear/schur_kernels.h"

namespace lsjit::linear {

namespace {

// Serial, so that the sum's rounding does not depend on the thread count.
double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (size_t r = 0; r < a.size(); ++r) sum += a[r] * b[r];
  return sum;
}

std::string format(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

}  // namespace

IterativeSchur::IterativeSchur(std::shared_ptr<const BlockPattern> pattern,
                               int first_eliminated_block)
    : SchurSolver(std::move(pattern), first_eliminated_block) {
  camera_inverses_.resize(structure_.camera_square_total());
  for (auto* v : {&r_, &z_, &p_, &q_}) v->resize(structure_.camera_dim());
  w_.resize(structure_.point_dim());
  analyses_ = 1;
}

std::string IterativeSchur::invalid_options(const LinearSolverOptions& options) const {
  if (options.max_cg_iterations >= 1 && std::isfinite(options.cg_relative_tolerance) &&
      options.cg_relative_tolerance >= 0)
    return "";
  return "iterative_schur needs max_cg_iterations >= 1 (got " +
         std::to_string(options.max_cg_iterations) +
         ") and a finite cg_relative_tolerance >= 0 (got " +
         format(options.cg_relative_tolerance) + ")";
}

void IterativeSchur::multiply(const double* H, const double* shift, const double* p, double* q) {
  double* w = w_.data();
  eliminate(H, nullptr, p, w);  // w = −(C + D_C)⁻¹Bᵀp
  parallel_for(structure_.num_cameras(), [&](int begin, int end) {
    kernels().multiply_schur(H, shift, p, w, q, begin, end);
  });
}

LinearSolveSummary IterativeSchur::solve_reduced(const BlockSparseSymmetric& A,
                                                 const double* shift, const double* r,
                                                 double* x_A,
                                                 const LinearSolverOptions& options) {
  LinearSolveSummary summary;
  const size_t n = r_.size();
  std::copy(r, r + n, r_.begin());
  std::fill(x_A, x_A + n, 0.0);
  const double* H = A.values().data();
  double* inverses = camera_inverses_.data();
  const int failed = parallel_find(structure_.num_cameras(), [&](int begin, int end) {
    return kernels().invert_schur_diagonal(H, shift, point_inverses(), inverses, begin, end);
  });
  if (failed >= 0) {
    summary.message = "the matrix is not positive definite (iterative Schur: the diagonal "
                      "block of camera " + std::to_string(failed) +
                      " in the reduced camera system is not)";
    return summary;
  }
  const double r_norm = std::sqrt(dot(r_, r_));
  if (r_norm == 0) {  // also when there are no cameras
    summary.ok = summary.converged = true;
    return summary;
  }
  auto precondition = [&] {
    parallel_for(structure_.num_cameras(), [&](int begin, int end) {
      kernels().multiply_camera_inverses(inverses, r_.data(), z_.data(), begin, end);
    });
  };

  precondition();
  p_ = z_;
  double rz = dot(r_, z_);
  for (int it = 1; it <= options.max_cg_iterations; ++it) {
    multiply(H, shift, p_.data(), q_.data());
    const double pq = dot(p_, q_);
    if (!(pq > 0)) {
      summary.message = std::isfinite(pq)
                            ? "the matrix is not positive definite (iterative Schur breakdown: "
                              "pᵀSp = " + format(pq) + " at iteration " + std::to_string(it) + ")"
                            : "iterative Schur produced a non-finite value at iteration " +
                                  std::to_string(it);
      return summary;
    }
    const double alpha = rz / pq;
    for (size_t e = 0; e < n; ++e) {
      x_A[e] += alpha * p_[e];
      r_[e] -= alpha * q_[e];
    }
    summary.iterations = it;
    summary.relative_residual = std::sqrt(dot(r_, r_)) / r_norm;
    if (!std::isfinite(summary.relative_residual)) {
      summary.message =
          "iterative Schur produced a non-finite value at iteration " + std::to_string(it);
      return summary;
    }
    if (summary.relative_residual <= options.cg_relative_tolerance) {
      summary.ok = summary.converged = true;
      return summary;
    }
    precondition();
    const double rz_next = dot(r_, z_);
    const double beta = rz_next / rz;
    rz = rz_next;
    for (size_t e = 0; e < n; ++e) p_[e] = z_[e] + beta * p_[e];
  }
  summary.ok = true;
  summary.message = "iterative Schur stopped at max_cg_iterations = " +
                    std::to_string(options.max_cg_iterations) + " with relative residual " +
                    format(summary.relative_residual);
  return summary;
}

}  // namespace lsjit::linear
