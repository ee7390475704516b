#include "lsjit/runtime/solve/linear/linear_solver.h"

#include <chrono>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "lsjit/common/error.h"
#include "lsjit/runtime/solve/linear/conjugate_gradient.h"
#include "lsjit/runtime/solve/linear/dense_cholesky.h"
#include "lsjit/runtime/solve/linear/eigen_sparse_cholesky.h"
#include "lsjit/runtime/solve/linear/subgraph_cg.h"
#include "lsjit/runtime/solve/linear/supernodal_cholesky.h"

namespace lsjit::linear {

namespace {

// Where the first non-finite value of A is, as "block (i, j)", or "" if there is none.
// Like every reader of A, it skips the strictly lower triangle of diagonal blocks.
std::string first_non_finite_block(const BlockSparseSymmetric& A) {
  const BlockPattern& p = A.pattern();
  const double* values = A.values().data();
  // All stored values finite (the usual case) settles it in one pass; else the walk below
  // finds the block, skipping the lower triangles of diagonal blocks, which are never read.
  if (all_finite(values, static_cast<int64_t>(A.values().size()))) return "";
  for (int i = 0; i < p.num_blocks(); ++i) {
    const int ri = p.block_size(i);
    for (int64_t k = p.row_begin(i); k < p.row_end(i); ++k) {
      const int j = p.col(k), cj = p.block_size(j);
      const double* B = values + p.offset(k);
      bool finite = true;
      if (j == i) {
        for (int a = 0; a < ri; ++a) finite &= all_finite(B + a * cj + a, cj - a);
      } else {
        finite = all_finite(B, int64_t{ri} * cj);
      }
      if (!finite) return "block (" + std::to_string(i) + ", " + std::to_string(j) + ")";
    }
  }
  return "";
}

std::string first_non_finite_entry(const char* name, const double* v, int64_t n) {
  for (int64_t r = 0; r < n; ++r)
    if (!std::isfinite(v[r])) {
      std::ostringstream out;
      out << name << "[" << r << "] = " << v[r];
      return out.str();
    }
  return "";
}

}  // namespace

namespace {

// v − v is 0 for a finite v and NaN for NaN or ±inf. V values per vector, two vectors at a
// time, OR-ing the NaN tests (each independent of the others), with no branch per value:
// solve() scans all of A with it every call. (A running sum of v·0 would be bound by the
// additions' latency.)
template <int V>
[[gnu::always_inline]] inline bool all_finite_body(const double* values, int64_t n) {
  typedef double Vec __attribute__((vector_size(V * sizeof(double))));
  typedef long long Mask __attribute__((vector_size(V * sizeof(long long))));
  static_assert(sizeof(Mask) == V * sizeof(double));
  Mask bad0 = {}, bad1 = {};
  int64_t r = 0;
  for (; r + 2 * V <= n; r += 2 * V) {
    Vec a, b;
    __builtin_memcpy(&a, values + r, sizeof a);
    __builtin_memcpy(&b, values + r + V, sizeof b);
    a -= a;
    b -= b;
    bad0 |= a != a;
    bad1 |= b != b;
  }
  const Mask bad = bad0 | bad1;
  long long lanes[V];
  __builtin_memcpy(lanes, &bad, sizeof lanes);
  long long any = 0;
  for (int k = 0; k < V; ++k) any |= lanes[k];
  for (; r < n; ++r) any |= !std::isfinite(values[r]);
  return any == 0;
}

bool all_finite_generic(const double* values, int64_t n) { return all_finite_body<2>(values, n); }

#if defined(__x86_64__)
// 256-bit vectors also on AVX-512 CPUs: the scan is bound by its loads, and on those that
// split 512-bit operations (Zen 4) there is nothing to gain from them.
[[gnu::target("avx2")]] bool all_finite_avx2(const double* values, int64_t n) {
  return all_finite_body<4>(values, n);
}
#endif

}  // namespace

bool all_finite(const double* values, int64_t n) {
  // The AVX2 scan where the CPU has it: wider loads, a little faster than the SSE2 one
  // over the megabytes of a large A.
  static bool (*const scan)(const double*, int64_t) = [] {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) return &all_finite_avx2;
#endif
    return &all_finite_generic;
  }();
  return scan(values, n);
}

