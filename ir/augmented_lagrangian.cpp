#include "lsjit/ir/augmented_lagrangian.h"

#include <stdexcept>
#include <string>

#include "lsjit/ir/verify.h"

namespace lsjit::ir {

Trace augmented_lagrangian_residual(const Trace& constraint) {
  const Signature& sig = constraint.signature;
  if (sig.kind == CostKind::LeastSquares)
    throw std::logic_error("augmented_lagrangian_residual: '" + sig.name + "' is not a constraint");
  if (constraint.stage != Stage::Traced)
    throw std::logic_error("augmented_lagrangian_residual: expects a traced cost");
  Trace out;
  out.signature = sig;
  out.stage = Stage::Traced;
  const uint32_t m = sig.residual_dim;
  const uint32_t multiplier_slot = static_cast<uint32_t>(sig.data.size());
  out.signature.data.push_back({"al_multiplier", "Vec" + std::to_string(m), m, 1});
  out.signature.data.push_back({"al_penalty", "f64", 1, 1});

  // The constraint's nodes, re-made in order (they are already folded and simplified, so
  // this is a copy), then the augmented-Lagrangian ops on each residual output.
  GraphBuilder b;
  const Graph& g = constraint.graph;
  std::vector<NodeId> map(g.size(), kNoNode);
  for (NodeId i = 0; i < g.size(); ++i) {
    const Node& n = g.nodes[i];
    switch (n.op) {
      case Op::Const:
        map[i] = n.type == Type::Bool ? b.boolean(n.value != 0.0) : b.constant(n.value);
        break;
      case Op::Input: map[i] = b.input(n.input); break;
      default: map[i] = b.make(n.op, map[n.args[0]], n.num_args > 1 ? map[n.args[1]] : kNoNode,
                               n.num_args > 2 ? map[n.args[2]] : kNoNode, n.int_attr);
    }
  }
  const NodeId rho = b.input({InputKind::Data, multiplier_slot + 1, 0});
  const NodeId sqrt_rho = b.make(Op::Sqrt, rho);
  const NodeId zero = b.constant(0.0);
  for (Output o : g.outputs) {
    if (o.role != OutputRole::Residual) throw std::logic_error("augmented_lagrangian_residual: non-residual output");
    NodeId c = map[o.node];
    if (sig.kind == CostKind::InequalityGe) c = b.make(Op::Neg, c);
    const NodeId lambda = b.input({InputKind::Data, multiplier_slot, o.row});
    const NodeId shifted = b.make(Op::Add, c, b.make(Op::Div, lambda, rho));
    NodeId r = b.make(Op::Mul, sqrt_rho, shifted);
    if (sig.kind != CostKind::Equality) r = b.make(Op::Select, b.make(Op::Gt, shifted, zero), r, zero);
    o.node = r;
    b.add_output(o);
  }
  out.graph = b.finish();
  verify(out);
  return out;
}

}  // namespace lsjit::ir
