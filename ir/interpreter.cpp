#include "lsjit/ir/interpreter.h"

#include <string>

#include "lsjit/ir/error.h"
#include "lsjit/ir/eval_op.h"

namespace lsjit::ir {
namespace {

double read_input(const InputRef& ref, const InputValues& in) {
  const std::vector<std::vector<double>>* slots = nullptr;
  const char* what = "";
  switch (ref.kind) {
    case InputKind::Var: slots = &in.vars; what = "variable"; break;
    case InputKind::Data: slots = &in.data; what = "data"; break;
    case InputKind::Tangent:
      if (in.tangents.empty()) return 0.0;
      slots = &in.tangents;
      what = "tangent";
      break;
  }
  if (ref.slot >= slots->size() || ref.component >= (*slots)[ref.slot].size())
    throw Error(std::string("interpreter: no value for ") + what + " slot " +
                std::to_string(ref.slot) + " component " + std::to_string(ref.component));
  return (*slots)[ref.slot][ref.component];
}

}  // namespace

std::vector<double> evaluate_nodes(const Graph& graph, const InputValues& inputs) {
  std::vector<double> v(graph.size());
  for (size_t i = 0; i < graph.size(); ++i) {
    const Node& n = graph.nodes[i];
    switch (n.op) {
      case Op::Const: v[i] = n.value; break;
      case Op::Input: v[i] = read_input(n.input, inputs); break;
      default: {
        double a[3] = {0, 0, 0};
        for (int k = 0; k < n.num_args; ++k) a[k] = v[n.args[k]];
        v[i] = eval_op(n.op, a[0], a[1], a[2], n.int_attr);
      }
    }
  }
  return v;
}

EvalResult evaluate(const Trace& trace, const InputValues& inputs) {
  const Signature& sig = trace.signature;
  const std::vector<double> v = evaluate_nodes(trace.graph, inputs);
  EvalResult r;
  r.residual.assign(sig.residual_dim, 0.0);
  bool has_jacobian = false;
  for (const Output& o : trace.graph.outputs) has_jacobian |= o.role == OutputRole::Jacobian;
  if (has_jacobian)
    for (const VarSlot& var : sig.vars) r.jacobian.emplace_back(sig.residual_dim * var.tangent, 0.0);
  for (const Output& o : trace.graph.outputs) {
    if (o.role == OutputRole::Residual)
      r.residual.at(o.row) = v[o.node];
    else
      r.jacobian.at(o.var).at(o.row * sig.vars[o.var].tangent + o.col) = v[o.node];
  }
  return r;
}

}  // namespace lsjit::ir
