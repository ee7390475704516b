#include "lsjit/ir/structural_hash.h"

namespace lsjit::ir {

Hash128 structural_hash(const Trace& trace) {
  StableHasher h;
  h.add("lsjit.structural_hash.v2");
  const Signature& sig = trace.signature;
  h.add(static_cast<uint64_t>(sig.kind));
  h.add(static_cast<uint64_t>(trace.stage));
  h.add(sig.residual_dim);
  h.add(sig.vars.size());
  for (const VarSlot& v : sig.vars) {
    h.add(v.type);
    h.add(v.ambient);
    h.add(v.tangent);
  }
  h.add(sig.data.size());
  for (const DataSlot& d : sig.data) {
    h.add(d.type);
    h.add(d.rows);
    h.add(d.cols);
  }
  const Graph& g = trace.graph;
  h.add(g.nodes.size());
  for (const Node& n : g.nodes) {
    h.add(static_cast<uint64_t>(n.op) | (static_cast<uint64_t>(n.type) << 8) |
          (static_cast<uint64_t>(n.num_args) << 16));
    for (int k = 0; k < n.num_args; ++k) h.add(n.args[k]);
    if (n.op == Op::Const) h.add_double(n.value);
    if (n.op == Op::Powi) h.add(static_cast<uint32_t>(n.int_attr));
    if (n.op == Op::Input)
      h.add((static_cast<uint64_t>(n.input.kind) << 56) ^ (uint64_t{n.input.slot} << 28) ^
            n.input.component);
  }
  h.add(g.outputs.size());
  for (const Output& o : g.outputs) {
    h.add(static_cast<uint64_t>(o.role));
    h.add(o.row);
    h.add(o.var);
    h.add(o.col);
    h.add(o.var2);
    h.add(o.node);
  }
  return h.finish();
}

}  // namespace lsjit::ir
