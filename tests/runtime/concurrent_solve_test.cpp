// solve() is const and documented safe to call concurrently on one AnalyzedProblem (each
// call has its own workspace; linear solvers come from a locked pool). These tests run it
// so from raw threads, with evaluation threads inside each solve as well, and require every
// result to be bit-identical to a solve run alone. They are the tests the ThreadSanitizer
// preset (docs/testing.md) runs, where a data race fails them even when the numbers agree.
#include <doctest/doctest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/lsjit.h"
#include "lsjit/runtime/io/synthetic.h"
#include "lsjit/runtime/pose_graph_problem.h"

using namespace lsjit;

namespace {

bool same_bits(const Values& a, const Values& b) {
  bool same = a.size() == b.size();
  a.for_each([&](const VariableType& t, int64_t id, const double* p) {
    const double* q = b.params(t.name, id);
    same = same && q && std::memcmp(p, q, sizeof(double) * t.ambient) == 0;
  });
  return same;
}

}  // namespace

TEST_CASE("concurrent solve: threads solving one AnalyzedProblem get the results of solving alone") {
  compiler::KernelCache::Options cache_options;
  cache_options.use_disk = false;
  cache_options.quiet = true;
  compiler::KernelCache cache(cache_options);
  io::PoseGraphSpec spec;
  spec.dimension = 3;
  spec.poses = 60;
  spec.loop_closures = 15;
  spec.seed = 11;
  const io::GeneratedPoseGraph generated = io::generate_pose_graph(spec);
  PoseGraphProblem p = make_pose_graph_problem(generated.graph);
  AnalyzeOptions analyze_options;
  analyze_options.cache = &cache;
  const AnalyzedProblem analyzed = p.problem.analyze(analyze_options);

  const LinearSolver solvers[] = {LinearSolver::SparseCholesky, LinearSolver::DenseCholesky,
                                  LinearSolver::ConjugateGradient, LinearSolver::SparseCholesky};
  std::vector<SolveResult> alone;
  for (LinearSolver s : solvers) {
    SolverOptions o;
    o.linear_solver = s;
    o.num_threads = 2;  // evaluation threads inside each solve too
    alone.push_back(analyzed.solve(p.initial, o));
    REQUIRE(alone.back().summary.usable());
  }
  std::vector<SolveResult> together(std::size(solvers));
  std::vector<std::thread> threads;
  for (size_t k = 0; k < std::size(solvers); ++k)
    threads.emplace_back([&, k] {
      SolverOptions o;
      o.linear_solver = solvers[k];
      o.num_threads = 2;
      together[k] = analyzed.solve(p.initial, o);
    });
  for (std::thread& t : threads) t.join();
  for (size_t k = 0; k < std::size(solvers); ++k) {
    CAPTURE(k);
    CHECK(together[k].summary.final_cost == alone[k].summary.final_cost);
    CHECK(together[k].summary.iterations == alone[k].summary.iterations);
    CHECK(same_bits(together[k].values, alone[k].values));
  }
}
