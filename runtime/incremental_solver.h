// Online least squares: a problem that grows by a few variables and costs per update, with
// the new estimate after each (GTSAM's ISAM2). docs/incremental.md has the model and a
// porting table.
//
//   lsjit::IncrementalSolver solver;                     // IncrementalOptions' defaults
//   for (each frame) {
//     lsjit::Problem new_costs;                          // this frame's costs only
//     new_costs.add(between, SE2Var(k - 1), SE2Var(k), z, U);
//     lsjit::Values new_values;                          // this frame's new variables only
//     new_values.set(SE2Var(k), guess);
//     lsjit::UpdateSummary s = solver.update(std::move(new_costs), new_values);
//     use(solver.estimate().get(SE2Var(k)));
//   }
//
// What an update does. Each new cost instance is linearized once at the linearization point
// θ (GTSAM's linearization point; new variables start there at their given values) and
// added to an IncrementalFactor (runtime/solve/linear/incremental_factor.h), which
// re-eliminates only the elimination-tree paths the new costs reach, with the new variables
// ordered last. One Gauss–Newton step is solved per update, by back substitution that stops
// where the solution moves less than wildfire_threshold; the estimate is θ ⊕ δ. Every
// relinearize_skip-th update, the variables whose ‖δ‖∞ reached relinearize_threshold have
// θ ← θ ⊕ δ, and the costs on them are linearized again (fluid relinearization).
//
// Kernels. A cost type (Problem::add's grouping identity) is traced and its kernels looked
// up at its first update only; later instances of it trace and compile nothing (counted in
// UpdateSummary::traces and ::compiles). A cost made by a closure that cannot be compared
// (identity "", problem.h) is traced again at each update it appears in, and still finds its
// kernels by structural hash without compiling.
//
// Constant variables: a new variable named by new_costs.set_constant(...) is held at its
// value for good. Constraints (CostKind::Equality and the inequalities) are not supported.
//
// Errors. update() checks the whole request before changing anything and throws
// lsjit::Error, naming what is wrong, for: a cost on a variable that neither exists nor is
// in new_values; a new value for a variable that exists; a non-finite or invalid value; a
// new variable no cost uses (a constant one may come before its costs); set_constant on
// an existing variable; an unknown or repeated
// handle in `removed`, or one whose removal leaves a variable without costs; a constraint.
// A new cost whose value or derivatives are not finite at its variables' values (a log of
// a negative number, say) is rejected the same way, before anything changes. Relinearizing
// at θ ⊕ δ can meet the same: update() then throws, and the solver cannot go on.
// If the updated system is not positive definite (an unanchored gauge, say), update()
// relinearizes everything at the estimate and eliminates everything again; if that fails too
// it throws, with the update's costs and variables added but the estimate unchanged.
//
// Not thread-safe: one thread at a time per solver.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "lsjit/runtime/problem.h"
#include "lsjit/runtime/values.h"

namespace lsjit {

// The thresholds of iSAM2 (GTSAM's ISAM2Params), with tighter defaults: ISAM2's (0.1, 10,
// 1e-3) end replays of generated graphs up to 5% above the batch optimum, these within
// 1e-3 of it (docs/incremental.md has the measurements and the trade).
struct IncrementalOptions {
  // A variable is relinearized when ‖δ‖∞ reaches this (in its tangent space).
  double relinearize_threshold = 0.03;
  // Relinearization is checked at every relinearize_skip-th update (>= 1).
  int relinearize_skip = 5;
  // Back substitution stops below a clique whose variables moved less than this (0: the
  // exact solve of the linearized system every update).
  double wildfire_threshold = 1e-4;
  // For new cost types: the kernel cache and compile options (problem.h).
  AnalyzeOptions analyze;
};

struct UpdateSummary {
  double linearize_s = 0;  // tracing new cost types and evaluating kernels
  double factor_s = 0;     // re-elimination of the top
  double solve_s = 0;      // back substitution and the estimate
  double total_s = 0;
  int64_t variables_added = 0, costs_added = 0, costs_removed = 0;
  int64_t variables_relinearized = 0;
  int64_t variables_reeliminated = 0, cliques_refactored = 0;
  int64_t front_entries = 0;  // Σ (clique scalars)² of the refactored cliques: the work done
  int64_t cliques_backsubstituted = 0, variables_changed = 0;
  int64_t traces = 0, compiles = 0;  // of this update
  bool full_refactor = false;        // the first elimination failed; everything was redone
};

// One cost instance added by an update (IncrementalSolver::last_added()).
struct CostHandle {
  uint32_t kind = 0;      // the solver's cost type
  uint32_t instance = 0;  // its instance number
  bool operator==(const CostHandle&) const = default;
};

namespace detail {
struct IncrementalState;
}

class IncrementalSolver {
 public:
  explicit IncrementalSolver(IncrementalOptions options = {});
  ~IncrementalSolver();
  IncrementalSolver(IncrementalSolver&&) noexcept;
  IncrementalSolver& operator=(IncrementalSolver&&) noexcept;

  // Adds new_costs' instances and new_values' variables, removes `removed`, and updates
  // the estimate (see above).
  UpdateSummary update(Problem&& new_costs, const Values& new_values, std::span<const CostHandle> removed = {});

  // Handles of the last update's instances, in new_costs' order: its cost groups in the
  // order they were first added to, each group's instances in the order added.
  const std::vector<CostHandle>& last_added() const;

  // θ ⊕ δ for every variable (constants at their values).
  const Values& estimate() const;
  // θ: where each variable's costs were last linearized.
  const Values& linearization_point() const;
  // ½ Σ ρ(‖r‖²) over the live costs at the estimate (an O(costs) evaluation).
  double cost() const;
  // ½ Σ ρ(‖r‖²) at `values`, which must hold every variable a live cost uses.
  double cost(const Values& values) const;

  int64_t num_variables() const;
  int64_t num_costs() const;  // live instances
  // Kernel lookups and traces since construction.
  int64_t traces() const;
  int64_t compiles() const;

 private:
  std::unique_ptr<detail::IncrementalState> state_;
};

}  // namespace lsjit
