// Differential check of a compiled kernel against the reference interpreter, through the
// kernel ABI: random variable values and data, index arrays that are shuffled and repeat
// variables, instance ranges that start past 0 and are split in pieces, every mode.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "lsjit/compiler/kernel.h"
#include "lsjit/compiler/llvm/codegen.h"
#include "lsjit/compiler/llvm/jit.h"
#include "lsjit/compiler/tier0/tier0.h"
#include "lsjit/ir/interpreter.h"

namespace lsjit::testing {

// One instance's inputs, valid for the cost (its domain, unit quaternions, ...).
using InstanceSampler = std::function<ir::InputValues(std::mt19937_64&)>;

struct KernelInputs {
  std::vector<std::vector<int32_t>> indices;  // [slot][instance]
  std::vector<std::vector<double>> values;    // [slot][row * ambient + c]
  std::vector<double> data;                   // [instance * stride + ...]
};

// `count` instances over `count / 2 + 3` variables per slot, so rows repeat, in shuffled
// order.
inline KernelInputs make_kernel_inputs(const compiler::KernelLayout& layout, int64_t count,
                                       const InstanceSampler& sample, std::mt19937_64& rng) {
  KernelInputs in;
  const int64_t rows = count / 2 + 3;
  in.indices.resize(layout.num_vars);
  in.values.resize(layout.num_vars);
  std::vector<ir::InputValues> row_samples;
  for (int64_t r = 0; r < rows; ++r) row_samples.push_back(sample(rng));
  for (uint32_t s = 0; s < layout.num_vars; ++s) {
    for (int64_t r = 0; r < rows; ++r) {
      const auto& v = row_samples[r].vars.at(s);
      in.values[s].insert(in.values[s].end(), v.begin(), v.end());
    }
    std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(rows - 1));
    for (int64_t i = 0; i < count; ++i) in.indices[s].push_back(pick(rng));
    std::shuffle(in.indices[s].begin(), in.indices[s].end(), rng);
  }
  in.data.resize(static_cast<size_t>(count) * layout.data_stride);
  for (int64_t i = 0; i < count; ++i) {
    const ir::InputValues one = sample(rng);
    for (size_t d = 0; d < one.data.size(); ++d)
      std::copy(one.data[d].begin(), one.data[d].end(),
                in.data.begin() + i * layout.data_stride + layout.data_offset[d]);
  }
  return in;
}

struct KernelOutputs {
  std::vector<std::vector<double>> arrays;
  std::vector<double*> pointers;                 // KernelArgs::outputs
  std::vector<std::vector<double*>> tables;      // per scattered array: block pointers
  std::vector<double* const*> scatter;           // KernelArgs::scatter
};

// Filled with `sentinel`, different for the JIT's and the reference's outputs, so a value
// that either side fails to write shows up as a mismatch. A scattered array's blocks are
// placed in reverse instance order (instance i at block count − 1 − i), so that a kernel
// that wrote them contiguously instead of through KernelArgs::scatter would not match
// the reference.
inline KernelOutputs make_outputs(const compiler::KernelLayout& layout, int64_t count,
                                  double sentinel) {
  KernelOutputs out;
  for (const auto& a : layout.outputs)
    out.arrays.emplace_back(static_cast<size_t>(count) * a.per_instance, sentinel);
  for (auto& a : out.arrays) out.pointers.push_back(a.data());
  out.tables.resize(layout.outputs.size());
  for (size_t k = 0; k < layout.outputs.size(); ++k) {
    if (layout.outputs[k].scattered)
      for (int64_t i = 0; i < count; ++i)
        out.tables[k].push_back(out.arrays[k].data() + (count - 1 - i) * layout.outputs[k].per_instance);
    out.scatter.push_back(out.tables[k].empty() ? nullptr : out.tables[k].data());
  }
  return out;
}

// Normwise relative: `scale` is the largest finite magnitude in the instance's block of
// that output array. An entry that is a sum of products with cancellation (JᵀJ, U·e) may
// differ from the interpreter by rounding of its terms (FMA contraction, libmvec), which is
// small relative to the block, not to the entry.
inline bool close_enough(double jit, double ref, double scale) {
  if (std::isnan(ref)) return std::isnan(jit);
  if (std::isinf(ref)) return jit == ref;
  return std::abs(jit - ref) <= 1e-12 * std::max({1.0, std::abs(ref), scale});
}

// `traced` in `mode`: its mode graph, layout and compiled kernel, and `count` instances of
// inputs (make_kernel_inputs) with the pointers a KernelArgs takes. The pointers point
// into `in`, whose buffers stay put when a KernelCase is moved.
struct KernelCase {
  ir::Trace graph;
  compiler::KernelLayout layout;
  std::shared_ptr<compiler::LoadedKernel> kernel;
  KernelInputs in;
  std::vector<const int32_t*> indices;
  std::vector<const double*> values;

  // The arguments for instances [begin, end), written into `out`.
  compiler::KernelArgs args(KernelOutputs& out, int64_t begin, int64_t end) const {
    compiler::KernelArgs a;
    a.begin = begin;
    a.end = end;
    a.indices = indices.data();
    a.values = values.data();
    a.data = in.data.empty() ? nullptr : in.data.data();
    a.outputs = out.pointers.data();
    a.scatter = out.scatter.data();
    return a;
  }
};

