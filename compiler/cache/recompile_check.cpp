#include "lsjit/compiler/cache/recompile_check.h"

#include <chrono>
#include <cstring>
#include <random>
#include <sstream>
#include <vector>

#include "lsjit/common/error.h"
#include "lsjit/compiler/cache/cache_key.h"
#include "lsjit/compiler/llvm/codegen.h"
#include "lsjit/compiler/llvm/jit.h"
#include "lsjit/ir/parser.h"

namespace lsjit::compiler {
namespace {

[[noreturn]] void fail(const DiskEntry& entry, const std::string& why) {
  throw Error("cache entry " + entry.key.id() + ": " + why);
}

std::string required_part(const DiskEntry& entry, std::string_view name) {
  const std::string_view v = entry.key.part(name);
  if (v.empty()) fail(entry, "its key has no '" + std::string(name) + "' part");
  return std::string(v);
}

// The inverse of the "options" key part written by make_cache_key.
CompileOptions parse_options(const DiskEntry& entry) {
  const std::string text = required_part(entry, "options");
  CompileOptions o;
  bool width = false, fma = false, math = false;
  std::istringstream in(text);
  for (std::string item; in >> item;) {
    const size_t eq = item.find('=');
    const std::string name = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    auto on_off = [&](bool& field, bool& seen) {
      if (value != "on" && value != "off") fail(entry, "options part '" + text + "': " + name + " is not on or off");
      field = value == "on";
      seen = true;
    };
    if (name == "vector_width") {
      try {
        o.vector_width = static_cast<uint32_t>(std::stoul(value));
      } catch (const std::exception&) {
        fail(entry, "options part '" + text + "': vector_width is not a number");
      }
      width = true;
    } else if (name == "fma_contraction") {
      on_off(o.fma_contraction, fma);
    } else if (name == "vector_math") {
      on_off(o.vector_math, math);
    } else if (name == "cpu_level") {
      const std::optional<CpuLevel> level = cpu_level_from_name(value);
      if (!level || *level == CpuLevel::Host) fail(entry, "options part '" + text + "': cpu_level '" + value + "' is not a level");
      o.cpu_level = *level;
    } else {
      fail(entry, "options part '" + text + "' has an unknown option '" + name + "'");
    }
  }
  if (!width || !fma || !math) fail(entry, "options part '" + text + "' is incomplete");
  return o;
}

// Why this process cannot reproduce the entry's code, or empty if it can.
std::string why_not_reproducible(const DiskEntry& entry, const CompileOptions& options) {
  TargetInfo t;
  try {
    t = host_target(options);
  } catch (const Error& e) {  // a CpuLevel this CPU cannot run
    return e.what();
  }
  const std::pair<const char*, std::string> here[] = {
      {"triple", t.triple},
      {"host_cpu", t.cpu},
      {"host_cpuid", t.features},
      {"vector_width", std::to_string(t.vector_width)},
      {"llvm_version", t.llvm_version},
      {"ir_version", std::to_string(kCacheIrVersion)}};
  for (const auto& [name, value] : here) {
    const std::string stored = required_part(entry, name);
    if (stored != value)
      return std::string("compiled for ") + name + " " + stored + ", this process has " + value;
  }
  return "";
}

// Inputs for `instances` instances of `layout`, and two sets of output arrays.
struct Inputs {
  std::vector<std::vector<int32_t>> indices;
  std::vector<std::vector<double>> values;
  std::vector<double> data;
  std::vector<const int32_t*> index_ptrs;
  std::vector<const double*> value_ptrs;
};

Inputs random_inputs(const KernelLayout& layout, int64_t instances, uint64_t seed) {
  std::mt19937_64 rng(seed);
  // Uniform in [-1, 1] from the top 53 bits: the same doubles on every standard library.
  auto uniform = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-52 - 1.0; };
  Inputs in;
  const int64_t rows = instances / 2 + 1;  // fewer rows than instances: indices repeat
  for (uint32_t s = 0; s < layout.num_vars; ++s) {
    std::vector<int32_t> idx(static_cast<size_t>(instances));
    for (auto& i : idx) i = static_cast<int32_t>(rng() % static_cast<uint64_t>(rows));
    std::vector<double> vals(static_cast<size_t>(rows) * layout.ambient[s]);
    for (auto& v : vals) v = uniform();
    in.indices.push_back(std::move(idx));
    in.values.push_back(std::move(vals));
  }
  in.data.resize(static_cast<size_t>(instances) * layout.data_stride + 1);
  for (auto& d : in.data) d = uniform();
  for (const auto& i : in.indices) in.index_ptrs.push_back(i.data());
  for (const auto& v : in.values) in.value_ptrs.push_back(v.data());
  return in;
}

std::vector<std::vector<double>> run(const LoadedKernel& kernel, const KernelLayout& layout,
                                     const Inputs& in, int64_t instances) {
  std::vector<std::vector<double>> out;
  std::vector<double*> ptrs;
  for (const OutputArray& a : layout.outputs) {
    // A fill the kernel must overwrite: a slot it skips would compare equal otherwise.
    out.emplace_back(static_cast<size_t>(instances) * a.per_instance, 12345.678);
  }
  for (auto& o : out) ptrs.push_back(o.data());
  const ScatterTables scatter = contiguous_scatter(layout, ptrs.data(), instances);
  KernelArgs args;
  args.begin = 0;
  args.end = instances;
  args.indices = in.index_ptrs.data();
  args.values = in.value_ptrs.data();
  args.data = in.data.data();
  args.outputs = ptrs.data();
  args.scatter = scatter.pointers.data();
  kernel.function()(&args);
  return out;
}

}  // namespace

