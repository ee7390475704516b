// Compile-time benchmark: for every built-in cost, cold trace + differentiate + compile of
// all three kernel modes, and loading the same kernels back from the disk cache in a fresh
// cache. Medians over repeats, each repeat in its own empty cache directory. Prints a
// Markdown table (docs/benchmarks.md). A second table links each cost's normal-equations
// object into the process by the LLVM-free loader and by ORC, side by side; the first
// ORC load of the process (which creates the session) is reported apart.
//
//   lsjit_bench_compile [--repeats N]
// Stage columns are CPU time summed over the modes (from the sequential runs); the two
// "all 3 modes" columns are wall time, sequential and with lookup_modes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "lsjit/common/clock.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/compiler/cache/kernel_loader.h"
#include "lsjit/compiler/llvm/jit.h"
#include "lsjit/runtime/builtin_costs.h"
#include "bench_main.h"
#include "bench_stats.h"

namespace {

using lsjit::bench::median;
using lsjit::Clock;
using lsjit::seconds_since;

struct Sample {
  double trace = 0, compile_all_modes = 0, disk_load_per_kernel = 0;
  lsjit::compiler::StageTimes stages;  // summed over the three modes
};

// parallel: the three modes through KernelCache::lookup_modes (one thread each), else one
// after the other.
Sample measure(const lsjit::BuiltinCost& cost, const std::filesystem::path& dir, bool parallel) {
  namespace c = lsjit::compiler;
  Sample s;
  c::KernelCache::Options options;
  options.directory = dir;
  options.quiet = true;
  {
    c::KernelCache cold(options);
    const auto start = Clock::now();
    const lsjit::ir::Trace traced = cost.trace();
    s.trace = seconds_since(start);
    const std::vector<c::KernelMode> modes(std::begin(c::kAllModes), std::end(c::kAllModes));
    const auto all = parallel ? cold.lookup_modes(traced, modes, {}, s.trace)
                              : std::vector<c::KernelCache::Lookup>{};
    for (c::KernelMode mode : c::kAllModes) {
      const auto r = parallel ? all[static_cast<size_t>(mode)] : cold.lookup(traced, mode, {}, s.trace);
      const c::StageTimes& t = r.kernel->times;
      s.stages.differentiate_s += t.differentiate_s;
      s.stages.simplify_s += t.simplify_s;
      s.stages.llvm_ir_s += t.llvm_ir_s;
      s.stages.optimize_s += t.optimize_s;
      s.stages.codegen_s += t.codegen_s;
      s.stages.link_s += t.link_s;
    }
    s.compile_all_modes = seconds_since(start);
  }
  {
    c::KernelCache warm(options);  // a new cache: nothing in memory, everything on disk
    const lsjit::ir::Trace traced = cost.trace();
    double load = 0;
    for (c::KernelMode mode : c::kAllModes) load += warm.lookup(traced, mode).seconds;
    s.disk_load_per_kernel = load / 3;
  }
  return s;
}

// Median microseconds to load `object` with `load`, over `repeats` loads (each unloaded
// before the next).
template <class Load>
double load_us(const std::string& object, const std::string& symbol, int repeats, Load load) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    auto kernel = load(object, symbol);
    t.push_back(1e6 * seconds_since(start));
  }
  return median(t);
}

void loader_table(int repeats) {
  namespace c = lsjit::compiler;
  std::cout << "\n| cost (normal equations) | object KiB | native load us | ORC load us | "
               "ORC / native |\n| --- | ---: | ---: | ---: | ---: |\n";
  bool first = true;
  for (const lsjit::BuiltinCost& cost : lsjit::builtin_costs()) {
    const lsjit::ir::Trace g = c::graph_for_mode(cost.trace(), c::KernelMode::NormalEquations);
    const c::KernelLayout layout = c::make_layout(g.signature, c::KernelMode::NormalEquations);
    const std::string symbol = "bench_load";
    const std::string object = c::compile_kernel(g, layout, {}, symbol).object_code;
    if (first) {  // the process's first ORC load creates the session
      const auto start = Clock::now();
      c::load_kernel_orc(object, symbol);
      std::printf("First ORC load of the process (creates the session): %.2f ms\n",
                  1e3 * seconds_since(start));
      first = false;
    }
    const double native = load_us(object, symbol, 20 * repeats, c::load_object);
    const double orc = load_us(object, symbol, 20 * repeats, c::load_kernel_orc);
    std::printf("| %s | %.1f | %.1f | %.1f | %.1fx |\n", cost.name.c_str(), object.size() / 1024.0,
                native, orc, orc / native);
  }
}

}  // namespace

static int run_main(int argc, char** argv) {
  int repeats = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeats" && i + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else {
      std::cerr << "usage: lsjit_bench_compile [--repeats N]\n";
      return 2;
    }
  }
  const auto root = std::filesystem::temp_directory_path() /
                    ("lsjit-bench-compile-" + std::to_string(::getpid()));
  std::cout << "| cost | trace ms | differentiate + simplify ms | LLVM IR ms | optimize ms | "
               "codegen ms | link ms | all 3 modes cold ms | all 3 modes cold, concurrent ms | "
               "disk load ms/kernel |\n"
            << "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const lsjit::BuiltinCost& cost : lsjit::builtin_costs()) {
    std::vector<double> trace, diff, llvm_ir, opt, codegen, link, total, total_parallel, load;
    for (int r = 0; r < repeats; ++r) {
      const auto dir = root / (cost.name + "-" + std::to_string(r));
      std::filesystem::remove_all(dir);
      const Sample s = measure(cost, dir, false);
      std::filesystem::remove_all(dir);
      total_parallel.push_back(measure(cost, dir, true).compile_all_modes);
      trace.push_back(s.trace);
      diff.push_back(s.stages.differentiate_s + s.stages.simplify_s);
      llvm_ir.push_back(s.stages.llvm_ir_s);
      opt.push_back(s.stages.optimize_s);
      codegen.push_back(s.stages.codegen_s);
      link.push_back(s.stages.link_s);
      total.push_back(s.compile_all_modes);
      load.push_back(s.disk_load_per_kernel);
      std::filesystem::remove_all(dir);
    }
    char row[512];
    std::snprintf(row, sizeof row,
                  "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %.2f |\n",
                  cost.name.c_str(), 1e3 * median(trace), 1e3 * median(diff),
                  1e3 * median(llvm_ir), 1e3 * median(opt), 1e3 * median(codegen),
                  1e3 * median(link), 1e3 * median(total), 1e3 * median(total_parallel),
                  1e3 * median(load));
    std::cout << row << std::flush;
  }
  std::filesystem::remove_all(root);
  loader_table(repeats);
  return 0;
}

int main(int argc, char** argv) {
  return lsjit::bench::report_errors("lsjit_bench_compile", [&] { return run_main(argc, argv); });
}
