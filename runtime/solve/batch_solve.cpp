#include "lsjit/runtime/batch_solve.h"

#include "lsjit/common/error.h"
#include "lsjit/runtime/evaluate/thread_pool.h"

namespace lsjit {

std::vector<SolveResult> solve_batch(const std::vector<BatchItem>& items, int threads) {
  for (size_t k = 0; k < items.size(); ++k)
    if (!items[k].problem) throw Error("lsjit::solve_batch: item " + std::to_string(k) + " has no problem");
  if (threads < 0 || threads > kMaxThreads)
    throw Error("lsjit::solve_batch: threads is " + std::to_string(threads) + ": expected an integer from 0 to " +
                std::to_string(kMaxThreads));
  std::vector<SolveResult> results(items.size());
  detail::ThreadPool pool(threads);
  pool.run(items.size(), [&](size_t k) { results[k] = items[k].problem->solve(items[k].initial, items[k].options); });
  return results;
}

std::vector<SolveResult> solve_batch(const AnalyzedProblem& problem, const std::vector<Values>& initial,
                                     const SolverOptions& options, int threads) {
  std::vector<BatchItem> items;
  for (const Values& v : initial) items.push_back({&problem, v, options});
  return solve_batch(items, threads);
}

std::vector<SolveResult> sweep(const AnalyzedProblem& problem, const Values& initial,
                               const std::vector<SolverOptions>& options, int threads) {
  std::vector<BatchItem> items;
  for (const SolverOptions& o : options) items.push_back({&problem, initial, o});
  return solve_batch(items, threads);
}

std::vector<SolveResult> solve_sequence(const std::vector<const AnalyzedProblem*>& problems,
                                        const Values& initial, const SolverOptions& options) {
  std::vector<SolveResult> results;
  Values start = initial;
  for (const AnalyzedProblem* p : problems) {
    if (!p) throw Error("lsjit::solve_sequence: a null problem");
    results.push_back(p->solve(start, options));
    if (results.back().summary.termination == Termination::Failure) break;
    results.back().values.for_each([&](const VariableType& t, int64_t id, const double* params) {
      start.set_params(&t, id, params);
    });
  }
  return results;
}

}  // namespace lsjit
