#include "lsjit/runtime/solver_options.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <utility>

#include "lsjit/common/json.h"

namespace lsjit {
namespace {

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// "landmark 8 (eliminated), velocity 4 (1 constant)": the report's per-type row.
std::string variable_type_list(const std::vector<SolveSummary::VariableTypeCount>& types) {
  std::string text;
  for (const auto& t : types) {
    text += (text.empty() ? "" : ", ") + t.name + " " + std::to_string(t.variables);
    std::string notes;
    if (t.constant > 0) notes = std::to_string(t.constant) + " constant";
    if (t.eliminated) notes += (notes.empty() ? "" : ", ") + std::string("eliminated");
    if (!notes.empty()) text += " (" + notes + ")";
  }
  return text;
}

std::string variable_types_json(const std::vector<SolveSummary::VariableTypeCount>& types) {
  std::string text = "[";
  for (const auto& t : types)
    text += (text.size() > 1 ? ", " : "") + std::string("{\"name\": ") + json_string(t.name) +
            ", \"tangent\": " + std::to_string(t.tangent) + ", \"variables\": " + std::to_string(t.variables) +
            ", \"constant\": " + std::to_string(t.constant) +
            ", \"eliminated\": " + (t.eliminated ? "true" : "false") + "}";
  return text + "]";
}

}  // namespace

std::string_view linear_solver_name(LinearSolver solver) {
  switch (solver) {
    case LinearSolver::Auto: return "auto";
    case LinearSolver::DenseCholesky: return "dense_cholesky";
    case LinearSolver::SparseCholesky: return "sparse_cholesky";
    case LinearSolver::EigenSparseCholesky: return "eigen_sparse_cholesky";
    case LinearSolver::ConjugateGradient: return "cg";
    case LinearSolver::SubgraphConjugateGradient: return "subgraph_cg";
    case LinearSolver::DenseSchur: return "dense_schur";
    case LinearSolver::SparseSchur: return "sparse_schur";
    case LinearSolver::IterativeSchur: return "iterative_schur";
  }
  return "?";
}

std::optional<LinearSolver> linear_solver_from_name(std::string_view name) {
  for (LinearSolver s : {LinearSolver::Auto, LinearSolver::DenseCholesky, LinearSolver::SparseCholesky,
                         LinearSolver::EigenSparseCholesky, LinearSolver::ConjugateGradient,
                         LinearSolver::SubgraphConjugateGradient, LinearSolver::DenseSchur, LinearSolver::SparseSchur, LinearSolver::IterativeSchur})
    if (linear_solver_name(s) == name) return s;
  return std::nullopt;
}

std::string_view termination_name(Termination t) {
  switch (t) {
    case Termination::FunctionTolerance: return "function_tolerance";
    case Termination::GradientTolerance: return "gradient_tolerance";
    case Termination::ParameterTolerance: return "parameter_tolerance";
    case Termination::MaxIterations: return "max_iterations";
    case Termination::TimeLimit: return "time_limit";
    case Termination::UserStopped: return "user_stopped";
    case Termination::NoDecrease: return "no_decrease";
    case Termination::TrustRegionTooSmall: return "trust_region_too_small";
    case Termination::Failure: return "failure";
  }
  return "?";
}

bool converged(Termination t) {
  return t == Termination::FunctionTolerance || t == Termination::GradientTolerance ||
         t == Termination::ParameterTolerance;
}

std::string significant(double value) { return format("%g", value); }

std::string iteration_header() {
  return "iter      cost      cost_change  |gradient|   |step|    tr_ratio  tr_radius  ls_iter  "
         "iter_time  total_time";
}

std::string iteration_row(const IterationSummary& it) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%4d % 14.6e % 11.2e % 11.2e % 10.2e % 10.2e % 10.2e %6d % 11.2e % 11.2e%s",
                it.iteration, it.cost, it.cost_change, it.gradient_max_norm, it.step_norm,
                it.relative_decrease, it.trust_region_radius, it.linear_iterations, it.iteration_s,
                it.cumulative_s, it.iteration > 0 && !it.step_accepted ? "  (rejected)" : "");
  return buf;
}

void SolveSummary::record_initialization(std::string name, double seconds, std::string reason) {
  initialization = std::move(name);
  initialization_reason = std::move(reason);
  initialization_s = seconds;
  total_s += seconds;
}

void SolveSummary::record_information_repair(std::string mode, size_t edges) {
  information_repair = std::move(mode);
  repaired_edges = edges;
}

std::string SolveSummary::brief_report() const {
  std::ostringstream out;
  out << "lsjit: " << termination_name(termination) << ", iterations: " << iterations
      << ", initial cost: " << format("%.8e", initial_cost) << ", final cost: "
      << format("%.8e", final_cost) << ", total time: " << format("%.4f", total_s) << " s";
  return out.str();
}

