// Tier 0 (compiler/tier0/tier0.h) against compiled kernels, bit for bit: every test graph, mode
// and instance count; every vector width, with and without FMA and libmvec; inputs that
// include NaN, infinities, signed zeros and subnormals.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <random>

#include "../support/kernel_check.h"
#include "../support/multi_slot_functions.h"
#include "../support/run_cli.h"
#include "../support/test_function_sampler.h"
#include "../support/test_functions.h"
#include "lsjit/common/cpu.h"
#include "lsjit/compiler/cache/kernel_cache.h"

using namespace lsjit::testing;
using lsjit::compiler::CompileOptions;
using lsjit::compiler::KernelMode;

TEST_CASE("tier 0 computes the compiled kernel's bits on every test graph, mode and count") {
  std::mt19937_64 rng(2026);
  size_t compared = 0;
  for (const TestFunction& t : test_functions()) {
    CAPTURE(t.name);
    const lsjit::ir::Trace traced = trace_function(t);
    for (KernelMode mode : lsjit::compiler::kAllModes)
      for (int64_t count : {0, 1, 7, 8, 9, 1000})
        compared += check_tier0(traced, mode, count, sampler_for(t), rng);
  }
  CHECK(compared > 100000);
}

TEST_CASE("tier 0 keeps the bits at every width, with and without FMA and libmvec") {
  std::mt19937_64 rng(7);
  for (const TestFunction& t : test_functions()) {
    CAPTURE(t.name);
    const lsjit::ir::Trace traced = trace_function(t);
    for (uint32_t width : {1u, 2u, 4u, 8u, 16u})
      for (bool vector_math : {true, false})
        for (bool fma : {true, false}) {
          CompileOptions o;
          o.vector_width = width;
          o.vector_math = vector_math;
          o.fma_contraction = fma;
          CAPTURE(width);
          CAPTURE(vector_math);
          CAPTURE(fma);
          check_tier0(traced, KernelMode::ResidualJacobian, 37, sampler_for(t), rng, o);
        }
  }
}

TEST_CASE("tier 0 keeps the bits on NaN, infinities, signed zeros and subnormals") {
  std::mt19937_64 rng(8);
  for (const TestFunction& t : test_functions()) {
    CAPTURE(t.name);
    const lsjit::ir::Trace traced = trace_function(t);
    for (KernelMode mode : lsjit::compiler::kAllModes)
      check_tier0(traced, mode, 300, sampler_for(t, 0.3), rng);
  }
}

TEST_CASE("tier 0 keeps the bits on costs with several variable slots") {
  std::mt19937_64 rng(9);
  for (const MultiSlotFunction& f : multi_slot_functions()) {
    CAPTURE(f.name);
    const lsjit::ir::Trace traced = f.trace();
    for (KernelMode mode : lsjit::compiler::kAllModes)
      for (int64_t count : {1, 9, 200}) check_tier0(traced, mode, count, f.sample, rng);
  }
}

TEST_CASE("tier 0's min and max are the compiled kernel's on every pair of special values") {
  // fmin(-0, +0) is +0 in glibc and -0 in LLVM's minnum lowering: tier 0 follows the
  // kernel. Every pair of the values below, as the two variable components.
  lsjit::ir::Trace traced;
  traced.signature.name = "min_max";
  traced.signature.vars.push_back({"x", "Vec2", 2, 2});
  lsjit::ir::GraphBuilder b;
  const auto x = b.input({lsjit::ir::InputKind::Var, 0, 0}), y = b.input({lsjit::ir::InputKind::Var, 0, 1});
  const lsjit::ir::Op ops[] = {lsjit::ir::Op::Min, lsjit::ir::Op::Max};
  for (uint32_t k = 0; k < 2; ++k) {
    b.add_output({lsjit::ir::OutputRole::Residual, 2 * k, 0, 0, b.make(ops[k], x, y)});
    b.add_output({lsjit::ir::OutputRole::Residual, 2 * k + 1, 0, 0, b.make(ops[k], y, x)});
  }
  traced.signature.residual_dim = 4;
  traced.graph = b.finish();
  const double values[] = {0.0, -0.0, 1.0, -1.0, std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN()};
  size_t pair = 0;
  const InstanceSampler all_pairs = [&](std::mt19937_64&) {
    lsjit::ir::InputValues in;
    const size_t n = std::size(values);
    in.vars = {{values[pair % n], values[(pair / n) % n]}};
    ++pair;
    return in;
  };
  for (uint32_t width : {1u, 2u, 4u, 8u}) {
    CompileOptions o;
    o.vector_width = width;
    std::mt19937_64 rng(10);
    pair = 0;
    check_tier0(traced, KernelMode::Residual, 64, all_pairs, rng, o);
  }
}

