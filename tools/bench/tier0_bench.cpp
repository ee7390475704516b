// Tier 0 benchmark (issue 20): per built-in cost and mode, what tier 0 (compiler/tier0/tier0.h)
// costs against the compiled kernel, one thread, side by side in one run:
//   - set-up: building the Tier0Kernel against LLVM's compile of the same graph (lowering,
//     code generation and loading), both from the mode graph;
//   - evaluation: ns per instance over 4096 instances (random rows and data), medians over
//     repeats; and the break-even: how many instances tier 0 evaluates in the time LLVM
//     takes to compile, which is what a cold solve gains before the switch.
// The two are checked bit for bit before timing.
//
//   lsjit_bench_tier0 [--repeats N]
#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "lsjit/compiler/kernel.h"
#include "lsjit/compiler/llvm/codegen.h"
#include "lsjit/compiler/llvm/jit.h"
#include "lsjit/compiler/tier0/tier0.h"
#include "lsjit/runtime/builtin_costs.h"
#include "bench_main.h"

namespace {

namespace c = lsjit::compiler;
using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median_of(int repeats, const std::function<void()>& f) {
  f();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    f();
    t.push_back(seconds(t0));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Buffers {
  std::vector<std::vector<int32_t>> indices;
  std::vector<std::vector<double>> values;
  std::vector<double> data;
  std::vector<std::vector<double>> outputs;
  std::vector<const int32_t*> index_ptrs;
  std::vector<const double*> value_ptrs;
  std::vector<double*> output_ptrs;
  c::ScatterTables scatter;
  c::KernelArgs args;

  Buffers(const c::KernelLayout& layout, int64_t count, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(-1, 1);
    const int64_t rows = count / 2 + 1;
    std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(rows - 1));
    for (uint32_t s = 0; s < layout.num_vars; ++s) {
      values.emplace_back(rows * layout.ambient[s]);
      for (double& v : values.back()) v = u(rng);
      indices.emplace_back(count);
      for (int32_t& i : indices.back()) i = pick(rng);
    }
    data.resize(count * layout.data_stride + 1);
    for (double& v : data) v = u(rng);
    for (const auto& a : layout.outputs) outputs.emplace_back(count * a.per_instance);
    for (auto& v : indices) index_ptrs.push_back(v.data());
    for (auto& v : values) value_ptrs.push_back(v.data());
    for (auto& v : outputs) output_ptrs.push_back(v.data());
    scatter = c::contiguous_scatter(layout, output_ptrs.data(), count);
    args.begin = 0;
    args.end = count;
    args.indices = index_ptrs.data();
    args.values = value_ptrs.data();
    args.data = data.data();
    args.outputs = output_ptrs.data();
    args.scatter = scatter.pointers.data();
  }
};

}  // namespace

static int run_main(int argc, char** argv) {
  int repeats = 21;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: lsjit_bench_tier0 [--repeats N]\n");
      return 2;
    }
  }
  const int64_t count = 4096;
  std::printf("Tier 0 against the compiled kernel, %lld instances, one thread, width %u, medians of %d\n\n",
              static_cast<long long>(count), c::host_target({}).vector_width, repeats);
  std::printf("| cost | mode | tier 0 set-up ms | LLVM compile ms | compiled ns/inst | tier 0 ns/inst | tier 0 / compiled | instances tier 0 evaluates during the compile | tier 0 steps | scratch KiB |\n");
  std::printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  std::mt19937_64 rng(3);
  for (const lsjit::BuiltinCost& cost : lsjit::builtin_costs()) {
    const lsjit::ir::Trace traced = cost.trace();
    for (c::KernelMode mode : {c::KernelMode::Residual, c::KernelMode::NormalEquations}) {
      const lsjit::ir::Trace g = c::graph_for_mode(traced, mode);
      const c::KernelLayout layout = c::make_layout(g.signature, mode);
      auto t0 = Clock::now();
      const c::Tier0Kernel tier0(g, layout, {});
      const double setup_s = seconds(t0);
      t0 = Clock::now();
      const c::CompiledObject object = c::compile_kernel(g, layout, {}, "bench_kernel");
      const auto kernel = c::load_kernel(object.object_code, "bench_kernel");
      const double compile_s = seconds(t0);

      Buffers compiled(layout, count, rng);
      Buffers interpreted = compiled;  // the same inputs
      interpreted.output_ptrs.clear();
      for (auto& v : interpreted.outputs) interpreted.output_ptrs.push_back(v.data());
      interpreted.scatter = c::contiguous_scatter(layout, interpreted.output_ptrs.data(), count);
      interpreted.index_ptrs.clear();
      interpreted.value_ptrs.clear();
      for (auto& v : interpreted.indices) interpreted.index_ptrs.push_back(v.data());
      for (auto& v : interpreted.values) interpreted.value_ptrs.push_back(v.data());
      interpreted.args.indices = interpreted.index_ptrs.data();
      interpreted.args.values = interpreted.value_ptrs.data();
      interpreted.args.data = interpreted.data.data();
      interpreted.args.outputs = interpreted.output_ptrs.data();
      interpreted.args.scatter = interpreted.scatter.pointers.data();
      kernel->function()(&compiled.args);
      tier0(interpreted.args);
      for (size_t a = 0; a < compiled.outputs.size(); ++a)
        for (size_t k = 0; k < compiled.outputs[a].size(); ++k)
          if (std::bit_cast<uint64_t>(compiled.outputs[a][k]) != std::bit_cast<uint64_t>(interpreted.outputs[a][k]) &&
              !(compiled.outputs[a][k] != compiled.outputs[a][k] && interpreted.outputs[a][k] != interpreted.outputs[a][k])) {
            std::fprintf(stderr, "%s %s: tier 0 differs from the compiled kernel\n", cost.name.c_str(),
                         std::string(c::mode_name(mode)).c_str());
            return 1;
          }
      const double jit_s = median_of(repeats, [&] { kernel->function()(&compiled.args); });
      const double t0_s = median_of(repeats, [&] { tier0(interpreted.args); });
      std::printf("| %s | %s | %.2f | %.1f | %.1f | %.1f | %.1fx | %.0f | %zu | %.0f |\n", cost.name.c_str(),
                  std::string(c::mode_name(mode)).c_str(), setup_s * 1e3, compile_s * 1e3,
                  jit_s / count * 1e9, t0_s / count * 1e9, t0_s / jit_s, compile_s / (t0_s / count),
                  tier0.steps(), tier0.registers() * c::Tier0Kernel::kBlock * 8.0 / 1024);
    }
  }
  return 0;
}

int main(int argc, char** argv) {
  return lsjit::bench::report_errors("lsjit_bench_tier0", [&] { return run_main(argc, argv); });
}
