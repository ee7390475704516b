#include "lsjit/compiler/kernel.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "lsjit/ir/differentiate.h"
#include "lsjit/ir/interpreter.h"
#include "lsjit/ir/normal_equations.h"
#include "lsjit/ir/work_limits.h"

namespace lsjit::compiler {

std::string_view mode_name(KernelMode mode) {
  switch (mode) {
    case KernelMode::Residual: return "residual";
    case KernelMode::ResidualJacobian: return "residual_jacobian";
    case KernelMode::NormalEquations: return "normal_equations";
  }
  return "?";
}

std::optional<KernelMode> mode_from_name(std::string_view name) {
  for (KernelMode m : kAllModes)
    if (mode_name(m) == name) return m;
  return std::nullopt;
}

KernelLayout make_layout(const ir::Signature& sig, KernelMode mode) {
  KernelLayout l;
  l.mode = mode;
  l.num_vars = static_cast<uint32_t>(sig.vars.size());
  l.residual_dim = sig.residual_dim;
  for (const ir::DataSlot& d : sig.data) {
    l.data_offset.push_back(l.data_stride);
    l.data_stride += d.size();
  }
  for (const ir::VarSlot& v : sig.vars) {
    l.ambient.push_back(v.ambient);
    l.tangent.push_back(v.tangent);
  }
  const uint32_t R = sig.residual_dim;
  switch (mode) {
    case KernelMode::Residual: l.outputs.push_back({"res", R}); break;
    case KernelMode::ResidualJacobian:
      l.outputs.push_back({"res", R});
      for (const ir::VarSlot& v : sig.vars) l.outputs.push_back({"J[" + v.name + "]", R * v.tangent});
      break;
    case KernelMode::NormalEquations:
      l.outputs.push_back({"cost", 1});
      for (const ir::VarSlot& v : sig.vars) l.outputs.push_back({"g[" + v.name + "]", v.tangent});
      for (size_t v = 0; v < sig.vars.size(); ++v)
        for (size_t w = v; w < sig.vars.size(); ++w)
          l.outputs.push_back({"H[" + sig.vars[v].name + "," + sig.vars[w].name + "]",
                               v == w ? packed_size(sig.vars[v].tangent)
                                      : sig.vars[v].tangent * sig.vars[w].tangent,
                               v != w});
      break;
  }
  return l;
}

uint32_t KernelLayout::hessian_array(uint32_t v, uint32_t w) const {
  if (v > w || w >= num_vars) throw std::logic_error("KernelLayout::hessian_array: need v <= w < n");
  // Pairs (v, w>=v) in row-major order: rows before v contribute n, n-1, ... pairs.
  const uint32_t before = v * num_vars - v * (v - 1) / 2;
  return 1 + num_vars + before + (w - v);
}

KernelLayout::Place KernelLayout::place(const ir::Output& o) const {
  using ir::OutputRole;
  switch (o.role) {
    case OutputRole::Residual: return {0, o.row};
    case OutputRole::Jacobian: return {1 + o.var, o.row * tangent.at(o.var) + o.col};
    case OutputRole::Cost: return {0, 0};
    case OutputRole::Gradient: return {1 + o.var, o.row};
    case OutputRole::Hessian: {
      const uint32_t array = hessian_array(o.var, o.var2);
      if (o.var != o.var2) return {array, o.row * tangent.at(o.var2) + o.col};
      return {array, packed_upper_index(std::min(o.row, o.col), std::max(o.row, o.col), tangent.at(o.var))};
    }
  }
  throw std::logic_error("KernelLayout::place: unknown output role");
}

std::vector<bool> stored_outputs(const KernelLayout& layout, const std::vector<ir::Output>& graph_outputs) {
  std::vector<std::vector<bool>> taken(layout.outputs.size());
  for (size_t k = 0; k < layout.outputs.size(); ++k) taken[k].assign(layout.outputs[k].per_instance, false);
  std::vector<bool> stored(graph_outputs.size(), false);
  for (size_t o = 0; o < graph_outputs.size(); ++o) {
    const KernelLayout::Place p = layout.place(graph_outputs[o]);
    if (p.array >= taken.size() || p.offset >= taken[p.array].size())
      throw std::logic_error("stored_outputs: an output is placed outside the kernel layout's output arrays");
    stored[o] = !taken[p.array][p.offset];
    taken[p.array][p.offset] = true;
  }
  return stored;
}

namespace {
ir::Trace unchecked_graph_for_mode(const ir::Trace& traced, KernelMode mode) {
  switch (mode) {
    case KernelMode::Residual: return ir::simplify_residual(traced);
    case KernelMode::ResidualJacobian: return ir::differentiate(traced);
    case KernelMode::NormalEquations: return ir::normal_equations(ir::differentiate(traced));
  }
  throw std::logic_error("graph_for_mode: unknown mode");
}
}  // namespace

size_t kernel_size(const ir::Graph& g) { return g.size() + g.outputs.size(); }

ir::Trace graph_for_mode(const ir::Trace& traced, KernelMode mode) {
  const auto check = [&](const ir::Trace& graph, KernelMode of) {
    ir::check_work(traced, (std::string("its ") + std::string(mode_name(of)) + " kernel (nodes and outputs)").c_str(),
                   kernel_size(graph.graph), kMaxKernelOps);
  };
  // Every mode's graph computes the residual: where the trace alone is too large to tell,
  // the simplified residual (linear work) is checked before the derivatives are built.
  if (mode != KernelMode::Residual && kernel_size(traced.graph) > kMaxKernelOps)
    check(ir::simplify_residual(traced), KernelMode::Residual);
  ir::Trace graph = unchecked_graph_for_mode(traced, mode);
  check(graph, mode);
  return graph;
}

ScatterTables contiguous_scatter(const KernelLayout& layout, double* const* outputs, int64_t instances) {
  ScatterTables s;
  s.tables.resize(layout.outputs.size());
  for (size_t k = 0; k < layout.outputs.size(); ++k) {
    if (layout.outputs[k].scattered)
      for (int64_t i = 0; i < instances; ++i) s.tables[k].push_back(outputs[k] + i * layout.outputs[k].per_instance);
    s.pointers.push_back(s.tables[k].empty() ? nullptr : s.tables[k].data());
  }
  return s;
}

void run_reference(const ir::Trace& g, const KernelLayout& layout, const KernelArgs& args) {
  const ir::Signature& sig = g.signature;
  const std::vector<bool> stored = stored_outputs(layout, g.graph.outputs);
  ir::InputValues in;
  in.vars.resize(sig.vars.size());
  in.data.resize(sig.data.size());
  for (int64_t i = args.begin; i < args.end; ++i) {
    for (size_t s = 0; s < sig.vars.size(); ++s) {
      const double* row = args.values[s] + int64_t{args.indices[s][i]} * layout.ambient[s];
      in.vars[s].assign(row, row + layout.ambient[s]);
    }
    for (size_t s = 0; s < sig.data.size(); ++s) {
      const double* d = args.data + i * layout.data_stride + layout.data_offset[s];
      in.data[s].assign(d, d + sig.data[s].size());
    }
    const std::vector<double> v = ir::evaluate_nodes(g.graph, in);
    for (size_t k = 0; k < g.graph.outputs.size(); ++k) {
      if (!stored[k]) continue;
      const ir::Output& o = g.graph.outputs[k];
      const KernelLayout::Place p = layout.place(o);
      const OutputArray& a = layout.outputs[p.array];
      double* block = a.scattered ? args.scatter[p.array][i] : args.outputs[p.array] + i * a.per_instance;
      block[p.offset] = v[o.node];
    }
  }
}

}  // namespace lsjit::compiler
