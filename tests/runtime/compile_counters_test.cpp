// SolveSummary's kernel counters say what a user means by them under every tiering:
// compiles counts the kernels compiled for this problem, in the background or not;
// recompiles the misses of a cost that already had another kernel; tier0_evaluations the
// calls tier 0 answered during the solve. Before, compiles read 0 under the default
// tiering even on a cold cache or a recompile, since those kernels start in tier 0.
#include <doctest/doctest.h>

#include <string>

#include "../support/memory_cache.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/lsjit.h"

namespace compile_counters_test {
using namespace lsjit;
using Tiering = compiler::KernelCache::Options::Tiering;

namespace {

// A cost whose captured gain is a constant of its graph: another gain is another kernel
// under the same name, i.e. a recompile.
Problem scaled_problem(double gain) {
  Problem p;
  p.add(cost("counted_scaled", [gain](const auto& v, ScalarVar x, const auto& t) { return v[x] * gain - t; }),
        ScalarVar::batch({0, 1, 2}), std::vector<double>{1.0, 2.0, 3.0});
  return p;
}

Values scaled_start() {
  Values v;
  for (int64_t id : {0, 1, 2}) v.set(ScalarVar(id), 0.0);
  return v;
}

SolveSummary analyze_and_solve(compiler::KernelCache& cache, double gain) {
  return scaled_problem(gain).analyze(lsjit::testing::analyze_with(cache)).solve(scaled_start()).summary;
}

compiler::KernelCache::Options with_tiering(Tiering tiering) {
  compiler::KernelCache::Options o = lsjit::testing::memory_only();
  o.tiering = tiering;
  return o;
}

}  // namespace

TEST_CASE("compile counters: a cold cache, a hit and a recompile, under each tiering") {
  for (Tiering tiering : {Tiering::Tiered, Tiering::Compiled}) {
    CAPTURE(static_cast<int>(tiering));
    compiler::KernelCache cache(with_tiering(tiering));
    const SolveSummary cold = analyze_and_solve(cache, 2.0);
    REQUIRE(cold.usable());
    CHECK(cold.cache_misses == 2);  // the residual and the normal-equation kernels
    CHECK(cold.compiles == 2);
    CHECK(cold.background_compiles == (tiering == Tiering::Tiered ? 2 : 0));
    CHECK(cold.tier0_kernels == (tiering == Tiering::Tiered ? 2 : 0));
    CHECK(cold.recompiles == 0);
    cache.wait_for_background();  // so that the next solve runs machine code only

    const SolveSummary warm = analyze_and_solve(cache, 2.0);
    CHECK(warm.cache_hits == 2);
    CHECK(warm.compiles == 0);
    CHECK(warm.recompiles == 0);
    CHECK(warm.tier0_evaluations == 0);

    const SolveSummary changed = analyze_and_solve(cache, 3.0);
    CHECK(changed.recompiles == 2);
    CHECK(changed.compiles == 2);
    CHECK(changed.report().find("2 recompiles") != std::string::npos);
    CHECK(changed.json().find("\"recompiles\": 2") != std::string::npos);
    cache.wait_for_background();
  }
}

TEST_CASE("compile counters: tier 0 alone compiles nothing and answers every kernel call") {
  compiler::KernelCache cache(with_tiering(Tiering::Tier0Only));
  const SolveSummary s = analyze_and_solve(cache, 2.0);
  REQUIRE(s.usable());
  CHECK(s.tier0_kernels == 2);
  CHECK(s.compiles == 0);
  CHECK(s.background_compiles == 0);
  // At least one kernel call per evaluation the solve made.
  CHECK(s.tier0_evaluations >= static_cast<uint64_t>(s.normal_evaluations + s.residual_evaluations));
  CHECK(s.json().find("\"tier0_evaluations\": " + std::to_string(s.tier0_evaluations)) != std::string::npos);

  compiler::KernelCache compiled(with_tiering(Tiering::Compiled));
  CHECK(analyze_and_solve(compiled, 2.0).tier0_evaluations == 0);
}

}  // namespace compile_counters_test
