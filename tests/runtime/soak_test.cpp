// Soak: many analyze/solve cycles in one process. What a long-running program (a SLAM
// back end re-solving every frame, a server fitting one curve per request) does to the
// library: memory must stay flat, and a structure must compile once however often its
// sizes, IDs and data change. With a structure that changes every cycle (a captured
// constant), the kernels must be released once nobody holds them and the cache forgets
// them (clear_memory), or the JIT's code memory would grow without bound.
//
// These tests carry the ctest label "soak" (tests/CMakeLists.txt), so that slow
// configurations (sanitizers) can leave them out with `ctest -LE soak`.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <vector>

#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/lsjit.h"

using namespace lsjit;

namespace {

using Clock = std::chrono::steady_clock;

// Resident set size in bytes (/proc/self/statm: size resident shared ... in pages).
int64_t rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

std::unique_ptr<compiler::KernelCache> memory_cache() {
  compiler::KernelCache::Options o;
  o.use_disk = false;
  o.quiet = true;
  return std::make_unique<compiler::KernelCache>(o);
}

// One closure type per cost, at namespace scope: every cycle's add() joins the same group
// and the same kernels.
const auto line = cost("soak_line", [](const auto& v, ScalarVar a, ScalarVar b, const auto& x, const auto& y) {
  return y - (v[a] * x + v[b]);
});
const auto between = standard_costs::se2_between_cost();

// A line through n exact samples of y = a x + b, under IDs that move with the cycle.
// Returns whether the fit found a and b.
bool fit_line(compiler::KernelCache& cache, int cycle, int n) {
  const double a = 0.5 + 0.01 * (cycle % 100), b = -1.0 + 0.003 * (cycle % 1000);
  std::vector<double> xs, ys;
  for (int i = 0; i < n; ++i) {
    xs.push_back(0.25 * i - 1.0);
    ys.push_back(a * xs.back() + b);
  }
  const ScalarVar va(2 * int64_t{cycle}), vb(2 * int64_t{cycle} + 1);
  Problem p;
  p.add(line, va, vb, xs, ys);
  Values initial;
  initial.set(va, 0.0);
  initial.set(vb, 0.0);
  AnalyzeOptions ao;
  ao.cache = &cache;
  const SolveResult r = p.analyze(ao).solve(initial);
  // Default tolerances stop within ~1e-8 of the exact fit; a kernel that mixed up
  // instances, IDs or data would be off by far more.
  return converged(r.summary.termination) && std::abs(r.values.get(va) - a) < 1e-6 &&
         std::abs(r.values.get(vb) - b) < 1e-6 && r.summary.compiles <= 2;
}

// An SE2 chain of m poses with one loop closure, exact measurements, pose 0 held; starts
// from the truth perturbed (initial cost ~5e-3). Returns whether it converged to cost ~0
// (default tolerances end near 1e-16).
bool solve_pose_chain(compiler::KernelCache& cache, int cycle, int m) {
  std::vector<SE2d> truth;
  for (int i = 0; i < m; ++i)
    truth.push_back(SE2d::from_xy_theta(std::cos(0.7 * i) * i, std::sin(0.5 * i), 0.3 * i + 0.001 * cycle));
  const Eigen::Matrix3d U = Eigen::Matrix3d::Identity();
  std::vector<int64_t> from, to;
  std::vector<SE2d> zs;
  for (int i = 0; i + 1 < m; ++i) {
    from.push_back(i);
    to.push_back(i + 1);
  }
  if (m > 2) {
    from.push_back(0);
    to.push_back(m - 1);
  }
  for (size_t e = 0; e < from.size(); ++e) zs.push_back(truth[from[e]].inverse() * truth[to[e]]);
  Problem p;
  p.add(between, SE2Var::batch(from), SE2Var::batch(to), zs, U);
  p.set_constant(SE2Var(0));
  Values initial;
  for (int i = 0; i < m; ++i) {
    Eigen::Vector3d xi(0.05 * std::sin(i + cycle), 0.05 * std::cos(i), 0.02 * std::sin(3 * i));
    initial.set(SE2Var(i), i == 0 ? truth[0] : truth[i] * SE2d::exp(xi));
  }
  AnalyzeOptions ao;
  ao.cache = &cache;
  const SolveResult r = p.analyze(ao).solve(initial);
  return converged(r.summary.termination) && r.summary.final_cost < 1e-12 && r.summary.compiles <= 2;
}

}  // namespace

