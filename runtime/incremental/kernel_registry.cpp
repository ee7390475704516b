#include "lsjit/runtime/incremental/kernel_registry.h"

#include "lsjit/common/clock.h"
#include "lsjit/common/error.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/ir/structural_hash.h"
#include "lsjit/runtime/analyze/look_up_kernels.h"
#include "lsjit/runtime/analyze/trace_groups.h"

namespace lsjit::detail {
namespace {

// The key two groups share when one cost type serves both: equal traces (trace_groups'
// merge rule) over variables of the same types (Kinds of one layout trace alike).
std::string trace_key(const ir::Trace& traced, const std::string& hash, const CostGroup& group) {
  std::string key = hash + '\0' + traced.signature.name;
  for (const VariableType* t : group.var_types) key += '\0' + t->name;
  key += '\0' + std::to_string(traced.signature.residual_dim);
  return key;
}

uint32_t add_cost_type(IncrementalState& state, const CostGroup& group, TracedGroup traced, UpdateSummary& summary) {
  ProblemLayout scratch;
  compiler::KernelCache& cache = state.options.analyze.cache ? *state.options.analyze.cache : compiler::default_cache();
  std::vector<TracedGroup> one;
  one.push_back(std::move(traced));
  look_up_kernels(one, cache, state.options.analyze.compile, scratch);
  summary.compiles += static_cast<int64_t>(scratch.compiles);
  state.compiles += static_cast<int64_t>(scratch.compiles);
  KernelGroup& kg = scratch.groups.front();
  CostType type;
  type.name = kg.name;
  type.residual = kg.residual;
  type.normal = kg.normal;
  type.data_stride = kg.data_stride;
  for (const VariableType* t : group.var_types) type.slot_type.push_back(state.type_for(t));
  type.rows.resize(group.var_types.size());
  state.costs.push_back(std::move(type));
  return static_cast<uint32_t>(state.costs.size() - 1);
}

}  // namespace

uint32_t IncrementalState::type_for(const VariableType* type) {
  if (auto found = type_index.find(type->name); found != type_index.end()) return found->second;
  TypeState t;
  t.type = type;
  types.push_back(std::move(t));
  type_index.emplace(type->name, static_cast<uint32_t>(types.size() - 1));
  return static_cast<uint32_t>(types.size() - 1);
}

std::vector<uint32_t> find_cost_types(IncrementalState& state, const std::vector<std::unique_ptr<CostGroup>>& groups,
                                      UpdateSummary& summary) {
  std::vector<uint32_t> kinds;
  for (const auto& g : groups) {
    if (!g->identity.empty())
      if (auto found = state.cost_by_identity.find(g->identity); found != state.cost_by_identity.end()) {
        kinds.push_back(found->second);
        continue;
      }
    if (g->var_types.size() > kMaxSlots || g->var_types.empty())
      throw Error("lsjit::IncrementalSolver: cost '" + g->name + "' has " + std::to_string(g->var_types.size()) +
                  " variable arguments; a cost takes 1 to " + std::to_string(kMaxSlots));
    const auto start = Clock::now();
    TracedGroup traced;
    traced.traced = g->trace();
    traced.trace_s = seconds_since(start);
    ++summary.traces;
    ++state.traces;
    if (traced.traced.signature.kind != CostKind::LeastSquares)
      throw Error("lsjit::IncrementalSolver: cost '" + g->name +
                  "' is a constraint; the incremental solver takes least-squares costs only");
    traced.hash = ir::structural_hash(traced.traced).hex();
    traced.parts.push_back(g.get());
    const std::string key = trace_key(traced.traced, traced.hash, *g);
    uint32_t kind;
    if (auto found = state.cost_by_hash.find(key); found != state.cost_by_hash.end()) kind = found->second;
    else kind = state.cost_by_hash[key] = add_cost_type(state, *g, std::move(traced), summary);
    if (!g->identity.empty()) state.cost_by_identity[g->identity] = kind;
    kinds.push_back(kind);
  }
  return kinds;
}

}  // namespace lsjit::detail
