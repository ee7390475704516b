#include "lsjit/runtime/solve/linear/pcg.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

namespace lsjit::linear {
namespace {

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  for (size_t k = 0; k < a.size(); ++k) sum += a[k] * b[k];
  return sum;
}

std::string format(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

}  // namespace

void PcgVectors::resize(size_t n) {
  for (auto* v : {&r, &z, &p, &q}) v->resize(n);
}

std::string invalid_cg_options(const LinearSolverOptions& options, std::string_view who) {
  if (options.max_cg_iterations >= 1 && std::isfinite(options.cg_relative_tolerance) &&
      options.cg_relative_tolerance >= 0)
    return "";
  return std::string(who) + " needs max_cg_iterations >= 1 (got " +
         std::to_string(options.max_cg_iterations) +
         ") and a finite cg_relative_tolerance >= 0 (got " + format(options.cg_relative_tolerance) + ")";
}

void multiply_shifted(const BlockSparseSymmetric& A, const double* shift, const double* p, double* q) {
  A.multiply(p, q);
  if (shift == nullptr) return;
  for (int64_t r = 0; r < A.dim(); ++r) q[r] += shift[r] * p[r];
}

LinearSolveSummary preconditioned_cg(size_t n, const double* b, double* x,
                                     const LinearSolverOptions& options,
                                     const std::function<void(const double*, double*)>& apply,
                                     const std::function<void(const double*, double*)>& precondition,
                                     std::string_view who, std::string_view curvature, PcgVectors& v) {
  LinearSolveSummary summary;
  v.resize(n);
  std::copy(b, b + n, v.r.begin());
  std::fill(x, x + n, 0.0);
  const double b_norm = std::sqrt(dot(v.r, v.r));
  if (b_norm == 0) {
    summary.ok = summary.converged = true;
    return summary;
  }
  const std::string name(who);
  auto non_finite = [&](int it) { return name + " produced a non-finite value at iteration " + std::to_string(it); };
  precondition(v.r.data(), v.z.data());
  v.p = v.z;
  double rz = dot(v.r, v.z);
  for (int it = 1; it <= options.max_cg_iterations; ++it) {
    apply(v.p.data(), v.q.data());
    const double pq = dot(v.p, v.q);
    if (!(pq > 0)) {
      summary.message = std::isfinite(pq)
                            ? "the matrix is not positive definite (" + name + " breakdown: " +
                                  std::string(curvature) + " = " + format(pq) + " at iteration " +
                                  std::to_string(it) + ")"
                            : non_finite(it);
      return summary;
    }
    const double alpha = rz / pq;
    for (size_t k = 0; k < n; ++k) {
      x[k] += alpha * v.p[k];
      v.r[k] -= alpha * v.q[k];
    }
    summary.iterations = it;
    summary.relative_residual = std::sqrt(dot(v.r, v.r)) / b_norm;
    if (!std::isfinite(summary.relative_residual)) {
      summary.message = non_finite(it);
      return summary;
    }
    if (summary.relative_residual <= options.cg_relative_tolerance) {
      summary.ok = summary.converged = true;
      return summary;
    }
    precondition(v.r.data(), v.z.data());
    const double rz_next = dot(v.r, v.z);
    const double beta = rz_next / rz;
    rz = rz_next;
    for (size_t k = 0; k < n; ++k) v.p[k] = v.z[k] + beta * v.p[k];
  }
  summary.ok = true;
  summary.message = name + " stopped at max_cg_iterations = " + std::to_string(options.max_cg_iterations) +
                    " with relative residual " + format(summary.relative_residual);
  return summary;
}

}  // namespace lsjit::linear
