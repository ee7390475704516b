// Per-instance evaluation: the residuals, Jacobian blocks and cost of chosen cost instances
// at given values (Ceres' CostFunction::Evaluate and Problem::Evaluate, GTSAM's
// NonlinearFactor::error and linearize), through the compiled kernels.
//
//   auto analyzed = problem.analyze();
//   auto r = analyzed.solve(initial);
//   for (const lsjit::InstanceEvaluation& e : analyzed.evaluate_instances(r.values,
//            analyzed.all_instances(), /*jacobians=*/false))
//     if (e.weight < 0.1)                                   // deep in a robust loss's tail
//       std::cout << analyzed.groups()[e.which.group].cost << " instance " << e.which.instance
//                 << " cost " << e.cost << "\n";
//
// Naming an instance. AnalyzedProblem::groups() lists the kernel groups; instance i of
// group g (CostInstance{g, i}) is the i-th instance recorded for that group's cost, in the
// order Problem::add recorded them (a batched add counts as its n instances in batch
// order). Groups are those of analyze(), after merging (problem.h, "Grouping").
//
// What is computed, by which code. Residuals come from the group's Residual kernel, the one
// solve() evaluates the cost with; Jacobians from the group's ResidualJacobian kernel, made
// from the same trace and derivative as the NormalEquations kernel a solve uses (that kernel
// writes JᵀJ and Jᵀr only, from which J cannot be recovered). analyze() does not make the
// ResidualJacobian kernels: the first evaluate_instances() that asks for Jacobians of a group
// gets its kernel from the analyze() cache (a compile or a disk load, counted by the cache
// as a new mode of the cost, not a recompile); after that nothing compiles, whatever the
// values, instances or their number.
//
// Constraint groups (CostKind Equality, InequalityLe, InequalityGe): residuals are c(x)
// and the Jacobians ∂c/∂δ, from the constraint's own kernels (not the augmented-Lagrangian
// residual a solve minimizes); cost is 0 and weight 1, as constraints are not part of the
// cost (AnalyzedProblem::cost).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <Eigen/Core>

namespace lsjit {

// Instance `instance` of group `group` (an index into AnalyzedProblem::groups()).
struct CostInstance {
  size_t group = 0;
  size_t instance = 0;
  bool operator==(const CostInstance&) const = default;
};

using RowMajorMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// One variable argument of an instance and the Jacobian of the residual with respect to it.
struct JacobianBlock {
  std::string_view type;  // the variable type's name ("SE3", "Vec3"; static storage)
  int64_t id = 0;
  bool constant = false;  // held by set_constant: a solve does not move it. Its block is
                          // computed all the same (Ceres' Problem::Evaluate leaves such
                          // columns out; GTSAM has no constant variables)
  // residual_dim x tangent, row-major (Ceres' layout): entry (k, c) = ∂r_k/∂δ_c at δ = 0,
  // where the variable is x ⊞ δ (retraction: x + δ for VecVar/ScalarVar, x·exp(δ) for the
  // Lie groups, the tangent order of docs/variables.md). The Jacobian the solver uses
  // (GTSAM's linearize). 0 x 0 when Jacobians were not asked for.
  RowMajorMatrix jacobian;
  // finite_difference_jacobians only (else 0 x 0): per entry, the rounding error its
  // central difference may carry, estimated from the residual's own rounding noise
  // (gradient_checker.h); the gradient checker adds it to the entry's tolerance.
  RowMajorMatrix rounding;
};

struct InstanceEvaluation {
  CostInstance which;
  // r(x), residual_dim values: the cost's own residual, before any robust loss.
  Eigen::VectorXd residuals;
  double squared_norm = 0;  // s = ‖r‖²
  // ½ρ(s) with the instance's loss (loss.h), ½s without one: what the instance adds to
  // AnalyzedProblem::cost and SolveSummary's initial_cost / final_cost (GTSAM's error()).
  double cost = 0;
  // ρ'(s): 1 without a loss; how much the loss down-weights the instance (below 1 in a
  // loss's tail, 0 beyond Tukey's scale). The usual outlier test.
  double weight = 1;
  // One per variable argument, in the cost's argument order. A variable that fills two
  // slots has two blocks (each the partial derivative through that slot alone; a solve
  // adds them).
  std::vector<JacobianBlock> blocks;
};

}  // namespace lsjit