std::string SolveSummary::report() const {
  std::ostringstream out;
  auto row = [&](const char* name, const std::string& value) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%-33s ", name);  // a space even after the longest name
    out << buf << value << "\n";
  };
  auto seconds = [](double s) { return format("%.6f", s); };
  out << "\nSolver Summary (lsjit)\n\n";
  row("Cost groups (kernels)", std::to_string(cost_groups));
  row("Residual blocks", std::to_string(residual_blocks));
  row("Residuals", std::to_string(residuals));
  row("Variables", std::to_string(variables) + " (" + std::to_string(constant_variables) + " constant)");
  row("Tangent dimension (free)", std::to_string(tangent_dim));
  if (variable_types.size() > 1 || (variable_types.size() == 1 && variable_types[0].eliminated))
    row("Variable types", variable_type_list(variable_types));
  row("Linear solver", linear_solver_reason.empty() ? linear_solver
                                                    : linear_solver + " (auto: " + linear_solver_reason + ")");
  row("Threads", std::to_string(num_threads));
  if (!initialization.empty())
    row("Initialization", (initialization_s > 0 ? initialization + " (" + format("%.2f", 1e3 * initialization_s) + " ms)"
                                                : initialization) +
                              (initialization_reason.empty() ? "" : ": " + initialization_reason));
  if (!information_repair.empty() && information_repair != "none")
    row("Information repaired", std::to_string(repaired_edges) + (repaired_edges == 1 ? " edge" : " edges") +
                                    " (" + information_repair + ")");
  out << "\nCost (1/2 sum |r|^2):\n";
  row("  Initial", format("%.8e", initial_cost));
  row("  Final", format("%.8e", final_cost));
  row("  Change", format("%.8e", initial_cost - final_cost));
  out << "\n";
  row("Iterations", std::to_string(iterations));
  row("  Successful steps", std::to_string(successful_steps));
  row("  Unsuccessful steps", std::to_string(unsuccessful_steps));
  out << "Evaluations\n";
  row("  Cost alone", std::to_string(residual_evaluations));
  row("  Normal equations", std::to_string(normal_evaluations));
  if (mixed_precision_solves + mixed_precision_fallbacks > 0)
    row("Mixed-precision solves", std::to_string(mixed_precision_solves) + " (" +
                                      std::to_string(mixed_precision_fallbacks) + " fell back to double)");
  if (!outer_iterations.empty()) {
    out << "\nConstraints (augmented Lagrangian):\n";
    row("  Outer iterations", std::to_string(outer_iterations.size()));
    row("  Final violation", format("%.3e", constraint_violation));
    for (const OuterIteration& o : outer_iterations) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "    outer %3d  objective %.8e  violation %.3e  penalty %.1e  inner %d (%s)\n",
                    o.iteration, o.objective, o.constraint_violation, o.penalty, o.inner_iterations,
                    std::string(termination_name(o.inner_termination)).c_str());
      out << buf;
    }
  }
  // analyze() traces and compiles once per AnalyzedProblem; a solve only reads its counts.
  out << "\nKernel cache, at analyze() (every solve of it shares these): " << cache_hits << " hits"
      << (linked_kernels ? " (" + std::to_string(linked_kernels) + " linked into the program)" : std::string())
      << ", " << cache_misses << " misses (" << compiles << " compiled"
      << (background_compiles ? ", " + std::to_string(background_compiles) + " of them in the background" : std::string())
      << (tier0_kernels ? ", " + std::to_string(tier0_kernels) + " started in tier 0" : std::string())
      << (recompiles ? ", " + std::to_string(recompiles) + " recompiles" : std::string()) << ")";
  if (tier0_evaluations) out << "; " << tier0_evaluations << " kernel calls in tier 0 during the solve";
  out << "\n\nTime (in seconds):\n";
  if (!initialization.empty()) row("  Initialization", seconds(initialization_s));
  out << "  analyze(), once per problem:\n";
  row("    Trace", seconds(trace_s));
  row("    Kernels, wall", seconds(kernels_wall_s));
  row("    Kernels, summed over kernels", seconds(compile_s));
  row("    Analyze total, wall", seconds(analyze_s));
  out << "  This solve:\n";
  row("    Set-up (evaluator, solver)", seconds(setup_s));
  row("    Residual evaluation", seconds(residual_s));
  row("    Jacobian (normal equations)", seconds(jacobian_s));
  row("    Linear solver", seconds(linear_solver_s));
  row("    Solve total", seconds(solve_s));
  row("Total", seconds(total_s));
  out << "\nTermination: " << termination_name(termination) << " (" << message << ")\n";
  for (const std::string& w : warnings) out << "Warning: " << w << "\n";
  return out.str();
}

