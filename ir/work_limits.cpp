#include "lsjit/ir/work_limits.h"

#include <string>
#include <vector>

#include "lsjit/common/error.h"

namespace lsjit::ir {

WorkEstimate estimate_work(const Trace& traced) {
  WorkEstimate w;
  const Graph& g = traced.graph;
  w.nodes = g.size();
  std::vector<bool> depends(g.size(), false);
  for (NodeId i = 0; i < g.size(); ++i) {
    const Node& n = g.nodes[i];
    bool d = n.op == Op::Input && n.input.kind == InputKind::Tangent;
    for (int k = 0; k < n.num_args && !d; ++k) d = depends[n.args[k]];
    depends[i] = d;
    w.dependent_nodes += d;
  }
  w.residuals = traced.signature.residual_dim;
  for (const VarSlot& v : traced.signature.vars) w.tangent += v.tangent;
  w.forward_visits = w.dependent_nodes * w.tangent;
  w.reverse_visits = w.dependent_nodes * w.residuals;
  // Σ over pairs v <= w of T_v·T_w = ((Σ T)² + Σ T²) / 2, in closed form: a file may
  // declare many slots, and a loop over their pairs would itself be the unbounded work.
  uint64_t squares = 0;
  for (const VarSlot& v : traced.signature.vars) squares += uint64_t{v.tangent} * v.tangent;
  w.hessian_entries = (w.tangent * w.tangent + squares) / 2;
  w.hessian_products = w.hessian_entries * w.residuals;
  return w;
}

void check_work(const Trace& trace, const char* what, uint64_t amount, uint64_t limit) {
  if (amount <= limit) return;
  throw Error("cost '" + printable(trace.signature.name) + "': " + what + " would take " + std::to_string(amount) +
              ", more than lsjit's limit of " + std::to_string(limit) + " (" +
              std::to_string(trace.signature.residual_dim) + " residuals, " + std::to_string(trace.graph.size()) +
              " nodes); split the cost into smaller costs, each added as its own residual block "
              "(docs/testing.md, \"Limits on work and memory\")");
}

}  // namespace lsjit::ir
