#include "lsjit/runtime/analyze/linear_solver_choice.h"

#include <unistd.h>

#include <cstdio>

#include "lsjit/runtime/analyze/ordering_cache.h"
#include "lsjit/runtime/solve/linear/supernodal_kernels.h"

namespace lsjit::detail {
namespace {

std::string with_unit(double v, const char* unit) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3g %s", v, unit);
  return buf;
}

}  // namespace

// Computed once per ProblemLayout (the pattern does not change between solves), with the
// ordering from the kernel cache's directory when it has this pattern's.
const FactorPrediction& predicted_factor(const ProblemLayout& L) {
  std::lock_guard lock(L.prediction_mutex);
  if (!L.factor_prediction) {
    std::shared_ptr<const linear::SupernodalAnalysis> analysis =
        cached_supernodal_analysis(*L.pattern, linear::SupernodalOrdering::Automatic, L.cache);
    const linear::SupernodalAnalysis& a = *analysis;
    FactorPrediction p;
    // What SupernodalCholesky allocates: the panels and the update workspace (whose side is
    // rounded up to the product's tile, a few rows more).
    const double side = static_cast<double>(linear::supernodal::product_leading_dimension(a.max_below_rows));
    p.bytes = 8 * (a.stored_entries + side * side);
    p.flops = a.factorization_flops;
    p.analysis = std::move(analysis);
    L.factor_prediction = p;
  }
  return *L.factor_prediction;
}

namespace {

// A sparse system with no eliminable type: the supernodal Cholesky within the budgets,
// subgraph-preconditioned CG beyond them.
LinearSolverChoice sparse_choice(const ProblemLayout& L, const SolverOptions& options, std::string why) {
  const FactorPrediction& f = predicted_factor(L);
  const double byte_budget = direct_factor_byte_budget(options);
  why += "; its Cholesky factor (" + std::string(linear::supernodal_ordering_name(f.analysis->ordering)) +
         " ordering) needs " + with_unit(f.bytes / 1e6, "MB") + " and " +
         with_unit(f.flops / 1e9, "GFlop") + " per factorization";
  const std::string memory = "max_direct_factor_bytes = " + with_unit(byte_budget / 1e6, "MB") +
                             (options.max_direct_factor_bytes == 0 ? " (half the physical memory)" : "");
  const std::string flops = "max_direct_factorization_flops = " +
                            with_unit(options.max_direct_factorization_flops / 1e9, "GFlop");
  if (f.bytes > byte_budget)
    return {LinearSolver::SubgraphConjugateGradient, why + ", over " + memory + ": subgraph-preconditioned CG"};
  if (f.flops > options.max_direct_factorization_flops)
    return {LinearSolver::SubgraphConjugateGradient, why + ", over " + flops + ": subgraph-preconditioned CG"};
  return {LinearSolver::SparseCholesky, why + ", within " + memory + " and " + flops, f.analysis};
}

}  // namespace

double direct_factor_byte_budget(const SolverOptions& options) {
  if (options.max_direct_factor_bytes > 0) return options.max_direct_factor_bytes;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? 0.5 * static_cast<double>(pages) * static_cast<double>(page) : 4e9;
}

LinearSolverChoice choose_linear_solver(const ProblemLayout& L, const SolverOptions& options) {
  const int64_t free_blocks = static_cast<int64_t>(L.free.size());
  // first_eliminated == 0: every variable is of the eliminable type, H is block diagonal and
  // there is no reduced system to speak of; a Cholesky solver handles that directly.
  if (L.first_eliminated > 0 && L.first_eliminated < free_blocks) {
    const int64_t reduced = L.pattern->scalar_offset(static_cast<int>(L.first_eliminated));
    const std::string why = std::to_string(free_blocks - L.first_eliminated) + " " + L.eliminated_type +
                            " variables can be eliminated; the reduced system has " + std::to_string(reduced) +
                            " scalars";
    if (reduced <= kAutoDenseSchurMax)
      return {LinearSolver::DenseSchur, why + " (at most " + std::to_string(kAutoDenseSchurMax) + ": dense)"};
    return {LinearSolver::SparseSchur, why + " (more than " + std::to_string(kAutoDenseSchurMax) + ": sparse)"};
  }
  const std::string why = "no variable type can be eliminated; the system has " + std::to_string(L.tangent_dim) +
                          " scalars";
  if (L.tangent_dim <= kAutoDenseMax)
    return {LinearSolver::DenseCholesky, why + " (at most " + std::to_string(kAutoDenseMax) + ": dense)"};
  return sparse_choice(L, options, why + " (more than " + std::to_string(kAutoDenseMax) + ": sparse)");
}

}  // namespace lsjit::detail