TEST_CASE("a tier0_only cache builds tier 0 kernels: no compile, no disk, the compiled bits") {
  const TestFunction t = test_functions().front();
  const lsjit::ir::Trace traced = trace_function(t);
  lsjit::compiler::KernelCache::Options o;
  o.use_disk = false;
  o.quiet = true;
  lsjit::compiler::KernelCache compiled(o);
  o.tiering = lsjit::compiler::KernelCache::Options::Tiering::Tier0Only;
  lsjit::compiler::KernelCache tier0(o);
  for (KernelMode mode : lsjit::compiler::kAllModes) {
    const auto l = tier0.lookup(traced, mode);
    CHECK(l.source == lsjit::compiler::KernelSource::Tier0);
    CHECK(!l.kernel->function);
    REQUIRE(l.kernel->tier0 != nullptr);
    CHECK(tier0.lookup(traced, mode).source == lsjit::compiler::KernelSource::Memory);
    const auto c = compiled.lookup(traced, mode);
    CHECK(c.kernel->key == l.kernel->key);  // the same kernel, in another tier
    // Through Kernel::operator(), as the evaluator calls both.
    std::mt19937_64 rng(5);
    const KernelInputs in = make_kernel_inputs(c.kernel->layout, 100, sampler_for(t), rng);
    std::vector<const int32_t*> idx{in.indices[0].data()};
    std::vector<const double*> vals{in.values[0].data()};
    KernelOutputs a = make_outputs(c.kernel->layout, 100, 1.0), b = make_outputs(c.kernel->layout, 100, 2.0);
    lsjit::compiler::KernelArgs args;
    args.end = 100;
    args.indices = idx.data();
    args.values = vals.data();
    args.data = in.data.data();
    args.outputs = a.pointers.data();
    args.scatter = a.scatter.data();
    (*c.kernel)(args);
    args.outputs = b.pointers.data();
    args.scatter = b.scatter.data();
    (*l.kernel)(args);
    CHECK(a.arrays == b.arrays);
  }
  CHECK(tier0.stats().compiles == 0);
  CHECK(tier0.stats().misses == 3);
  CHECK(compiled.stats().compiles == 3);
}

TEST_CASE("CPU levels: kernels for each level this CPU runs agree with the interpreter and tier 0's bits") {
  using lsjit::CpuLevel;
  std::mt19937_64 rng(11);
  size_t levels = 0;
  for (CpuLevel level : {CpuLevel::X86_64, CpuLevel::X86_64_V2, CpuLevel::X86_64_V3, CpuLevel::X86_64_V4}) {
    if (static_cast<int>(level) > lsjit::host_cpu().x86_64_level) continue;
    ++levels;
    CompileOptions o;
    o.cpu_level = level;
    CAPTURE(lsjit::cpu_level_name(level));
    for (const TestFunction& t : test_functions()) {
      CAPTURE(t.name);
      const lsjit::ir::Trace traced = trace_function(t);
      // Against the interpreter with libm's functions (libmvec's SSE2 variants of the lower
      // levels differ from libm by more than check_kernel's 1e-12 on chained functions).
      CompileOptions scalar_math = o;
      scalar_math.vector_math = false;
      check_kernel(traced, KernelMode::ResidualJacobian, 37, sampler_for(t), rng, scalar_math);
      check_tier0(traced, KernelMode::ResidualJacobian, 37, sampler_for(t), rng, o);
      check_tier0(traced, KernelMode::NormalEquations, 9, sampler_for(t, 0.3), rng, o);
    }
  }
  CHECK(levels == lsjit::host_cpu().x86_64_level);
}

