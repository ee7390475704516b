// Covariance of chosen variable blocks at a point, usually a solution: Ceres'
// ceres::Covariance, GTSAM's Marginals.
//
//   lsjit::SolveResult r = analyzed.solve(initial);
//   lsjit::Covariance c = lsjit::compute_covariance(analyzed, r.values,
//       {{lsjit::SE3Var(3), lsjit::SE3Var(3)}, {lsjit::SE3Var(3), lsjit::SE3Var(4)}});
//   Eigen::MatrixXd P33 = c.block(lsjit::SE3Var(3));                     // 6 x 6
//   Eigen::MatrixXd P34 = c.block(lsjit::SE3Var(3), lsjit::SE3Var(4));   // 6 x 6
//
// What is computed: C = (JᵀJ)⁻¹ over the free (non-constant) variables, J the Jacobian of
// all residuals at `values` (weighed by their robust losses unless
// CovarianceOptions::apply_loss_function is false) in the tangent space of each variable (the right perturbation
// x ⊞ δ of variables.h, so blocks are in the tangent order of docs/variables.md), and
// block (a, b) of C is the T_a x T_b cross-covariance of variables a and b. Constant
// variables are exact by assumption: they are not in C and asking for one is an error.
//
// Scaling: as in Ceres, C is not multiplied by an estimate of the residual variance. It
// is the covariance when the residuals are whitened (r = U·e with UᵀU the information
// matrix, as lsjit's pose-graph and standard costs are). With unit-weight residuals of
// unknown noise σ², multiply C by σ² yourself (e.g. 2·cost / (residuals − tangent dim)).
//
// Algorithms:
//   Dense   eigendecomposition of the dense JᵀJ (memory n², time ~n³ for tangent dim n).
//           Reciprocal condition number λ_min/λ_max, exact (Ceres' DENSE_SVD test,
//           σ_min/σ_max < sqrt(min_reciprocal_condition_number), is the same).
//   Sparse  one sparse LDLᵀ factorization of the block-sparse JᵀJ (Eigen's
//           SimplicialLDLT, AMD ordering), then a solve per needed column: for a pair
//           (a, b) the T_b columns of b (or a's, when a's are needed anyway), in chunks of
//           at most 64 columns. Memory: the factor plus n·64 doubles, never n². Reciprocal
//           condition number estimated as min d_i / max d_i over the pivots d of D (what
//           CHOLMOD's cholmod_rcond reports): it can overestimate the true λ_min/λ_max,
//           so it catches exact rank deficiency (a pivot near rounding level, or <= 0)
//           but may miss a merely ill-conditioned matrix that Dense would reject.
//   Auto    Dense up to a tangent dimension of 1000, Sparse above.
//
// Errors (lsjit::Error, message starting "Covariance: "): a requested variable that is
// not a free variable of the problem (held constant, or used by no cost); a variable
// without a value in `values`; a non-finite JᵀJ; invalid options; and a rank-deficient
// JᵀJ: "the Gauss-Newton matrix is rank deficient (...)", giving the reciprocal condition
// number and, Dense, how many tangent directions are unobservable (eigenvalues below
// min_reciprocal_condition_number·λ_max), Sparse, the pivot that failed and its variable.
// Rank deficiency is usually a gauge freedom (a pose graph with no pose held constant) or
// a variable no residual constrains enough: hold one constant or add a prior.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lsjit/runtime/analyzed_problem.h"
#include "lsjit/runtime/values.h"
#include "lsjit/runtime/variables.h"

namespace lsjit {

// A variable by type name and ID; converts implicitly from any typed handle, so
// {lsjit::SE3Var(3), lsjit::SE3Var(4)} is a pair of them.
struct VariableRef {
  std::string type;  // Var::kName: "SE3", "Vec3", ...
  int64_t id = 0;

  VariableRef(std::string type_name, int64_t var_id) : type(std::move(type_name)), id(var_id) {}
  template <class Var>
    requires is_variable_v<Var>
  VariableRef(const Var& var) : type(Var::kName), id(var.id) {}

  auto operator<=>(const VariableRef&) const = default;
  bool operator==(const VariableRef&) const = default;
};

struct CovarianceOptions {
  enum class Algorithm { Auto, Dense, Sparse };
  Algorithm algorithm = Algorithm::Auto;
  // Below this reciprocal condition number JᵀJ counts as rank deficient (Ceres' default).
  // In (0, 1).
  double min_reciprocal_condition_number = 1e-14;
  // Threads evaluating JᵀJ (0: one per core); the factorizations are single-threaded.
  int num_threads = 1;
  // Robust losses (Problem::add with a Loss): true weighs each instance's JᵀJ as the solver
  // does, ρ'(JᵀJ − β gᵀg) with Ceres' correction, so that outliers the loss has turned down
  // count for little; false ignores the losses, C = (JᵀJ)⁻¹ of the plain residuals. Ceres'
  // Covariance::Options::apply_loss_function, with its default. Problems without losses
  // give the same C either way.
  bool apply_loss_function = true;
};

// The blocks computed for the requested pairs. An immutable value.
class Covariance {
 public:
  // The T_a x T_b block of (JᵀJ)⁻¹ for a requested pair (a, b) or (b, a) (the latter
  // transposed). Throws lsjit::Error when neither was requested.
  Eigen::MatrixXd block(const VariableRef& a, const VariableRef& b) const;
  // The marginal covariance of a (T_a x T_a, symmetric): the pair (a, a) must have been requested.
  Eigen::MatrixXd block(const VariableRef& a) const { return block(a, a); }
  bool has_block(const VariableRef& a, const VariableRef& b) const;

  // What Auto chose (Dense or Sparse) and the reciprocal condition number it measured
  // (exact for Dense, the pivot estimate for Sparse; see the file comment; 1 when the
  // problem has no free variables).
  CovarianceOptions::Algorithm algorithm() const { return algorithm_; }
  double reciprocal_condition_number() const { return reciprocal_condition_number_; }

 private:
  friend Covariance compute_covariance(const AnalyzedProblem&, const Values&,
                                       const std::vector<std::pair<VariableRef, VariableRef>>&,
                                       const CovarianceOptions&);
  std::map<std::pair<VariableRef, VariableRef>, Eigen::MatrixXd> blocks_;  // as requested
  CovarianceOptions::Algorithm algorithm_ = CovarianceOptions::Algorithm::Dense;
  double reciprocal_condition_number_ = 0;
};

// Computes block (a, b) of (JᵀJ)⁻¹ for each requested pair, at `values` (which must hold
// every variable a cost uses; usually SolveResult::values). Pairs may repeat and may name
// a variable twice; (a, b) and (b, a) are one block. Throws lsjit::Error as in the file
// comment. Thread-safe for concurrent calls on one AnalyzedProblem.
Covariance compute_covariance(const AnalyzedProblem& problem, const Values& values,
                              const std::vector<std::pair<VariableRef, VariableRef>>& blocks,
                              const CovarianceOptions& options = {});

}  // namespace lsjit
