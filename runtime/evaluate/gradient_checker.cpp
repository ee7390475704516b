// compare_jacobians, GradientCheckResult::report and AnalyzedProblem::check_gradients.
#include "lsjit/runtime/gradient_checker.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "lsjit/runtime/analyzed_problem.h"

namespace lsjit {
namespace {

// Fills the error measures of an entry whose jacobian and finite_difference are set.
void measure(GradientCheckEntry& e, const GradientCheckOptions& o) {
  const double scale = std::max(std::abs(e.jacobian), std::abs(e.finite_difference));
  e.absolute_error = std::abs(e.jacobian - e.finite_difference);
  e.relative_error = e.absolute_error == 0 ? 0 : e.absolute_error / scale;
  const double tolerance = o.absolute_tolerance + o.relative_tolerance * scale + e.rounding;
  if (!std::isfinite(e.absolute_error)) e.excess = std::numeric_limits<double>::infinity();
  else if (e.absolute_error == 0) e.excess = 0;
  else e.excess = tolerance > 0 ? e.absolute_error / tolerance : std::numeric_limits<double>::infinity();
}

void check_shapes(const InstanceEvaluation& a, const InstanceEvaluation& n) {
  const std::string which = "group " + std::to_string(a.which.group) + " instance " + std::to_string(a.which.instance);
  if (!(a.which == n.which))
    throw Error("lsjit::compare_jacobians: entry for " + which + " is compared with group " +
                std::to_string(n.which.group) + " instance " + std::to_string(n.which.instance) +
                ": expected the same instances in the same order");
  if (a.blocks.size() != n.blocks.size())
    throw Error("lsjit::compare_jacobians: " + which + " has " + std::to_string(a.blocks.size()) + " and " +
                std::to_string(n.blocks.size()) + " Jacobian blocks: expected equal numbers");
  for (size_t s = 0; s < a.blocks.size(); ++s) {
    const RowMajorMatrix &x = a.blocks[s].jacobian, &y = n.blocks[s].jacobian;
    if (x.rows() != y.rows() || x.cols() != y.cols() || x.size() == 0)
      throw Error("lsjit::compare_jacobians: " + which + " slot " + std::to_string(s) + ": blocks of " +
                  std::to_string(x.rows()) + "x" + std::to_string(x.cols()) + " and " + std::to_string(y.rows()) +
                  "x" + std::to_string(y.cols()) + ": expected equal, non-empty shapes (evaluate with Jacobians)");
  }
}

// printf-style formatting of a few numbers into a short line.
template <class... Args>
std::string format(const char* fmt, Args... args) {
  char line[256];
  std::snprintf(line, sizeof line, fmt, args...);
  return line;
}

}  // namespace

GradientCheckResult compare_jacobians(const std::vector<InstanceEvaluation>& analytic,
                                      const std::vector<InstanceEvaluation>& numeric,
                                      const GradientCheckOptions& options) {
  if (analytic.size() != numeric.size())
    throw Error("lsjit::compare_jacobians: " + std::to_string(analytic.size()) + " and " +
                std::to_string(numeric.size()) + " instances: expected the same instances in both");
  GradientCheckResult result;
  std::vector<GradientCheckEntry> all;
  for (size_t k = 0; k < analytic.size(); ++k) {
    const InstanceEvaluation &a = analytic[k], &n = numeric[k];
    check_shapes(a, n);
    ++result.instances;
    for (size_t s = 0; s < a.blocks.size(); ++s) {
      const RowMajorMatrix &J = a.blocks[s].jacobian, &F = n.blocks[s].jacobian;
      const RowMajorMatrix& rounding = n.blocks[s].rounding;  // empty unless from finite differences
      const bool has_rounding = rounding.rows() == F.rows() && rounding.cols() == F.cols();
      for (Eigen::Index r = 0; r < J.rows(); ++r)
        for (Eigen::Index c = 0; c < J.cols(); ++c) {
          GradientCheckEntry e;
          e.which = a.which;
          e.slot = s;
          e.type = a.blocks[s].type;
          e.id = a.blocks[s].id;
          e.row = static_cast<size_t>(r);
          e.col = static_cast<size_t>(c);
          e.jacobian = J(r, c);
          e.finite_difference = F(r, c);
          if (has_rounding && std::isfinite(rounding(r, c))) e.rounding = rounding(r, c);
          measure(e, options);
          ++result.entries;
          if (e.excess > 1) ++result.failed_entries;
          result.max_absolute_error = std::max(result.max_absolute_error, e.absolute_error);
          // Entries that are zero to the absolute tolerance have relative errors of noise.
          if (std::max(std::abs(e.jacobian), std::abs(e.finite_difference)) > options.absolute_tolerance ||
              !std::isfinite(e.relative_error))
            result.max_relative_error = std::max(result.max_relative_error, e.relative_error);
          all.push_back(std::move(e));
        }
    }
  }
  result.passed = result.failed_entries == 0;
  const size_t keep = std::min(options.max_reported, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<ptrdiff_t>(keep), all.end(),
                    [](const GradientCheckEntry& x, const GradientCheckEntry& y) { return x.excess > y.excess; });
  result.worst.assign(all.begin(), all.begin() + static_cast<ptrdiff_t>(keep));
  return result;
}

std::string GradientCheckResult::report() const {
  std::string out = std::string("Gradient check: ") + (passed ? "passed" : "FAILED") + ", " +
                    std::to_string(failed_entries) + " of " + std::to_string(entries) + " Jacobian entries of " +
                    std::to_string(instances) + " instances out of tolerance\n";
  out += format("max |J - J_fd| %.3g, max relative error %.3g\n", max_absolute_error, max_relative_error);
  if (worst.empty()) return out;
  out += "worst entries (excess > 1 fails):\n";
  for (const GradientCheckEntry& e : worst) {
    out += "  " + (e.cost.empty() ? "group " + std::to_string(e.which.group) : "'" + e.cost + "'") + " instance " +
           std::to_string(e.which.instance) + " " + std::string(e.type) + " " + std::to_string(e.id) + " (slot " +
           std::to_string(e.slot) + (e.slot_name.empty() ? "" : " " + e.slot_name) + ") J(" + std::to_string(e.row) + "," + std::to_string(e.col) + "): " +
           format("%.9g vs fd %.9g, abs %.3g rel %.3g rounding %.3g excess %.3g", e.jacobian, e.finite_difference,
                  e.absolute_error, e.relative_error, e.rounding, e.excess) +
           "\n";
  }
  return out;
}

GradientCheckResult AnalyzedProblem::check_gradients(const Values& values, const std::vector<CostInstance>& which,
                                                     const GradientCheckOptions& options) const {
  if (!(options.absolute_tolerance >= 0) || !(options.relative_tolerance >= 0))
    throw Error("lsjit::AnalyzedProblem::check_gradients: tolerances are " +
                format("%g (absolute) and %g (relative)", options.absolute_tolerance, options.relative_tolerance) +
                ": expected non-negative numbers");
  GradientCheckResult result = compare_jacobians(evaluate_instances(values, which, true),
                                                 finite_difference_jacobians(values, which, options.relative_step),
                                                 options);
  const std::vector<GroupInfo> info = groups();
  for (GradientCheckEntry& e : result.worst) {
    e.cost = info[e.which.group].cost;
    e.slot_name = info[e.which.group].var_names.at(e.slot);
  }
  return result;
}

}  // namespace lsjit
