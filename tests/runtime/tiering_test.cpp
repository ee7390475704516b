// Tiered kernels (compiler/cache/kernel_cache.h, Options::Tiering): a solve that starts in tier 0
// and switches to the compiled kernels when a background compile finishes gives the
// solution of either tier alone, bit for bit, wherever the switch falls.
#include <doctest/doctest.h>

#include <bit>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "../support/memory_cache.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/runtime/analyzed_problem.h"
#include "lsjit/runtime/io/synthetic.h"
#include "lsjit/runtime/pose_graph_problem.h"

using namespace lsjit;
using Tiering = compiler::KernelCache::Options::Tiering;

namespace {

// Every parameter of every variable, in Values' order, as bits.
std::vector<uint64_t> bits(const Values& values) {
  std::vector<uint64_t> out;
  values.for_each([&](const VariableType& type, int64_t, const double* p) {
    for (int k = 0; k < type.ambient; ++k) out.push_back(std::bit_cast<uint64_t>(p[k]));
  });
  return out;
}

std::vector<uint64_t> cost_bits(const SolveSummary& s) {
  std::vector<uint64_t> out;
  for (const IterationSummary& it : s.per_iteration) out.push_back(std::bit_cast<uint64_t>(it.cost));
  return out;
}

}  // namespace

TEST_CASE("a mid-solve switch from tier 0 to compiled kernels changes no bit of the solution") {
  io::PoseGraphSpec spec;
  spec.dimension = 3;
  spec.poses = 300;
  spec.loop_closures = 60;
  spec.translation_sigma = 0.1;
  spec.rotation_sigma = 0.05;
  spec.seed = 7;
  const PoseGraphProblem p = make_pose_graph_problem(io::generate_pose_graph(spec).graph);
  SolverOptions options;
  options.max_iterations = 8;
  options.function_tolerance = 0;  // every iteration runs
  options.gradient_tolerance = 0;
  options.parameter_tolerance = 0;

  compiler::KernelCache::Options o = testing::memory_only();
  compiler::KernelCache compiled(o);
  o.tiering = Tiering::Tier0Only;
  compiler::KernelCache tier0(o);
  // The tiered cache's compiles wait until the solve has finished its second iteration; at
  // its fourth the solve waits for them, so it runs in tier 0 first and compiled after.
  std::mutex mutex;
  std::condition_variable opened;
  bool open = false;
  o.tiering = Tiering::Tiered;
  o.backend.compile = [&](const ir::Trace& g, const compiler::KernelLayout& l,
                          const compiler::CompileOptions& co, const std::string& symbol) {
    std::unique_lock lock(mutex);
    opened.wait(lock, [&] { return open; });
    lock.unlock();
    return compiler::compile_kernel(g, l, co, symbol);
  };
  compiler::KernelCache tiered(o);
  SolverOptions switching = options;
  switching.callback = [&](const IterationSummary& it) {
    if (it.iteration == 2) {
      std::lock_guard lock(mutex);
      open = true;
      opened.notify_all();
    }
    if (it.iteration == 4) tiered.wait_for_background();
    return true;
  };

  const SolveResult a = p.problem.analyze(testing::analyze_with(compiled)).solve(p.initial, options);
  const SolveResult b = p.problem.analyze(testing::analyze_with(tier0)).solve(p.initial, options);
  AnalyzedProblem analyzed = p.problem.analyze(testing::analyze_with(tiered));
  const SolveResult c = analyzed.solve(p.initial, switching);
  REQUIRE(a.summary.iterations == 8);
  CHECK(bits(a.values) == bits(b.values));
  CHECK(bits(a.values) == bits(c.values));
  CHECK(cost_bits(a.summary) == cost_bits(b.summary));
  CHECK(cost_bits(a.summary) == cost_bits(c.summary));

  // The switch did fall inside the solve: tier 0 answered calls, and the kernels are
  // compiled now; the compiled-only cache never ran tier 0, the tier-0 cache never compiled.
  CHECK(compiled.stats().compiles == 2);
  CHECK(tier0.stats().compiles == 0);
  CHECK(tiered.stats().compiles == 2);
  for (const compiler::CacheEntryInfo& e : tiered.entries()) CHECK(e.source == compiler::KernelSource::Tier0);
  size_t switched = 0;
  for (const compiler::CacheEntryInfo& e : tiered.entries()) {
    const std::shared_ptr<const compiler::Kernel> k = tiered.find(e.key);
    REQUIRE(k);
    CHECK(bool(k->function.load()));
    // (The solve evaluates its trial points with the normal-equation kernel, so the
    // residual kernel may never have been called.)
    if (e.key.part("mode") == "normal_equations") CHECK(k->tier0_calls.load() > 0);
    ++switched;
  }
  CHECK(switched == 2);
}
