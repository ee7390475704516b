#include "lsjit/ir/fuse_multiply_add.h"

#include <vector>

#include "lsjit/ir/verify.h"

namespace lsjit::ir {

Trace fuse_multiply_add(const Trace& trace) {
  const Graph& g = trace.graph;
  const std::vector<bool> live = live_nodes(g);
  std::vector<uint32_t> uses(g.size(), 0);
  for (NodeId i = 0; i < g.size(); ++i)
    if (live[i])
      for (int k = 0; k < g[i].num_args; ++k) ++uses[g[i].args[k]];
  for (const Output& o : g.outputs) ++uses[o.node];
  auto fusable = [&](NodeId m) { return g[m].op == Op::Mul && uses[m] == 1; };

  // Nothing is folded or rewritten: the graph keeps every rounding it had but the fused ones.
  GraphBuilder b({.fold_constants = false, .rewrite = false});
  std::vector<NodeId> map(g.size(), kNoNode);
  auto fma = [&](NodeId product, NodeId addend, bool negate_product, bool negate_addend) {
    NodeId x = map[g[product].args[0]];
    const NodeId y = map[g[product].args[1]];
    NodeId z = map[addend];
    if (negate_product) x = b.make(Op::Neg, x);
    if (negate_addend) z = b.make(Op::Neg, z);
    return b.make(Op::Fma, x, y, z);
  };
  for (NodeId i = 0; i < g.size(); ++i) {
    const Node& n = g[i];
    if (!live[i] && n.op != Op::Input) continue;
    const NodeId l = n.args[0], r = n.args[1];
    if (n.op == Op::Const) {
      map[i] = n.type == Type::Bool ? b.boolean(n.value != 0.0) : b.constant(n.value);
    } else if (n.op == Op::Input) {
      map[i] = b.input(n.input);
    } else if (n.op == Op::Add && fusable(l)) {
      map[i] = fma(l, r, false, false);
    } else if (n.op == Op::Add && fusable(r)) {
      map[i] = fma(r, l, false, false);
    } else if (n.op == Op::Sub && fusable(l)) {
      map[i] = fma(l, r, false, true);
    } else if (n.op == Op::Sub && fusable(r)) {
      map[i] = fma(r, l, true, false);
    } else {
      NodeId a[3] = {kNoNode, kNoNode, kNoNode};
      for (int k = 0; k < n.num_args; ++k) a[k] = map[n.args[k]];
      map[i] = b.make(n.op, a[0], a[1], a[2], n.int_attr);
    }
  }
  for (Output o : g.outputs) {
    o.node = map[o.node];
    b.add_output(o);
  }
  // The fused products are dead now: rebuilding without rewriting drops them.
  Trace out{trace.signature, trace.stage,
            rebuild(b.finish(), {.fold_constants = false, .rewrite = false})};
  verify(out);
  return out;
}

}  // namespace lsjit::ir