TEST_CASE("CPU levels: the key names the level and its width, not this CPU, and a level above it is refused") {
  using lsjit::CpuLevel;
  const lsjit::HostCpu& host = lsjit::host_cpu();
  REQUIRE(host.x86_64_level >= 1);
  const uint32_t widths[] = {0, 2, 2, 4, 8};
  for (int k = 1; k <= 4; ++k) {
    CompileOptions o;
    o.cpu_level = static_cast<CpuLevel>(k);
    const std::string name(lsjit::cpu_level_name(o.cpu_level));
    CAPTURE(name);
    CHECK(lsjit::cpu_level_from_name(name) == o.cpu_level);
    if (k > host.x86_64_level) {
      CHECK_THROWS_WITH_AS(lsjit::compiler::host_target(o), doctest::Contains("which this CPU"), lsjit::Error);
      continue;
    }
    const lsjit::compiler::TargetInfo t = lsjit::compiler::host_target(o);
    CHECK(t.cpu == name);
    CHECK(t.features == name);
    CHECK(t.vector_width == widths[k]);
    const lsjit::ir::Trace traced = trace_function(test_functions().front());
    const lsjit::compiler::CacheKey key = lsjit::compiler::make_cache_key(traced, KernelMode::Residual, o, t);
    CHECK(key.part("options").find("cpu_level=" + name) != std::string_view::npos);
    CHECK(key.part("host_cpuid") == name);
  }
  // Host keys are as they were before levels existed: no cpu_level in the options part.
  const lsjit::compiler::CacheKey host_key = lsjit::compiler::make_cache_key(
      trace_function(test_functions().front()), KernelMode::Residual, {}, lsjit::compiler::host_target({}));
  CHECK(host_key.part("options") == "vector_width=0 fma_contraction=on vector_math=on");
  CHECK(host_key.part("host_cpuid") == host.fingerprint);
  CHECK_FALSE(lsjit::cpu_level_from_name("x86-64-v5"));
}

TEST_CASE("CPU levels: the machine code uses the level's registers and no wider ones") {
  // objdump (binutils, which the compiler that builds lsjit brings) lists the registers the
  // code names: xmm only at x86-64, ymm but no zmm at v3, zmm at v4 (width 8).
  using lsjit::CpuLevel;
  const lsjit::ir::Trace traced = trace_function(test_functions().front());
  const lsjit::ir::Trace graph = lsjit::compiler::graph_for_mode(traced, KernelMode::NormalEquations);
  const lsjit::compiler::KernelLayout layout = lsjit::compiler::make_layout(graph.signature, KernelMode::NormalEquations);
  const std::string object = std::string(LSJIT_TEST_TMP_DIR) + "/level_" + std::to_string(::getpid()) + ".o";
  for (CpuLevel level : {CpuLevel::X86_64, CpuLevel::X86_64_V3, CpuLevel::X86_64_V4}) {
    if (static_cast<int>(level) > lsjit::host_cpu().x86_64_level) continue;
    CompileOptions o;
    o.cpu_level = level;
    CAPTURE(lsjit::cpu_level_name(level));
    const std::string code = lsjit::compiler::compile_kernel(graph, layout, o, "level_kernel").object_code;
    { std::ofstream(object, std::ios::binary) << code; }
    const CliRun d = run_shell("objdump -d --no-show-raw-insn " + object);
    REQUIRE(d.exit_code == 0);
    CHECK(d.out.find("%xmm") != std::string::npos);
    CHECK((d.out.find("%ymm") != std::string::npos) == (level >= CpuLevel::X86_64_V3));
    CHECK((d.out.find("%zmm") != std::string::npos) == (level == CpuLevel::X86_64_V4));
    CHECK((d.out.find("vfmadd") != std::string::npos || d.out.find("vfmsub") != std::string::npos ||
           d.out.find("vfnmadd") != std::string::npos) == (level >= CpuLevel::X86_64_V3));
  }
  std::remove(object.c_str());
}
