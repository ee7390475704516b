// AnalyzedProblem: a Problem after analyze(): traced, compiled and laid out, ready to be
// solved any number of times from any initial values with any SolverOptions, none of
// which recompiles anything.
//
//   auto analyzed = problem.analyze();
//   lsjit::SolveResult r = analyzed.solve(initial, {.linear_solver = ..., .verbose = true});
//   std::cout << r.summary.report();
//
// solve() is const and may run concurrently from several threads on one AnalyzedProblem
// (each call has its own workspace; linear solvers come from a shared pool).
// Copies share the analyzed state (cheap).
#pragma once

#include <memory>

#include <Eigen/Core>
#include <string>
#include <vector>

#include "lsjit/runtime/evaluate/instance_evaluation.h"
#include "lsjit/runtime/gradient_checker.h"
#include "lsjit/runtime/solve/linear/block_sparse.h"
#include "lsjit/runtime/solver_options.h"
#include "lsjit/runtime/values.h"

namespace lsjit {

namespace detail {
struct ProblemLayout;
}

struct SolveResult {
  Values values;         // the initial Values with every referenced variable updated
  SolveSummary summary;
};

class AnalyzedProblem {
 public:
  // Runs Levenberg–Marquardt from `initial`, which must hold a value for every variable a
  // cost references (else the summary is a Failure naming the first missing one; values
  // not referenced are passed through). Never throws for numerical trouble: a non-finite
  // initial cost is a Failure naming the first bad instance, a non-finite gradient or
  // Gauss–Newton matrix at the initial values (a finite cost whose derivative is NaN or
  // infinite, e.g. |a - b| at a = b) is a Failure naming the first such variable, and
  // trial points where the cost, the gradient or the Gauss–Newton matrix is not finite,
  // and failed linear solves, are rejected steps. A Failure returns the initial values.
  // With no free variables (a problem without costs, or whose variables are all
  // constant) there is nothing to solve: the cost is evaluated and checked as above, and
  // the result is the initial values with termination GradientTolerance and the message
  // "no free variables", as Ceres reports convergence for a problem without parameters;
  // with constraints, that holds when they are satisfied, and a violated one is a Failure
  // that says the problem is infeasible as given (nothing can move to satisfy it).
  SolveResult solve(const Values& initial, const SolverOptions& options = {}) const;

  // ½Σ‖r‖² of the least-squares costs at `values` (constraints are not costs: they do not
  // count). Throws lsjit::Error if a referenced variable has no value.
  double cost(const Values& values, int num_threads = 1) const;

  // The free variables in the order of the linear system: by type name, then ID. Variable
  // k's tangent components are [offset, offset + tangent) of gradients and matrices.
  struct FreeVariable {
    std::string type;
    int64_t id = 0;
    size_t offset = 0, tangent = 0;
  };
  std::vector<FreeVariable> free_variables() const;

  // Cost, gradient Jᵀr and (optionally, dense: for small problems and tests) the
  // Gauss–Newton matrix JᵀJ at `values`, over the free variables, in tangent space. What a
  // solve computes at each accepted point, as Ceres' Problem::Evaluate gives it. Constraint
  // costs enter as their augmented-Lagrangian residuals with λ = 0 and ρ = 1, i.e. as ½‖c‖².
  struct Evaluation {
    double cost = 0;
    Eigen::VectorXd gradient;
    Eigen::MatrixXd gauss_newton;  // empty unless asked for
  };
  Evaluation evaluate(const Values& values, bool gauss_newton = false, int num_threads = 1) const;
  // The same Gauss–Newton matrix in its block-sparse form (one block per free variable, in
  // free_variables() order; runtime/solve/linear/block_sparse.h), for large problems. `gradient`
  // (tangent_dim doubles) and `cost` are filled when not nullptr. Robust losses weigh every
  // term as a solve's do (ρ'(JᵀJ − β gᵀg) per instance, evaluator.h); with apply_losses
  // false every instance counts as plain least squares (ρ(s) = s).
  linear::BlockSparseSymmetric gauss_newton_matrix(const Values& values, double* gradient = nullptr,
                                                   double* cost = nullptr, int num_threads = 1,
                                                   bool apply_losses = true) const;

  // Per-instance evaluation (instance_evaluation.h has the contract): for each of `which`,
  // in that order, its residuals, cost, loss weight, variables and, when `jacobians`, its
  // Jacobian blocks at `values`. Only the variables of `which` need values. Throws
  // lsjit::Error for an instance that does not exist (naming the group's size), a variable
  // without a value or with a non-finite parameter (naming the variable and the instance).
  // Non-finite residuals at finite values are returned as they are.
  std::vector<InstanceEvaluation> evaluate_instances(const Values& values, const std::vector<CostInstance>& which,
                                                     bool jacobians = true) const;
  // Every instance, group by group, in instance order.
  std::vector<CostInstance> all_instances() const;
  // The same as evaluate_instances(values, which, true), with every Jacobian block by
  // central differences of the Residual kernel in the tangent space instead
  // (gradient_checker.h gives the step). The residuals and costs are evaluate_instances'.
  std::vector<InstanceEvaluation> finite_difference_jacobians(const Values& values,
                                                              const std::vector<CostInstance>& which,
                                                              double relative_step = 1e-6) const;
  // evaluate_instances' Jacobians against finite_difference_jacobians', compared by
  // compare_jacobians (gradient_checker.h), over `which` or over every instance.
  GradientCheckResult check_gradients(const Values& values, const std::vector<CostInstance>& which,
                                      const GradientCheckOptions& options = {}) const;
  GradientCheckResult check_gradients(const Values& values, const GradientCheckOptions& options = {}) const {
    return check_gradients(values, all_instances(), options);
  }

  struct GroupInfo {
    std::string cost;
    size_t instances = 0;
    uint32_t residual_dim = 0;
    std::string residual_kernel_id, normal_equations_kernel_id;  // cache entry ids
    // The cost's argument names, per slot (Cost::named; default x0 x1 ..., d0 d1 ...).
    std::vector<std::string> var_names, data_names;
  };
  std::vector<GroupInfo> groups() const;
  size_t num_instances() const;
  size_t tangent_dim() const;
  double trace_s() const;
  double compile_s() const;

 private:
  friend class Problem;
  explicit AnalyzedProblem(std::shared_ptr<const detail::ProblemLayout> layout);
  // The analysis; throws lsjit::Error when this object was moved from (its layout_ is then
  // null): every public method goes through it, so a moved-from object throws, never crashes.
  const detail::ProblemLayout& layout() const;
  std::shared_ptr<const detail::ProblemLayout> layout_;
};

}  // namespace lsjit