inline KernelCase make_case(const ir::Trace& traced, compiler::KernelMode mode, int64_t count,
                            const InstanceSampler& sample, std::mt19937_64& rng,
                            const compiler::CompileOptions& options, const std::string& prefix) {
  KernelCase c;
  c.graph = compiler::graph_for_mode(traced, mode);
  c.layout = compiler::make_layout(c.graph.signature, mode);
  const std::string symbol = prefix + traced.signature.name + "_" + std::string(compiler::mode_name(mode));
  c.kernel = compiler::load_kernel(compiler::compile_kernel(c.graph, c.layout, options, symbol).object_code, symbol);
  c.in = make_kernel_inputs(c.layout, count, sample, rng);
  for (uint32_t s = 0; s < c.layout.num_vars; ++s) {
    c.indices.push_back(c.in.indices[s].data());
    c.values.push_back(c.in.values[s].data());
  }
  return c;
}

// Compiles `traced` in `mode`, runs it over `count` instances (in two pieces) and compares
// every output against run_reference. Returns the number of values compared.
inline size_t check_kernel(const ir::Trace& traced, compiler::KernelMode mode, int64_t count,
                           const InstanceSampler& sample, std::mt19937_64& rng,
                           const compiler::CompileOptions& options = {}) {
  const KernelCase c = make_case(traced, mode, count, sample, rng, options, "test_");
  const compiler::KernelLayout& layout = c.layout;
  KernelOutputs jit = make_outputs(layout, count, -12345.0), ref = make_outputs(layout, count, 54321.0);
  // Two pieces, the second starting at an odd offset, as threads would split a range.
  const int64_t split = count / 3;
  for (auto [b, e] : {std::pair<int64_t, int64_t>{0, split}, {split, count}}) {
    const compiler::KernelArgs j = c.args(jit, b, e), r = c.args(ref, b, e);
    c.kernel->function()(&j);
    compiler::run_reference(c.graph, layout, r);
  }
  size_t compared = 0, mismatches = 0;
  for (size_t a = 0; a < layout.outputs.size(); ++a) {
    const size_t block = layout.outputs[a].per_instance;
    std::vector<double> scale(static_cast<size_t>(count), 0.0);
    for (size_t k = 0; k < ref.arrays[a].size(); ++k)
      if (std::isfinite(ref.arrays[a][k]))
        scale[k / block] = std::max(scale[k / block], std::abs(ref.arrays[a][k]));
    for (size_t k = 0; k < jit.arrays[a].size(); ++k, ++compared)
      if (!close_enough(jit.arrays[a][k], ref.arrays[a][k], scale[k / block]) &&
          mismatches++ < 5)
        FAIL_CHECK(traced.signature.name << " " << compiler::mode_name(mode) << " count "
                   << count << ": " << layout.outputs[a].name << " value " << k << " is "
                   << jit.arrays[a][k] << ", the interpreter says " << ref.arrays[a][k]);
  }
  CHECK_MESSAGE(mismatches == 0, traced.signature.name << " " << compiler::mode_name(mode)
                                                       << ": " << mismatches << " mismatches");
  return compared;
}

// Tier 0 (compiler/tier0/tier0.h) against the compiled kernel of the same graph and options, bit
// for bit: `count` instances, the kernel over [0, count) in two pieces and tier 0 in
// three (cut elsewhere), every output value's bits compared (NaN against any NaN: both
// tiers make their NaNs with the same instructions, but this does not test payloads).
// Returns the number of values compared.
inline size_t check_tier0(const ir::Trace& traced, compiler::KernelMode mode, int64_t count,
                          const InstanceSampler& sample, std::mt19937_64& rng,
                          const compiler::CompileOptions& options = {}) {
  const KernelCase c = make_case(traced, mode, count, sample, rng, options, "tier0_");
  KernelOutputs jit = make_outputs(c.layout, count, -12345.0);
  for (auto [b, e] : {std::pair<int64_t, int64_t>{0, count / 3}, {count / 3, count}}) {
    const compiler::KernelArgs a = c.args(jit, b, e);
    c.kernel->function()(&a);
  }
  // Both ways tier 0 runs: with its runs of arithmetic as machine code where this CPU runs
  // it (tier0_x86.h), and every op interpreted, as on other CPUs.
  size_t compared = 0, mismatches = 0;
  for (compiler::Tier0Kernel::Code code : {compiler::Tier0Kernel::Code::Auto, compiler::Tier0Kernel::Code::Interpreted}) {
    const char* how = code == compiler::Tier0Kernel::Code::Auto ? "tier 0" : "tier 0 interpreted";
    const compiler::Tier0Kernel tier0(c.graph, c.layout, options, code);
    KernelOutputs t0 = make_outputs(c.layout, count, 54321.0);
    const int64_t five = std::min<int64_t>(count, 5), half = std::max<int64_t>(count / 2, five);
    for (auto [b, e] : {std::pair<int64_t, int64_t>{0, five}, {five, half}, {half, count}}) tier0(c.args(t0, b, e));
    for (size_t a = 0; a < c.layout.outputs.size(); ++a)
      for (size_t k = 0; k < jit.arrays[a].size(); ++k, ++compared) {
        const double x = jit.arrays[a][k], y = t0.arrays[a][k];
        const bool same = (std::isnan(x) && std::isnan(y)) ||
                          std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y);
        if (!same && mismatches++ < 5)
          FAIL_CHECK(traced.signature.name << " " << compiler::mode_name(mode) << " count "
                     << count << ": " << c.layout.outputs[a].name << " value " << k
                     << " is " << x << " compiled and " << y << " in " << how);
      }
  }
  CHECK_MESSAGE(mismatches == 0, traced.signature.name << " " << compiler::mode_name(mode)
                                                       << ": " << mismatches << " differ");
  return compared;
}

}  // namespace lsjit::testing