RecompileCheck recompile_check(const DiskEntry& entry, int64_t instances, uint64_t seed) {
  RecompileCheck check;
  const CompileOptions options = parse_options(entry);
  const std::optional<KernelMode> mode = mode_from_name(required_part(entry, "mode"));
  if (!mode) fail(entry, "its mode part '" + required_part(entry, "mode") + "' is not a kernel mode");
  if (std::string why = why_not_reproducible(entry, options); !why.empty()) {
    check.outcome = RecompileCheck::Outcome::Skipped;
    check.detail = std::move(why);
    return check;
  }
  const ir::Trace graph = ir::parse(entry.ir_text, entry.key.id() + ".ir");
  const KernelLayout layout = make_layout(graph.signature, *mode);

  const auto start = std::chrono::steady_clock::now();
  const CompiledObject fresh = compile_kernel(graph, layout, options, entry.symbol);
  check.compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  check.same_object = fresh.object_code == entry.object_code;

  const auto stored_kernel = load_kernel(entry.object_code, entry.symbol);
  const auto fresh_kernel = load_kernel(fresh.object_code, fresh.symbol);
  const Inputs in = random_inputs(layout, instances, seed);
  const auto stored_out = run(*stored_kernel, layout, in, instances);
  const auto fresh_out = run(*fresh_kernel, layout, in, instances);

  std::string first;
  for (size_t a = 0; a < stored_out.size(); ++a) {
    for (size_t k = 0; k < stored_out[a].size(); ++k) {
      ++check.outputs_compared;
      if (std::memcmp(&stored_out[a][k], &fresh_out[a][k], sizeof(double)) == 0) continue;
      if (check.outputs_different++ == 0) {
        const uint32_t per = layout.outputs[a].per_instance;
        first = layout.outputs[a].name + " of instance " + std::to_string(k / per) + ", component " +
                std::to_string(k % per) + ": stored " + format_double(stored_out[a][k]) +
                ", recompiled " + format_double(fresh_out[a][k]);
      }
    }
  }
  if (check.outputs_different) {
    check.outcome = RecompileCheck::Outcome::Different;
    check.detail = std::to_string(check.outputs_different) + " of " +
                   std::to_string(check.outputs_compared) + " outputs differ; first: " + first;
  }
  return check;
}

}  // namespace lsjit::compiler