LinearSolver::LinearSolver(std::shared_ptr<const BlockPattern> pattern)
    : pattern_(std::move(pattern)) {}

LinearSolveSummary LinearSolver::solve(const BlockSparseSymmetric& A, const double* shift,
                                       const double* b, double* x,
                                       const LinearSolverOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  LinearSolveSummary summary;
  const int64_t n = pattern_->dim();
  if (&A.pattern() != pattern_.get() && !(A.pattern() == *pattern_)) {
    summary.message = "the matrix does not have the block pattern the " + std::string(name()) +
                      " solver was made for";
  } else if (b == nullptr || x == nullptr) {
    summary.message = "b and x must not be null";
  } else {
    const bool bad_shift = shift != nullptr && !all_finite(shift, n), bad_b = !all_finite(b, n);
    // A solver that finds a non-finite A itself is spared this scan when the call can go
    // ahead; a call that fails on its inputs names A's block first, whatever the solver.
    const std::string block = finds_non_finite_matrix() && !bad_shift && !bad_b ? "" : first_non_finite_block(A);
    if (!block.empty()) {
      summary.message = "A has a non-finite value in " + block;
    } else if (bad_shift) {
      summary.message = "non-finite damping: " + first_non_finite_entry("shift", shift, n);
    } else if (bad_b) {
      summary.message = "non-finite right-hand side: " + first_non_finite_entry("b", b, n);
    } else if (n == 0) {
      summary.ok = summary.converged = true;
      summary.iterations = 1;
    } else {
      summary = solve_checked(A, shift, b, x, options);
      if (!summary.ok && finds_non_finite_matrix()) {
        // Failed, possibly on a non-finite value of A: named if there is one.
        if (std::string in_A = first_non_finite_block(A); !in_A.empty()) {
          summary = LinearSolveSummary{};
          summary.message = "A has a non-finite value in " + in_A;
        }
      } else if (summary.ok && !all_finite(x, n)) {
        // Finite inputs, a factorization that succeeded, and still an overflow: a matrix so
        // ill-conditioned that the step is meaningless.
        summary.ok = summary.converged = false;
        summary.message = "the solution is not finite (" + first_non_finite_entry("x", x, n) +
                          "): the matrix is numerically singular";
      }
    }
  }
  summary.direct = summary.ok && direct();
  summary.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

std::unique_ptr<LinearSolver> make_linear_solver(lsjit::LinearSolver type,
                                                 std::shared_ptr<const BlockPattern> pattern) {
  switch (type) {
    case lsjit::LinearSolver::Auto:
      throw std::logic_error("make_linear_solver: LinearSolver::Auto is resolved (choose_linear_solver) first");
    case lsjit::LinearSolver::DenseCholesky:
      return std::make_unique<DenseCholesky>(std::move(pattern));
    case lsjit::LinearSolver::SparseCholesky:
      return std::make_unique<SupernodalCholesky>(std::move(pattern));
    case lsjit::LinearSolver::EigenSparseCholesky:
      return std::make_unique<EigenSparseCholesky>(std::move(pattern));
    case lsjit::LinearSolver::ConjugateGradient:
      return std::make_unique<ConjugateGradient>(std::move(pattern));
    case lsjit::LinearSolver::SubgraphConjugateGradient:
      return std::make_unique<SubgraphCg>(std::move(pattern));
    case lsjit::LinearSolver::DenseSchur:
    case lsjit::LinearSolver::SparseSchur:
    case lsjit::LinearSolver::IterativeSchur:
      throw Error(std::string(linear_solver_name(type)) +
                  " eliminates the trailing blocks of a bundle adjustment problem and needs to "
                  "know where they start: use make_schur_solver(type, pattern, "
                  "first_eliminated_block) from schur_solver.h");
  }
  throw std::logic_error("make_linear_solver: unknown lsjit::LinearSolver");
}

}  // namespace lsjit::linear
