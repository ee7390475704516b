// Linear solvers for the damped normal equations of Levenberg-Marquardt:
//
//   (A + diag(shift)) x = b        A = JᵀJ (BlockSparseSymmetric), shift = the damping D,
//                                  b = -Jᵀr, x = the step
//
// A solver is made once per problem structure (make_linear_solver), which is when the
// symbolic work happens: fill-reducing ordering and symbolic factorization for the sparse
// Cholesky solvers, workspace allocation for all. Every solve() then reuses it and only
// does numeric work on the current values and shift, so an LM iteration that tries several
// damping vectors pays one numeric factorization (or one CG run) per try.
//
//   auto solver = linear::make_linear_solver(lsjit::LinearSolver::SparseCholesky, H.shared_pattern());
//   for (each iteration, each damping) {
//     LinearSolveSummary s = solver->solve(H, D.data(), minus_g.data(), step.data(), options);
//     if (!s.ok) { ... increase the damping, or stop, and report s.message ... }
//   }
//
// Errors: solve() never throws and never crashes on numerical input. It returns ok = false
// with a message, leaving x unspecified, when the shifted matrix is not positive definite
// (including singular), when A (the part of values() that is read, see block_sparse.h),
// shift or b has a NaN or infinity, when the result is not finite, or when A does not have
// the pattern the solver was made for. "Not positive definite" is what a Cholesky solver
// sees as a pivot <= 0; a numerically singular matrix may instead give tiny positive pivots
// and a huge but finite x, which LM rejects by its cost. CG sees it when a diagonal block is
// not positive definite or when it meets a direction of non-positive curvature, which it
// may not before reaching its tolerance (see conjugate_gradient.h). Only constructors and make_linear_solver throw (std::bad_alloc,
// or lsjit::Error when a symbolic analysis fails).
//
// Thread safety: a solver object keeps workspace and may be used by one thread at a time;
// distinct solver objects are independent (each keeps its own workspace).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "lsjit/runtime/solve/linear/block_sparse.h"
#include "lsjit/runtime/solver_options.h"
#include "lsjit/runtime/solver_options.h"  // lsjit::LinearSolver, the one enum of solvers

namespace lsjit::linear {

// Runtime parameters: read on every solve(), so they may change between calls without
// rebuilding anything. Solvers ignore the ones that are not theirs.
using lsjit::MixedPrecision;  // solver_options.h

struct LinearSolverOptions {
  // ConjugateGradient: stop when ‖b − (A + diag(shift)) x‖₂ <= cg_relative_tolerance·‖b‖₂
  // (the residual as the CG recurrence tracks it), or after max_cg_iterations iterations.
  // max_cg_iterations >= 1 and a finite cg_relative_tolerance >= 0, else solve() fails.
  // ConjugateGradient and IterativeSchur (on the reduced camera system, see
  // schur_iterative.h).
  int max_cg_iterations = 500;
  double cg_relative_tolerance = 1e-6;
  // Threads for the Schur solvers' per-point and per-camera work, the caller's included; 0
  // means one per hardware thread, < 0 makes solve() fail. Results do not depend on it (bit
  // for bit). The other solvers run on the calling thread.
  int num_threads = 1;
  // SparseCholesky (the supernodal one): whether to factor in float and refine in double
  // (above), and at most how many refinement steps (>= 1; Ceres' name) before falling back
  // to double. The other solvers ignore both.
  MixedPrecision mixed_precision = MixedPrecision::Never;
  int max_num_refinement_iterations = 10;
};

struct LinearSolveSummary {
  bool ok = false;               // x holds the solution (CG: the last iterate, see converged)
  std::string message;           // why not ok; for CG also why it stopped unconverged
  int iterations = 0;            // CG iterations; 1 for a direct solve; refinement steps of
                                 // a mixed-precision one
  bool converged = false;        // direct: == ok; CG: reached its tolerance
  double relative_residual = 0;  // CG: ‖b − (A + diag(shift)) x‖/‖b‖ (recurrence); mixed
                                 // precision: the same, computed; direct: 0
  bool mixed_precision = false;  // solved by a float factor and refinement in double
  bool mixed_precision_fallback = false;  // a mixed-precision solve fell back to double
  // ok, and x is a factorization's solution: (A + diag(shift)) x = b holds to rounding, so
  // callers may use the identity xᵀA x = bᵀx − Σ shift_i x_i² instead of forming A x (the
  // Levenberg–Marquardt model decrease does). False for CG and iterative Schur.
  bool direct = false;
  double seconds = 0;            // wall time of the call
  // A direct factorization that met a non-positive pivot: the block of A (its numbering)
  // that pivot belongs to, so that callers can name the variable; -1 otherwise.
  int bad_block = -1;
};

class LinearSolver {
 public:
  virtual ~LinearSolver() = default;

