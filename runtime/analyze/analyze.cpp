// Problem::analyze(): from recorded instances to a ProblemLayout (problem_layout.h) and
// its kernels, as a script of passes, one per line, each in the .h/.cpp pair named after
// it (docs/architecture.md, "The pipeline").
#include "lsjit/common/clock.h"
#include "lsjit/runtime/analyze/gather_lists.h"
#include "lsjit/runtime/analyze/look_up_kernels.h"
#include "lsjit/runtime/analyze/number_variables.h"
#include "lsjit/runtime/analyze/place_instances.h"
#include "lsjit/runtime/analyze/problem_layout.h"
#include "lsjit/runtime/analyze/trace_groups.h"
#include "lsjit/runtime/analyzed_problem.h"
#include "lsjit/runtime/problem.h"

namespace lsjit {

AnalyzedProblem Problem::analyze(const AnalyzeOptions& options) const {
  const auto start = Clock::now();
  auto layout = std::make_shared<detail::ProblemLayout>();
  compiler::KernelCache& cache = options.cache ? *options.cache : compiler::default_cache();
  layout->cache = &cache;
  layout->compile = options.compile;

  std::vector<detail::TracedGroup> groups = detail::trace_groups(groups_, *layout);
  detail::look_up_kernels(groups, cache, options.compile, *layout);
  detail::number_variables(groups, constant_, options.schur_elimination, *layout);
  detail::place_instances(groups, *layout);
  detail::build_gather_lists(*layout);

  layout->jacobian_kernels.resize(layout->groups.size());
  layout->analyze_s = seconds_since(start);
  return AnalyzedProblem(std::move(layout));
}

}  // namespace lsjit
