// LinearSolver::Auto's rule (solver_options.h states it for users): which linear solver a
// solve of this structure runs, and why, in words that name the numbers.
#pragma once

#include <memory>
#include <string>

#include "lsjit/runtime/analyze/problem_layout.h"
#include "lsjit/runtime/solve/linear/supernodal_analysis.h"
#include "lsjit/runtime/solver_options.h"

namespace lsjit::detail {

struct LinearSolverChoice {
  LinearSolver solver = LinearSolver::SparseCholesky;
  std::string reason;
  // For SparseCholesky: the budget check's symbolic analysis, so that the solver does not
  // make it again (nullptr otherwise).
  std::shared_ptr<const linear::SupernodalAnalysis> analysis = nullptr;
};

LinearSolverChoice choose_linear_solver(const ProblemLayout& layout, const SolverOptions& options);

// The sparse Cholesky's symbolic analysis of the layout's pattern (Automatic ordering) and
// what it predicts; Auto's budget check and an explicitly chosen SparseCholesky share it.
const FactorPrediction& predicted_factor(const ProblemLayout& layout);

// The memory budget max_direct_factor_bytes stands for: itself, or for 0 half of the
// machine's physical memory.
double direct_factor_byte_budget(const SolverOptions& options);

}  // namespace lsjit::detail