  // Solves (A + diag(shift)) x = b. A must have the pattern the solver was made for (the
  // same BlockPattern object or an equal one); it is not modified. shift, b and x are
  // dim() doubles; shift == nullptr means zero. b and x must not overlap. See the file
  // comment for what ok = false means. Checks the inputs and the result and times the
  // call; the numeric work is the implementation's solve_checked().
  LinearSolveSummary solve(const BlockSparseSymmetric& A, const double* shift, const double* b,
                           double* x, const LinearSolverOptions& options);

  // The implementation: dense_cholesky, supernodal_cholesky, cholmod_cholesky (only for
  // comparison, in builds with LSJIT_WITH_CHOLMOD), eigen_sparse_cholesky, cg,
  // dense_schur, sparse_schur or iterative_schur.
  virtual std::string_view name() const = 0;
  // Whether an ok solve is a factorization's (exact to rounding; see LinearSolveSummary::direct).
  virtual bool direct() const = 0;

  // How often the symbolic analysis (ordering, symbolic factorization, workspace) and the
  // numeric factorization (CG: building the preconditioner) ran, so that callers and tests
  // can see that solve() reuses the analysis: analyses() stays 1 for the object's life.
  int64_t analyses() const { return analyses_; }
  int64_t factorizations() const { return factorizations_; }

  const BlockPattern& pattern() const { return *pattern_; }

 protected:
  explicit LinearSolver(std::shared_ptr<const BlockPattern> pattern);

  // solve() without the checks: called only when A has the pattern, A, shift and b are
  // finite, b and x are non-null and dim() > 0. Fills ok, message, iterations, converged
  // and relative_residual; solve() rejects a non-finite x afterwards.
  // Except for a solver whose finds_non_finite_matrix() is true: that one is also called
  // without A checked, and must return ok = false when any part of A it reads has a
  // non-finite value (noticed in passes it makes anyway). After a failure solve() looks for
  // such a value, to name its block; when A has none (the solver failed on its own
  // arithmetic, or A is not positive definite) the solver's message stands. This spares
  // every solve a pass over all of A (megabytes per iteration on bundle adjustment).
  virtual LinearSolveSummary solve_checked(const BlockSparseSymmetric& A, const double* shift,
                                           const double* b, double* x,
                                           const LinearSolverOptions& options) = 0;
  virtual bool finds_non_finite_matrix() const { return false; }

  std::shared_ptr<const BlockPattern> pattern_;
  int64_t analyses_ = 0;
  int64_t factorizations_ = 0;
};

// The solver of `type` for matrices with this pattern (e.g. H.shared_pattern(); no matrix
// is needed, so callers need not allocate values to make a solver).
// SparseCholesky is SupernodalCholesky, in every build. Never
// returns nullptr; throws what the solver's constructor throws, and lsjit::Error for a
// Schur type (use make_schur_solver in schur_solver.h, which takes the elimination point).
std::unique_ptr<LinearSolver> make_linear_solver(lsjit::LinearSolver type,
                                                 std::shared_ptr<const BlockPattern> pattern);

// Whether this build of lsjit has CHOLMOD (configured with -DLSJIT_WITH_CHOLMOD=ON; GPL,
// so off by default): CholmodCholesky is then there for comparison.
bool cholmod_available();


// True when all n values are finite (no NaN, no infinity).
bool all_finite(const double* values, int64_t n);

}  // namespace lsjit::linear
