// AnalyzedProblem::solve(): Values in, Levenberg–Marquardt, Values out.
#include "lsjit/runtime/analyzed_problem.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <tuple>
#include <utility>

#include "lsjit/common/clock.h"
#include "lsjit/runtime/analyze/linear_solver_choice.h"
#include "lsjit/runtime/analyze/problem_layout.h"
#include "lsjit/runtime/evaluate/evaluator.h"
#include "lsjit/runtime/problem/type_name_clash.h"
#include "lsjit/runtime/evaluate/thread_pool.h"
#include "lsjit/runtime/solve/augmented_lagrangian.h"
#include "lsjit/runtime/solve/levenberg_marquardt.h"
#include "lsjit/runtime/solve/linear/schur_solver.h"
#include "lsjit/runtime/solve/linear/supernodal_cholesky.h"

namespace lsjit {
namespace {

// The state arrays (per type, rows in layout order) from `values`; "" or what is missing.
std::string load_state(const detail::ProblemLayout& layout, const Values& values,
                       std::vector<std::vector<double>>& state) {
  state.assign(layout.types.size(), {});
  for (size_t t = 0; t < layout.types.size(); ++t) {
    const detail::TypeTable& table = layout.types[t];
    const int ambient = table.type->ambient;
    state[t].resize(table.ids.size() * ambient);
    const Values::TypeRows rows = values.rows_of(table.type->name);
    if (rows.type)
      if (const std::string clash = detail::type_name_clash(*table.type, *rows.type); !clash.empty())
        return "the costs and the initial values disagree: " + clash;
    // Usually the values hold exactly the problem's variables, in the same order: one copy.
    if (std::equal(table.ids.begin(), table.ids.end(), rows.ids.begin(), rows.ids.end())) {
      std::copy(rows.params.begin(), rows.params.end(), state[t].begin());
      continue;
    }
    for (size_t r = 0; r < table.ids.size(); ++r) {
      const double* p = values.params(table.type->name, table.ids[r]);
      if (!p)
        return "no initial value for " + table.type->name + " variable " + std::to_string(table.ids[r]) +
               " (a cost uses it)";
      std::copy(p, p + ambient, state[t].begin() + static_cast<ptrdiff_t>(r * ambient));
    }
  }
  return "";
}

// "N variables held constant ... no cost uses them (A, B, ...)" and the same for initial
// values, or nothing. Every variable a cost uses has a value (load_state checks), so the
// values no cost uses are counted by size alone and named only when there are some.
std::vector<std::string> unused_warnings(const detail::ProblemLayout& L, const Values& values) {
  std::vector<std::string> warnings;
  auto list = [](const std::vector<std::string>& names, size_t count) {
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
    return count > names.size() ? s + ", ..." : s;
  };
  if (L.unused_constants > 0)
    warnings.push_back(std::to_string(L.unused_constants) + " variable(s) held constant (set_constant) that no cost "
                       "uses: " + list(L.unused_constant_names, L.unused_constants) +
                       ". Holding them changes nothing; is an ID or a type wrong?");
  size_t used = 0;
  for (const detail::TypeTable& t : L.types) used += t.ids.size();
  if (values.size() > used) {
    std::vector<std::string> names;
    values.for_each([&](const VariableType& type, int64_t id, const double*) {
      if (names.size() < detail::ProblemLayout::kNamedUnusedVariables && !L.uses_variable(type.name, id))
        names.push_back(type.name + " variable " + std::to_string(id));
    });
    const size_t unused = values.size() - used;
    warnings.push_back(std::to_string(unused) + " initial value(s) of variables no cost uses, passed through "
                       "unchanged: " + list(names, unused) + ". Is an ID or a type wrong?");
  }
  return warnings;
}

// A thread count given to one of the evaluation functions, checked as SolverOptions'.
void check_threads(int num_threads, const char* function) {
  if (num_threads < 0 || num_threads > kMaxThreads)
    throw Error(std::string(function) + ": num_threads is " + std::to_string(num_threads) +
                ": expected an integer from 0 to " + std::to_string(kMaxThreads));
}

}  // namespace

namespace detail {

std::unique_ptr<linear::LinearSolver> ProblemLayout::take_solver(
    lsjit::LinearSolver type, std::shared_ptr<const linear::SupernodalAnalysis> analysis) const {
  {
    std::lock_guard lock(pool_mutex);
    for (auto& [t, solver] : pool)
      if (t == type && solver) return std::move(solver);
  }
  if (type == lsjit::LinearSolver::DenseSchur || type == lsjit::LinearSolver::SparseSchur ||
      type == lsjit::LinearSolver::IterativeSchur) {
    if (first_eliminated >= static_cast<int64_t>(free.size()))
      throw Error(std::string(linear_solver_name(type)) +
                  " needs a variable type to eliminate, and this problem has none (a type is "
                  "eliminable when no cost has two variables of it; see "
                  "AnalyzeOptions::schur_elimination)");
    return linear::make_schur_solver(type, pattern, static_cast<int>(first_eliminated));
  }
  if (type == lsjit::LinearSolver::SparseCholesky)
    return std::make_unique<linear::SupernodalCholesky>(
        pattern, analysis != nullptr ? analysis : predicted_factor(*this).analysis);
  return linear::make_linear_solver(type, pattern);
}

void ProblemLayout::give_back(lsjit::LinearSolver type,
                              std::unique_ptr<linear::LinearSolver> solver) const {
  std::lock_guard lock(pool_mutex);
  for (auto& [t, slot] : pool)
    if (!slot) {
      t = type;
      slot = std::move(solver);
      return;
    }
  pool.emplace_back(type, std::move(solver));
}

}  // namespace detail

AnalyzedProblem::AnalyzedProblem(std::shared_ptr<const detail::ProblemLayout> layout)
    : layout_(std::move(layout)) {}

const detail::ProblemLayout& AnalyzedProblem::layout() const {
  if (!layout_)
    throw Error("lsjit::AnalyzedProblem: this object was moved from; use the AnalyzedProblem it was moved to, "
                "or analyze() the Problem again");
  return *layout_;
}

namespace {

// Calls tier 0 has answered for the kernels a solve runs, over the process's lifetime.
uint64_t tier0_calls(const detail::ProblemLayout& L) {
  uint64_t calls = 0;
  for (const detail::KernelGroup& g : L.groups)
    for (const auto* kernel : {g.residual.get(), g.normal.get(), g.constraint.get()})
      if (kernel) calls += kernel->tier0_calls.load(std::memory_order_relaxed);
  return calls;
}

// The summary's account of the analysis, before any solving.
void describe_analysis(const detail::ProblemLayout& L, const Values& initial, SolveSummary& s) {
  s.trace_s = L.trace_s;
  s.compile_s = L.compile_s;
  s.kernels_wall_s = L.kernels_wall_s;
  s.analyze_s = L.analyze_s;
  s.cache_hits = L.cache_hits;
  s.cache_misses = L.cache_misses;
  s.tier0_kernels = L.tier0_kernels;
  s.linked_kernels = L.linked_kernels;
  s.compiles = L.compiles;
  s.background_compiles = L.background_compiles;
  s.recompiles = L.recompiles;
  s.cost_groups = L.groups.size();
  for (const auto& g : L.groups) s.residual_blocks += static_cast<size_t>(g.instances);
  s.residuals = L.residuals;
  for (const auto& t : L.types) {
    s.variables += t.ids.size();
    auto& count = s.variable_types.emplace_back();
    count.name = t.type->name;
    count.tangent = t.type->tangent;
    count.variables = t.ids.size();
    count.constant = static_cast<size_t>(std::count(t.free_index.begin(), t.free_index.end(), -1));
    count.eliminated = t.type->name == L.eliminated_type;
  }
  s.constant_variables = L.constant_variables;
  s.tangent_dim = static_cast<size_t>(L.tangent_dim);
  s.warnings = L.analysis_warnings;
  for (std::string& w : unused_warnings(L, initial)) s.warnings.push_back(std::move(w));
}

// options.linear_solver, or Auto's choice with its reason (and the symbolic analysis it
// made, for the solver to reuse).
LinearSolver resolve_linear_solver(const detail::ProblemLayout& L, const SolverOptions& options, SolveSummary& s,
                                   std::shared_ptr<const linear::SupernodalAnalysis>& analysis) {
  LinearSolver chosen = options.linear_solver;
  if (chosen == LinearSolver::Auto) {
    try {
      detail::LinearSolverChoice choice = detail::choose_linear_solver(L, options);
      chosen = choice.solver;
      s.linear_solver_reason = std::move(choice.reason);
      analysis = std::move(choice.analysis);
    } catch (const std::exception& e) {  // the analysis ran out of memory or METIS failed
      chosen = LinearSolver::SubgraphConjugateGradient;
      s.linear_solver_reason = std::string("the sparse Cholesky's analysis failed (") + e.what() +
                               "): subgraph-preconditioned CG";
    }
  }
  s.linear_solver = std::string(linear_solver_name(chosen));
  return chosen;
}

}  // namespace

// Checks the options, picks the linear solver, loads the state, then minimizes: LM, or the
// augmented-Lagrangian loop around it when a cost is a constraint. Every failure before
// the minimizer is a Failure summary, never an exception.
SolveResult AnalyzedProblem::solve(const Values& initial, const SolverOptions& options) const {
  const auto start = Clock::now();
  const detail::ProblemLayout& L = layout();
  SolveResult result{initial, {}};
  SolveSummary& s = result.summary;
  describe_analysis(L, initial, s);
  const uint64_t tier0_calls_before = tier0_calls(L);
  auto finish = [&] {
    s.tier0_evaluations = tier0_calls(L) - tier0_calls_before;
    s.solve_s = seconds_since(start);
    s.total_s = s.analyze_s + s.solve_s;
    return result;
  };
  auto fail = [&](std::string message) {
    s.termination = Termination::Failure;
    s.message = std::move(message);
    return finish();
  };
  // Options first: a bad one must not reach the threads or the linear algebra (nor Auto's
  // budget check, which runs a symbolic analysis).
  if (std::string invalid = validate(options); !invalid.empty()) {
    s.linear_solver = std::string(linear_solver_name(options.linear_solver));
    return fail(std::move(invalid));
  }
  std::shared_ptr<const linear::SupernodalAnalysis> analysis;  // Auto's, for the solver
  const LinearSolver chosen = resolve_linear_solver(L, options, s, analysis);
  std::vector<std::vector<double>> state;
  if (std::string missing = load_state(L, initial, state); !missing.empty()) return fail(missing);
  std::optional<detail::ThreadPool> pool;
  try {
    pool.emplace(options.num_threads);
  } catch (const Error& e) {
    return fail(e.what());
  }
  s.num_threads = pool->threads();
  detail::Evaluator evaluator(L, *pool);
  std::unique_ptr<linear::LinearSolver> solver;
  try {
    solver = L.take_solver(chosen, analysis);
  } catch (const std::exception& e) {
    return fail(std::string("the linear solver could not be set up: ") + e.what());
  }
  const bool constrained = std::any_of(L.groups.begin(), L.groups.end(), [](const detail::KernelGroup& g) {
    return g.kind != ir::CostKind::LeastSquares;
  });
  s.setup_s = seconds_since(start);
  if (constrained) detail::augmented_lagrangian(L, evaluator, *solver, state, options, s, start);
  else detail::levenberg_marquardt(L, evaluator, *solver, state, options, s, start);
  L.give_back(chosen, std::move(solver));
  for (size_t t = 0; t < L.types.size(); ++t)
    result.values.set_params_rows(L.types[t].type, L.types[t].ids, state[t].data());
  return finish();
}

double AnalyzedProblem::cost(const Values& values, int num_threads) const {
  std::vector<std::vector<double>> state;
  if (std::string missing = load_state(layout(), values, state); !missing.empty())
    throw Error("lsjit::AnalyzedProblem::cost: " + missing);
  check_threads(num_threads, "lsjit::AnalyzedProblem::cost");
  detail::ThreadPool pool(num_threads);
  detail::Evaluator evaluator(layout(), pool);
  return evaluator.objective(state);
}

std::vector<AnalyzedProblem::FreeVariable> AnalyzedProblem::free_variables() const {
  std::vector<FreeVariable> out;
  for (const detail::FreeVariable& f : layout().free) {
    const detail::TypeTable& t = layout().types[f.type];
    out.push_back({t.type->name, t.ids[f.row], static_cast<size_t>(f.offset), f.tangent});
  }
  return out;
}

AnalyzedProblem::Evaluation AnalyzedProblem::evaluate(const Values& values, bool gauss_newton,
                                                       int num_threads) const {
  std::vector<std::vector<double>> state;
  if (std::string missing = load_state(layout(), values, state); !missing.empty())
    throw Error("lsjit::AnalyzedProblem::evaluate: " + missing);
  check_threads(num_threads, "lsjit::AnalyzedProblem::evaluate");
  detail::ThreadPool pool(num_threads);
  detail::Evaluator evaluator(layout(), pool);
  Evaluation e;
  e.gradient.resize(layout().tangent_dim);
  auto H = linear::BlockSparseSymmetric::uninitialized(layout().pattern);  // all written below
  e.cost = evaluator.normal_equations(state, e.gradient.data(), H);
  if (gauss_newton) e.gauss_newton = H.to_dense();
  return e;
}

linear::BlockSparseSymmetric AnalyzedProblem::gauss_newton_matrix(const Values& values, double* gradient,
                                                                  double* cost, int num_threads,
                                                                  bool apply_losses) const {
  std::vector<std::vector<double>> state;
  if (std::string missing = load_state(layout(), values, state); !missing.empty())
    throw Error("lsjit::AnalyzedProblem::gauss_newton_matrix: " + missing);
  check_threads(num_threads, "lsjit::AnalyzedProblem::gauss_newton_matrix");
  detail::ThreadPool pool(num_threads);
  detail::Evaluator evaluator(layout(), pool, apply_losses);
  auto H = linear::BlockSparseSymmetric::uninitialized(layout().pattern);  // all written below
  std::vector<double> g(static_cast<size_t>(layout().tangent_dim));
  const double c = evaluator.normal_equations(state, g.data(), H);
  if (gradient) std::copy(g.begin(), g.end(), gradient);
  if (cost) *cost = c;
  return H;
}

std::vector<AnalyzedProblem::GroupInfo> AnalyzedProblem::groups() const {
  std::vector<GroupInfo> out;
  for (const auto& g : layout().groups) {
    GroupInfo info{g.name, static_cast<size_t>(g.instances), g.residual_dim, g.residual->key.id(),
                   g.normal->key.id(), {}, {}};
    for (const ir::VarSlot& v : g.traced.signature.vars) info.var_names.push_back(v.name);
    for (const ir::DataSlot& d : g.traced.signature.data) info.data_names.push_back(d.name);
    out.push_back(std::move(info));
  }
  return out;
}

size_t AnalyzedProblem::num_instances() const {
  size_t n = 0;
  for (const auto& g : layout().groups) n += static_cast<size_t>(g.instances);
  return n;
}
size_t AnalyzedProblem::tangent_dim() const { return static_cast<size_t>(layout().tangent_dim); }
double AnalyzedProblem::trace_s() const { return layout().trace_s; }
double AnalyzedProblem::compile_s() const { return layout().compile_s; }

}  // namespace lsjit