std::string SolveSummary::json() const {
  std::ostringstream out;
  out << "{\"initial_cost\": " << json_number(initial_cost) << ", \"final_cost\": " << json_number(final_cost)
      << ", \"iterations\": " << iterations << ", \"successful_steps\": " << successful_steps
      << ", \"unsuccessful_steps\": " << unsuccessful_steps
      << ", \"residual_evaluations\": " << residual_evaluations
      << ", \"normal_evaluations\": " << normal_evaluations
      << ", \"mixed_precision_solves\": " << mixed_precision_solves
      << ", \"mixed_precision_fallbacks\": " << mixed_precision_fallbacks
      << ", \"termination\": " << json_string(termination_name(termination))
      << ", \"converged\": " << (converged(termination) ? "true" : "false")
      << ", \"message\": " << json_string(message) << ", \"warnings\": [";
  for (size_t i = 0; i < warnings.size(); ++i) out << (i ? ", " : "") << json_string(warnings[i]);
  out << "], \"trace_s\": " << json_number(trace_s)
      << ", \"compile_s\": " << json_number(compile_s) << ", \"kernels_wall_s\": " << json_number(kernels_wall_s)
      << ", \"analyze_s\": " << json_number(analyze_s) << ", \"setup_s\": " << json_number(setup_s)
      << ", \"residual_s\": " << json_number(residual_s) << ", \"jacobian_s\": " << json_number(jacobian_s)
      << ", \"linear_solver_s\": " << json_number(linear_solver_s) << ", \"solve_s\": " << json_number(solve_s)
      << ", \"total_s\": " << json_number(total_s) << ", \"initialization\": " << json_string(initialization)
      << ", \"initialization_reason\": " << json_string(initialization_reason)
      << ", \"initialization_s\": " << json_number(initialization_s)
      << ", \"information_repair\": " << json_string(information_repair) << ", \"repaired_edges\": " << repaired_edges
      << ", \"cache_hits\": " << cache_hits
      << ", \"cache_misses\": " << cache_misses << ", \"compiles\": " << compiles
      << ", \"background_compiles\": " << background_compiles << ", \"tier0_kernels\": " << tier0_kernels
      << ", \"recompiles\": " << recompiles << ", \"tier0_evaluations\": " << tier0_evaluations
      << ", \"linked_kernels\": " << linked_kernels
      << ", \"cost_groups\": " << cost_groups << ", \"residual_blocks\": " << residual_blocks
      << ", \"residuals\": " << residuals << ", \"variables\": " << variables
      << ", \"constant_variables\": " << constant_variables << ", \"tangent_dim\": " << tangent_dim
      << ", \"variable_types\": " << variable_types_json(variable_types)
      << ", \"linear_solver\": " << json_string(linear_solver)
      << ", \"linear_solver_reason\": " << json_string(linear_solver_reason) << ", \"num_threads\": " << num_threads
      << ", \"constraint_violation\": " << json_number(constraint_violation) << ", \"outer_iterations\": [";
  for (size_t i = 0; i < outer_iterations.size(); ++i) {
    const OuterIteration& o = outer_iterations[i];
    out << (i ? ", " : "") << "{\"iteration\": " << o.iteration << ", \"objective\": " << json_number(o.objective)
        << ", \"constraint_violation\": " << json_number(o.constraint_violation)
        << ", \"penalty\": " << json_number(o.penalty) << ", \"inner_iterations\": " << o.inner_iterations
        << ", \"inner_termination\": " << json_string(termination_name(o.inner_termination)) << "}";
  }
  out << "], \"per_iteration\": [";
  for (size_t i = 0; i < per_iteration.size(); ++i) {
    const IterationSummary& it = per_iteration[i];
    out << (i ? ", " : "") << "{\"iteration\": " << it.iteration << ", \"cost\": " << json_number(it.cost)
        << ", \"cost_change\": " << json_number(it.cost_change)
        << ", \"gradient_max_norm\": " << json_number(it.gradient_max_norm)
        << ", \"step_norm\": " << json_number(it.step_norm)
        << ", \"relative_decrease\": " << json_number(it.relative_decrease)
        << ", \"trust_region_radius\": " << json_number(it.trust_region_radius)
        << ", \"linear_iterations\": " << it.linear_iterations
        << ", \"step_accepted\": " << (it.step_accepted ? "true" : "false")
        << ", \"iteration_s\": " << json_number(it.iteration_s) << ", \"cumulative_s\": " << json_number(it.cumulative_s)
        << "}";
  }
  out << "]}";
  return out.str();
}

}  // namespace lsjit
