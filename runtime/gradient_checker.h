// The gradient checker: lsjit's Jacobians of cost instances against central differences
// of their residuals, as Ceres' GradientChecker (and Problem::Options' check_gradients)
// does for a CostFunction.
//
//   lsjit::GradientCheckResult check = analyzed.check_gradients(values);
//   if (!check.passed) std::cerr << check.report();
//
// The Jacobian (instance_evaluation.h: ResidualJacobian kernels, tangent space) is compared
// entry by entry with
//   J_fd(k, c) = (r_k(x ⊞ h e_c) − r_k(x ⊞ −h e_c)) / 2h
// where ⊞ is the variable type's retraction (the solver's step), r the group's Residual
// kernel (one call evaluates a batch of instances' 2·ΣT perturbed copies at once), and
// h = relative_step · max(1, |x_c|) for a Euclidean type (VecVar, ScalarVar: each
// component at its own scale, as Ceres' numeric differentiation does), relative_step ·
// max(1, ‖x‖∞) for a Lie group (its tangent components mix the parameters).
// Other slots stay at x. Every variable slot is checked, constant variables included.
//
// An entry fails when |J − J_fd| > absolute_tolerance + relative_tolerance·max(|J|, |J_fd|)
// + rounding (numpy's isclose, symmetric, plus the difference's own rounding). Its relative
// error is |J − J_fd| / max(|J|, |J_fd|) (0 when both are 0). Central differences are
// accurate to about relative_step²·|r'''| in truncation, and carry the residual's rounding
// noise σ divided by the step: a pixel residual computed from values near 500 has
// σ ≈ ε·500 ≈ 1e-13, so an entry whose derivative is 0 differences to ±1e-8 at h = 1e-6.
// So each entry's tolerance is scaled to its step and its residual's noise: `rounding` =
// 4·σ_r / (√2·h) for residual row r, with σ_r measured, not assumed: the residual at
// x ⊞ jη e_c for j = −2, −1, 1, 2 and η = 10⁻³·h is a cubic in j far below rounding, so its
// fourth difference is rounding alone (deviation √70·σ); σ_r is the largest such estimate
// over the instance's tangent components. A residual computed with cancellation
// ((x + 1000)² − 2000x: intermediates of 1e6 for a result near 1) gets the noise it
// really has. The probes cost 4 more residual evaluations per tangent component.
// A residual that is not differentiable at x (|a| at 0, select() at its switch, a Lie log
// at π) fails honestly: there the two derivatives differ.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lsjit/runtime/evaluate/instance_evaluation.h"

namespace lsjit {

struct GradientCheckOptions {
  double relative_step = 1e-6;  // h, relative to the perturbed variable's scale (above)
  double relative_tolerance = 1e-6;
  double absolute_tolerance = 1e-8;
  size_t max_reported = 10;  // GradientCheckResult::worst holds at most this many entries
};

// One Jacobian entry: row `row`, tangent column `col` of instance `which`'s block for
// variable slot `slot`.
struct GradientCheckEntry {
  CostInstance which;
  std::string cost;  // the group's cost name (check_gradients; "" from compare_jacobians)
  size_t slot = 0;
  std::string slot_name;  // the cost's name for the slot (check_gradients; "" from compare_jacobians)
  std::string_view type;  // the slot's variable: type name (static storage) and ID
  int64_t id = 0;
  size_t row = 0, col = 0;
  double jacobian = 0, finite_difference = 0;
  double absolute_error = 0, relative_error = 0;
  // The finite difference's estimated rounding error (see above), part of the tolerance; 0
  // from compare_jacobians with numeric Jacobians that carry no estimate.
  double rounding = 0;
  // absolute_error / (absolute_tolerance + relative_tolerance·max(|J|, |J_fd|)): > 1 fails
  // (infinite when the tolerance is 0 and the error is not; NaN entries fail as infinite).
  double excess = 0;
};

struct GradientCheckResult {
  bool passed = true;         // no entry failed
  size_t instances = 0;       // instances checked
  size_t entries = 0;         // Jacobian entries compared
  size_t failed_entries = 0;
  double max_absolute_error = 0;
  // Over the entries with max(|J|, |J_fd|) above absolute_tolerance: where both are zero to
  // that tolerance (0 against 1e-17), the relative error is noise, up to 1.
  double max_relative_error = 0;
  // The entries with the largest excess, worst first, failed or not (at most
  // max_reported), so that a pass still shows how close it came.
  std::vector<GradientCheckEntry> worst;
  // The totals above and a table of `worst`, one line per entry.
  std::string report() const;
};

// The comparison check_gradients makes: `analytic` and `numeric` hold the same instances
// in the same order, with Jacobian blocks of equal shapes (else lsjit::Error). Exposed so
// that Jacobians from elsewhere can be compared the same way.
GradientCheckResult compare_jacobians(const std::vector<InstanceEvaluation>& analytic,
                                      const std::vector<InstanceEvaluation>& numeric,
                                      const GradientCheckOptions& options = {});

}  // namespace lsjit