TEST_CASE("soak: 10000 analyze-solve cycles of changing sizes compile once per structure and keep "
          "memory flat") {
  constexpr int kCycles = 10000, kWarmup = 1000, kEvery = 1000;
  auto cache = memory_cache();
  const auto start = Clock::now();
  int failures = 0;
  int64_t rss_warm = 0, rss_max = 0;
  std::vector<int64_t> samples;
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    // Sizes change every cycle: 2..20 samples, 2..10 poses.
    const bool ok = cycle % 2 == 0 ? fit_line(*cache, cycle, 2 + (cycle * 7) % 19)
                                   : solve_pose_chain(*cache, cycle, 2 + (cycle * 5) % 9);
    if (!ok && ++failures <= 5) MESSAGE("cycle " << cycle << " did not solve right");
    if (cycle + 1 == kWarmup) rss_warm = rss_max = rss_bytes();
    if (cycle + 1 > kWarmup && (cycle + 1) % kEvery == 0) {
      samples.push_back(rss_bytes());
      rss_max = std::max(rss_max, samples.back());
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const compiler::CacheStats s = cache->stats();
  std::string trace;
  for (int64_t r : samples) trace += " " + std::to_string(mib(r)).substr(0, 6);
  MESSAGE(kCycles << " cycles in " << seconds << " s (" << 1e6 * seconds / kCycles
                  << " us per analyze + solve); RSS after warm-up " << mib(rss_warm)
                  << " MiB, then every " << kEvery << " cycles:" << trace << " MiB; "
                  << s.compiles << " compiles, " << s.memory_hits << " memory hits");
  CHECK(failures == 0);
  // Two structures (the line, the SE2 between), two kernels each (residual, normal
  // equations): four compiles in all, every other get a memory hit.
  CHECK(s.compiles == 4);
  CHECK(s.recompiles == 0);
  CHECK(s.entries == 4);
  CHECK(s.memory_hits == s.gets - 4);
  // Flat memory. Each cycle allocates and frees its problem, traced graphs, layout,
  // solver and workspaces; the allocator keeps some of that around, so RSS settles during
  // warm-up and may wander by allocator noise after it (observed: by at most one page).
  // 2 MiB over 9000 cycles is 233 bytes a cycle: a leak of any per-cycle object (a
  // traced graph, a layout, a linear solver, a cache key) is larger and fails this.
  CHECK(rss_max - rss_warm < 2 * 1024 * 1024);
}

namespace {

// A cost whose captured scale is baked into its kernels: a new structure per scale.
std::shared_ptr<const compiler::LoadedKernel> solve_scaled(compiler::KernelCache& cache, double scale,
                                                           bool& ok) {
  const auto scaled = cost("soak_scaled", [scale](const auto& v, ScalarVar x, const auto& y) {
    return scale * (v[x] - y);
  });
  Problem p;
  p.add(scaled, ScalarVar(0), std::vector<double>{1.0, 2.0, 3.0});
  Values initial;
  initial.set(ScalarVar(0), 0.0);
  AnalyzeOptions ao;
  ao.cache = &cache;
  const AnalyzedProblem a = p.analyze(ao);
  const SolveResult r = a.solve(initial);
  ok = converged(r.summary.termination) && std::abs(r.values.get(ScalarVar(0)) - 2.0) < 1e-6 &&
       r.summary.compiles == 2;
  // The same kernel the analyzed problem uses (a memory hit), to watch it being released.
  return cache.get(trace(scaled, ScalarVar(0), 1.0), compiler::KernelMode::NormalEquations)->code;
}

}  // namespace

TEST_CASE("soak: kernels of a structure that changes every cycle are released by clear_memory") {
  auto cache = memory_cache();
  int failures = 0, scale_index = 0;
  auto next_scale = [&] { return 1.0 + 1e-3 * ++scale_index; };

  // Warm-up: the JIT session, the allocator, LLVM's one-time tables.
  constexpr int kWarmup = 10;
  for (int i = 0; i < kWarmup; ++i) {
    bool ok = false;
    solve_scaled(*cache, next_scale(), ok);
    failures += !ok;
  }
  cache->clear_memory();
  const int64_t rss_base = rss_bytes();

  // Calibration: what a structure costs while it is held (cache entry, kernels, code).
  // Without it a bound on growth would be a guess; with it the test knows how much a
  // leak of every kernel would show.
  constexpr int kHeld = 60;
  std::vector<std::shared_ptr<const compiler::LoadedKernel>> held;
  for (int i = 0; i < kHeld; ++i) {
    bool ok = false;
    held.push_back(solve_scaled(*cache, next_scale(), ok));
    failures += !ok;
  }
  const int64_t rss_held = rss_bytes();
  const double per_structure = static_cast<double>(rss_held - rss_base) / kHeld;
  std::vector<std::weak_ptr<const compiler::LoadedKernel>> watched(held.begin(), held.end());
  held.clear();
  cache->clear_memory();
  int still_loaded = 0;
  for (const auto& w : watched) still_loaded += !w.expired();
  CHECK(still_loaded == 0);  // dropping the last handle unloads the code

  // The run: a new structure every cycle, the cache cleared every kClearEvery cycles, RSS
  // sampled after each clear. If released kernels were not freed, RSS would grow by
  // per_structure a cycle.
  constexpr int kCycles = 240, kClearEvery = 20;
  std::vector<int64_t> rss;
  for (int cycle = 0; cycle < kCycles; ++cycle) {
    bool ok = false;
    solve_scaled(*cache, next_scale(), ok);
    failures += !ok;
    if ((cycle + 1) % kClearEvery == 0) {
      cache->clear_memory();
      rss.push_back(rss_bytes());
    }
  }
  const compiler::CacheStats s = cache->stats();
  std::string trace;
  for (int64_t r : rss) trace += " " + std::to_string(mib(r)).substr(0, 6);
  MESSAGE("RSS " << mib(rss_base) << " MiB after warm-up, " << mib(rss_held) << " MiB holding "
                 << kHeld << " structures (" << per_structure / 1024 << " KiB each); then, every "
                 << kClearEvery << " new structures and a clear_memory:" << trace << " MiB; "
                 << s.compiles << " compiles");
  CHECK(failures == 0);
  CHECK(s.compiles == 2u * (kWarmup + kHeld + kCycles));
  CHECK(s.entries == 0);
  // The calibration must see something, or the bounds below would be vacuous.
  REQUIRE(per_structure > 4096);
  // Released: from the first sample to the last, kCycles - kClearEvery structures came
  // and went; kept, they would add that many times per_structure. Allow half of it for
  // allocator noise: a structure costs about 13 KiB here, so all_kept is under 3 MiB, and
  // a clean run has been seen to step up by one 1 MiB chunk once and stay there (CI, a
  // quarter then failed a run without any leak); keeping every kernel still fails.
  const double all_kept = (kCycles - kClearEvery) * per_structure;
  CHECK(static_cast<double>(rss.back() - rss.front()) < all_kept / 2);
  // And the run never needs more than the calibration did while holding kHeld structures
  // (at most kClearEvery are held at once here; the allocator reuses what was freed).
  const int64_t rss_max = *std::max_element(rss.begin(), rss.end());
  CHECK(static_cast<double>(rss_max - rss_held) < kHeld * per_structure);
}
