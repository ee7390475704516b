#include "lsjit/runtime/analyze/look_up_kernels.h"

#include <utility>

#include "lsjit/common/clock.h"
#include "lsjit/ir/augmented_lagrangian.h"

namespace lsjit::detail {
namespace {

// Adds one lookup to the layout's counters (SolveSummary's): a compile waited for, a
// tier-0 start (which counts as a compile too when a background thread compiles it), or a
// hit in memory, on disk or among the linked kernels; and a recompile, whatever made it.
void count_lookup(const compiler::KernelCache::Lookup& l, ProblemLayout& layout) {
  if (l.source == compiler::KernelSource::Compiled) {
    ++layout.cache_misses;
    ++layout.compiles;
    layout.compile_s += l.seconds;
  } else if (l.source == compiler::KernelSource::Tier0) {
    ++layout.cache_misses;
    ++layout.tier0_kernels;
    layout.compiles += l.background_compile;
    layout.background_compiles += l.background_compile;
    layout.compile_s += l.seconds;
  } else {
    ++layout.cache_hits;
    if (l.source == compiler::KernelSource::Linked) ++layout.linked_kernels;
    if (l.source == compiler::KernelSource::Disk) layout.compile_s += l.seconds;
  }
  layout.recompiles += l.recompile;
}

// Where each Hessian output array of the group's NormalEquations kernel goes: slot pairs.
void set_kernel_tables(KernelGroup& kg) {
  const compiler::KernelLayout& L = kg.normal->layout;
  kg.hessian_slots.assign(L.outputs.size(), {0, 0});
  for (uint32_t v = 0; v < L.num_vars; ++v)
    for (uint32_t w = v; w < L.num_vars; ++w) kg.hessian_slots[L.hessian_array(v, w)] = {v, w};
  kg.data_stride = kg.normal->layout.data_stride;
  if (kg.kind == CostKind::LeastSquares) kg.user_data_stride = kg.data_stride;
}

}  // namespace

void look_up_kernels(std::vector<TracedGroup>& groups, compiler::KernelCache& cache,
                     const compiler::CompileOptions& compile, ProblemLayout& layout) {
  for (TracedGroup& m : groups) {
    KernelGroup kg;
    kg.name = m.traced.signature.name;
    kg.kind = m.traced.signature.kind;
    std::vector<compiler::KernelCache::Lookup> got;
    if (kg.kind != CostKind::LeastSquares) {
      ir::Trace plain = m.traced;
      plain.signature.name += ".constraint";
      got.push_back(cache.lookup(plain, compiler::KernelMode::Residual, compile, m.trace_s));
      kg.constraint = got.back().kernel;
      kg.user_data_stride = kg.constraint->layout.data_stride;
      kg.constraint_traced = std::move(plain);
      m.traced = ir::augmented_lagrangian_residual(m.traced);
    }
    dump_trace(m);
    const auto lookups_start = Clock::now();
    const auto modes = cache.lookup_modes(
        m.traced, {compiler::KernelMode::Residual, compiler::KernelMode::NormalEquations}, compile, m.trace_s);
    layout.kernels_wall_s += seconds_since(lookups_start);
    kg.residual = modes[0].kernel;
    kg.normal = modes[1].kernel;
    got.insert(got.end(), modes.begin(), modes.end());
    for (const auto& l : got) count_lookup(l, layout);
    kg.residual_dim = m.traced.signature.residual_dim;
    set_kernel_tables(kg);
    kg.traced = std::move(m.traced);
    layout.groups.push_back(std::move(kg));
  }
}

}  // namespace lsjit::detail
