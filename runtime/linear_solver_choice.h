// LinearSolver::Auto's rule (solver_options.h states it for users): which linear solver a
// solve of this structure runs, and why, in words that name the numbers.
#pragma once

#include <string>

#include "lsjit/runtime/linear/supernodal_analysis.h"
#include "lsjit/runtime/problem_layout.h"
#include "lsjit/runtime/solver_options.h"

namespace lsjit::detail {

struct LinearSolverChoice {
  LinearSolver solver = LinearSolver::SparseCholesky;
  std::string reason;
  // For SparseCholesky: the ordering the budget check's analysis chose, so that the solver
  // does not compute the other one again.
  linear::SupernodalOrdering ordering = linear::SupernodalOrdering::Automatic;
};

LinearSolverChoice choose_linear_solver(const ProblemLayout& layout, const SolverOptions& options);

// The memory budget max_direct_factor_bytes stands for: itself, or for 0 half of the
// machine's physical memory.
double direct_factor_byte_budget(const SolverOptions& options);

}  // namespace lsjit::detail
