// State-size benchmark (issue 44): what a VecVar<N> state costs as N grows to
// kMaxVecVarSize, one thread, in one run: the compile of a process-model cost between two
// N-states (x_{k+1} = x_k + 0.1 scale ∘ sin(shift(x_k))), and per instance, inside
// Levenberg-Marquardt solves, the residual evaluation (SolveSummary::residual_s per
// residual evaluation) and the normal-equation evaluation (Jᵀr and the two slots' JᵀJ
// blocks, assembled and scaled: jacobian_s per normal evaluation). Medians over repeats.
//
// A normal-equation instance writes (2N)(2N+1)/2 Hessian entries; the ns per entry column
// shows whether the kernels stay as efficient as the state grows (the quadratic part
// dominates above N ≈ 10).
//
//   lsjit_bench_state_sizes [--repeats N] [--instances M]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <string>
#include <vector>

#include "bench_main.h"
#include "bench_stats.h"
#include "lsjit/common/clock.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/lsjit.h"

namespace {

using lsjit::Clock;
using lsjit::seconds_since;

struct Row {
  int n = 0;
  double compile_s = 0, residual_ns = 0, normal_ns = 0;
};

template <int N>
Row measure(int instances, int repeats) {
  using State = lsjit::VecVar<N>;
  using Vec = Eigen::Matrix<double, N, 1>;
  auto step = lsjit::cost("bench_state_step", [](const auto& v, State a, State b, const auto& scale) {
    using std::sin;
    const auto x = v[a];
    Eigen::Matrix<lsjit::Sym, N, 1> next;
    for (int i = 0; i < N; ++i) next(i) = x(i) + 0.1 * scale(i) * sin(x((i + 1) % N));
    return (v[b] - next).eval();
  });
  lsjit::Problem p;
  lsjit::Values values;
  Vec scale;
  for (int i = 0; i < N; ++i) scale(i) = 1.0 + 0.05 * i;
  std::vector<int64_t> from(instances), to(instances);
  for (int k = 0; k < instances; ++k) from[k] = k, to[k] = k + 1;
  p.add(step, State::batch(from), State::batch(to), std::vector<Vec>(instances, scale));
  for (int k = 0; k <= instances; ++k) values.set(State(k), Vec::Constant(0.01 * (k % 17)));

  lsjit::compiler::KernelCache::Options o;  // compiled in this process, waited for
  o.use_disk = false;
  o.quiet = true;
  lsjit::compiler::KernelCache cache(o);
  lsjit::AnalyzeOptions a;
  a.cache = &cache;
  const auto start = Clock::now();
  const lsjit::AnalyzedProblem analyzed = p.analyze(a);
  Row row;
  row.n = N;
  row.compile_s = seconds_since(start);
  lsjit::SolverOptions s;  // a fixed number of iterations, whatever the progress
  s.max_iterations = 5;
  s.function_tolerance = s.gradient_tolerance = s.parameter_tolerance = 0;
  s.speculative_evaluation = false;  // trial points as residual evaluations, timed apart
  std::vector<double> residual, normal;
  for (int r = 0; r <= repeats; ++r) {  // the first is a warm-up
    const lsjit::SolveSummary summary = analyzed.solve(values, s).summary;
    if (r == 0) continue;
    residual.push_back(summary.residual_s / std::max(1, summary.residual_evaluations));
    normal.push_back(summary.jacobian_s / std::max(1, summary.normal_evaluations));
  }
  row.residual_ns = 1e9 * lsjit::bench::median(residual) / instances;
  row.normal_ns = 1e9 * lsjit::bench::median(normal) / instances;
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  return lsjit::bench::report_errors("lsjit_bench_state_sizes", [&] {
    int repeats = 7, instances = 2000;
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string flag = argv[i];
      if (flag == "--repeats") repeats = std::stoi(argv[i + 1]);
      else if (flag == "--instances") instances = std::stoi(argv[i + 1]);
      else throw std::runtime_error("unknown flag " + flag + ": expected --repeats N or --instances M");
    }
    std::printf("# %d instances of a process-model cost between two VecVar<N>, one thread, median of %d\n",
                instances, repeats);
    std::printf("| N | analyze (trace + compile) ms | residual ns/instance | normal equations ns/instance | "
                "ns per JᵀJ entry |\n| ---: | ---: | ---: | ---: | ---: |\n");
    for (const Row& r : {measure<3>(instances, repeats), measure<6>(instances, repeats), measure<9>(instances, repeats),
                         measure<12>(instances, repeats), measure<15>(instances, repeats),
                         measure<24>(instances, repeats), measure<32>(instances, repeats)}) {
      const double entries = (2.0 * r.n) * (2.0 * r.n + 1) / 2;
      std::printf("| %d | %.0f | %.0f | %.0f | %.2f |\n", r.n, 1e3 * r.compile_s, r.residual_ns, r.normal_ns,
                  r.normal_ns / entries);
    }
    return 0;
  });
}
