// validate(SolverOptions): every option's valid range, as one table.
//
// Why a table: each row is a field, the range it must lie in and how to say that range.
// Adding an option is adding a row, and the message format cannot drift between fields.
// NaN fails every comparison, so it is rejected wherever a range is (a NaN tolerance would
// otherwise never stop a solve, and a NaN radius would reach the linear solver).
#include <cmath>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "lsjit/runtime/solver_options.h"

namespace lsjit {
namespace {

constexpr double kMaxFinite = 1.7976931348623157e308;

struct Range {
  double lo, hi;
  bool lo_open = false;  // lo < value instead of lo <= value
  bool integer = false;

  bool contains(double v) const {
    return (lo_open ? v > lo : v >= lo) && v <= hi && (!integer || std::floor(v) == v);
  }
  std::string describe() const {
    const bool unbounded = std::isinf(hi);
    const bool finite = hi == kMaxFinite;  // "a finite number", not "(0, 1.79769e+308]"
    std::string s = integer ? "an integer" : finite ? "a finite number" : "a number";
    auto num = [this](double x) {
      char buf[32];
      std::snprintf(buf, sizeof buf, integer ? "%.0f" : "%g", x);
      return std::string(buf);
    };
    if (unbounded || finite) return s + (lo_open ? " > " : " >= ") + num(lo);
    if (!integer || lo_open) return s + " in " + (lo_open ? "(" : "[") + num(lo) + ", " + num(hi) + "]";
    return s + " from " + num(lo) + " to " + num(hi);
  }
};

constexpr double kInf = INFINITY;
constexpr Range kNonNegative{0, kInf};               // tolerances, times: +inf allowed
constexpr Range kPositiveFinite{0, kMaxFinite, true};
constexpr Range kCount{0, 2147483647.0, false, true};
constexpr Range kPositiveCount{1, 2147483647.0, false, true};

struct Rule {
  const char* name;
  std::function<double(const SolverOptions&)> get;
  Range range;
};

// The table. Cross-field rules (min <= initial <= max) are below it.
const Rule kRules[] = {
    {"initial_trust_region_radius", [](const SolverOptions& o) { return o.initial_trust_region_radius; }, kPositiveFinite},
    {"max_trust_region_radius", [](const SolverOptions& o) { return o.max_trust_region_radius; }, kPositiveFinite},
    {"min_trust_region_radius", [](const SolverOptions& o) { return o.min_trust_region_radius; }, {0, kMaxFinite}},
    {"min_relative_decrease", [](const SolverOptions& o) { return o.min_relative_decrease; }, {0, 1, false}},
    {"very_successful_radius_growth", [](const SolverOptions& o) { return o.very_successful_radius_growth; }, {1, kMaxFinite}},
    {"min_lm_diagonal", [](const SolverOptions& o) { return o.min_lm_diagonal; }, kPositiveFinite},
    {"max_lm_diagonal", [](const SolverOptions& o) { return o.max_lm_diagonal; }, kPositiveFinite},
    {"function_tolerance", [](const SolverOptions& o) { return o.function_tolerance; }, kNonNegative},
    {"gradient_tolerance", [](const SolverOptions& o) { return o.gradient_tolerance; }, kNonNegative},
    {"parameter_tolerance", [](const SolverOptions& o) { return o.parameter_tolerance; }, kNonNegative},
    {"max_iterations", [](const SolverOptions& o) { return o.max_iterations; }, kCount},
    {"max_time_s", [](const SolverOptions& o) { return o.max_time_s; }, kNonNegative},
    {"max_direct_factor_bytes", [](const SolverOptions& o) { return o.max_direct_factor_bytes; }, {0, kMaxFinite}},
    {"max_direct_factorization_flops", [](const SolverOptions& o) { return o.max_direct_factorization_flops; }, {0, kInf}},
    {"max_linear_iterations", [](const SolverOptions& o) { return o.max_linear_iterations; }, kPositiveCount},
    {"linear_relative_tolerance", [](const SolverOptions& o) { return o.linear_relative_tolerance; }, {0, 1}},
    {"max_num_refinement_iterations", [](const SolverOptions& o) { return o.max_num_refinement_iterations; }, kPositiveCount},
    {"num_threads", [](const SolverOptions& o) { return o.num_threads; }, {0, kMaxThreads, false, true}},
    {"constraints.initial_penalty", [](const SolverOptions& o) { return o.constraints.initial_penalty; }, kPositiveFinite},
    {"constraints.penalty_factor", [](const SolverOptions& o) { return o.constraints.penalty_factor; }, {1, kMaxFinite}},
    {"constraints.violation_reduction", [](const SolverOptions& o) { return o.constraints.violation_reduction; }, {0, 1, true}},
    {"constraints.max_penalty", [](const SolverOptions& o) { return o.constraints.max_penalty; }, kPositiveFinite},
    {"constraints.max_multiplier", [](const SolverOptions& o) { return o.constraints.max_multiplier; }, kPositiveFinite},
    {"constraints.violation_tolerance", [](const SolverOptions& o) { return o.constraints.violation_tolerance; }, kNonNegative},
    {"constraints.max_outer_iterations", [](const SolverOptions& o) { return o.constraints.max_outer_iterations; }, kCount},
    {"constraints.inner_min_lm_diagonal", [](const SolverOptions& o) { return o.constraints.inner_min_lm_diagonal; }, kPositiveFinite},
};

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// "SolverOptions::a (X) must be at most SolverOptions::b (Y)", or "".
std::string ordered(const char* a, double va, const char* b, double vb) {
  if (va <= vb) return "";
  return std::string("SolverOptions::") + a + " (" + number(va) + ") must be at most SolverOptions::" + b +
         " (" + number(vb) + ")";
}

const Rule& rule_named(std::string_view name) {
  for (const Rule& rule : kRules)
    if (name == rule.name) return rule;
  throw std::logic_error("lsjit: no SolverOptions field named " + std::string(name));
}

}  // namespace

bool option_in_range(std::string_view name, double value) { return rule_named(name).range.contains(value); }
std::string option_range(std::string_view name) { return rule_named(name).range.describe(); }
bool option_is_integer(std::string_view name) { return rule_named(name).range.integer; }

std::vector<OptionRange> option_ranges(const SolverOptions& o) {
  std::vector<OptionRange> out;
  for (const Rule& rule : kRules) out.push_back({rule.name, rule.get(o), rule.range.describe()});
  return out;
}

std::string validate(const SolverOptions& o) {
  for (const Rule& rule : kRules) {
    const double v = rule.get(o);
    if (!rule.range.contains(v))
      return std::string("SolverOptions::") + rule.name + " is " + number(v) + ": expected " +
             rule.range.describe();
  }
  for (const std::string& m :
       {ordered("min_trust_region_radius", o.min_trust_region_radius, "initial_trust_region_radius",
                o.initial_trust_region_radius),
        ordered("initial_trust_region_radius", o.initial_trust_region_radius, "max_trust_region_radius",
                o.max_trust_region_radius),
        ordered("min_lm_diagonal", o.min_lm_diagonal, "max_lm_diagonal", o.max_lm_diagonal),
        ordered("constraints.initial_penalty", o.constraints.initial_penalty, "constraints.max_penalty",
                o.constraints.max_penalty)})
    if (!m.empty()) return m;
  return "";
}

}  // namespace lsjit
