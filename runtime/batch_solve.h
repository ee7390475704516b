// Many solves in one call, the C++ analogues of what JAX users do with a traced solver:
//
//   solve_batch     K problems of one structure (or one problem from K starts), each with
//                   its own initial values, data and options, spread over threads
//                   (jax.vmap over solve);
//   sweep           one problem and start, K SolverOptions (a parameter sweep: damping,
//                   tolerances, iteration limits are runtime inputs);
//   solve_sequence  a chain of problems, each solve warm-started from the previous
//                   solution (jax.lax.scan: tracking, receding horizons, data streams).
//
// None of them traces or compiles anything: problems of one structure analyzed one after
// the other share their kernels through the kernel cache (one compile per structure, the
// cache counters show it), and solving is runtime only. Each solve is exactly the solve
// AnalyzedProblem::solve would do alone (bit for bit: a solve's result does not depend on
// threads), so batching changes the wall time, never a result.
#pragma once

#include <vector>

#include "lsjit/runtime/analyzed_problem.h"

namespace lsjit {

struct BatchItem {
  const AnalyzedProblem* problem = nullptr;  // borrowed; must outlive the call
  Values initial;
  SolverOptions options;
};

// Runs every item's solve, `threads` at a time (0: one per hardware thread); each solve
// uses its own options.num_threads (leave it at 1 when batching: the batch is the
// parallelism). Results are in item order.
std::vector<SolveResult> solve_batch(const std::vector<BatchItem>& items, int threads = 0);

// One problem from many starts.
std::vector<SolveResult> solve_batch(const AnalyzedProblem& problem, const std::vector<Values>& initial,
                                     const SolverOptions& options = {}, int threads = 0);

// One problem and start, many option sets.
std::vector<SolveResult> sweep(const AnalyzedProblem& problem, const Values& initial,
                               const std::vector<SolverOptions>& options, int threads = 0);

// problems[0] from `initial`, then problems[k] from problems[k-1]'s solution. Values that
// problem k-1 did not have (new variables) are taken from `initial`. Stops after a solve
// that fails (Termination::Failure); the results so far are returned.
std::vector<SolveResult> solve_sequence(const std::vector<const AnalyzedProblem*>& problems,
                                        const Values& initial, const SolverOptions& options = {});

}  // namespace lsjit
