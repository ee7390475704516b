// The preconditioned conjugate-gradient iteration that ConjugateGradient (on H itself) and
// IterativeSchur (on the implicit reduced camera system) share: they differ only in how
// they multiply by the matrix and apply the preconditioner.
//
// Solves M x = b for a symmetric positive definite M given by apply(p, q): q = M p, with
// precondition(r, z): z = P⁻¹ r, from x = 0, stopping when ‖b − M x‖ <= tol·‖b‖ (the
// residual the recurrence tracks) or after options.max_cg_iterations (ok = true,
// converged = false, as Ceres' inexact steps). A direction of non-positive curvature
// (pᵀMp <= 0: M is not positive definite) or a non-finite value ends it with ok = false.
// Sums are serial, so results do not depend on how apply and precondition are threaded.
// `who` names the solver in messages, `curvature` names pᵀMp ("pᵀSp", ...). The caller
// checks the options.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lsjit/runtime/solve/linear/linear_solver.h"

namespace lsjit::linear {

struct PcgVectors {
  std::vector<double> r, z, p, q;  // residual, preconditioned residual, direction, M p
  void resize(size_t n);
};

// "" when options suit preconditioned_cg (max_cg_iterations >= 1, a finite
// cg_relative_tolerance >= 0), else what is wrong, as "WHO needs ...".
std::string invalid_cg_options(const LinearSolverOptions& options, std::string_view who);

// q = (A + diag(shift)) p, shift may be null: the product both CG solvers iterate with.
void multiply_shifted(const BlockSparseSymmetric& A, const double* shift, const double* p, double* q);

LinearSolveSummary preconditioned_cg(size_t n, const double* b, double* x,
                                     const LinearSolverOptions& options,
                                     const std::function<void(const double* p, double* q)>& apply,
                                     const std::function<void(const double* r, double* z)>& precondition,
                                     std::string_view who, std::string_view curvature, PcgVectors& v);

}  // namespace lsjit::linear
