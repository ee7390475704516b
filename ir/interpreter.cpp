#include "lsjit/ir/interpreter.h"

#include <string>

#include "lsjit/common/error.h"
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

size_t hessian_pair(size_t v, size_t w, size_t num_vars) {
  // Pairs whose first slot is below v: num_vars + (num_vars - 1) + ... + (num_vars - v + 1).
  return v * num_vars - v * (v - 1) / 2 + (w - v);
}

EvalResult evaluate(const Trace& trace, const InputValues& inputs) {
  const Signature& sig = trace.signature;
  const std::vector<double> v = evaluate_nodes(trace.graph, inputs);
  EvalResult r;
  const size_t n = sig.vars.size();
  if (stage_has_normal_equations(trace.stage)) {
    for (const VarSlot& var : sig.vars) r.gradient.emplace_back(var.tangent, 0.0);
    for (size_t a = 0; a < n; ++a)
      for (size_t b = a; b < n; ++b)
        r.hessian.emplace_back(size_t{sig.vars[a].tangent} * sig.vars[b].tangent, 0.0);
  } else {
    r.residual.assign(sig.residual_dim, 0.0);
  }
  bool has_jacobian = false;
  for (const Output& o : trace.graph.outputs) has_jacobian |= o.role == OutputRole::Jacobian;
  if (has_jacobian)
    for (const VarSlot& var : sig.vars) r.jacobian.emplace_back(sig.residual_dim * var.tangent, 0.0);
  for (const Output& o : trace.graph.outputs) {
    const double value = v.at(o.node);
    switch (o.role) {
      case OutputRole::Residual: r.residual.at(o.row) = value; break;
      case OutputRole::Jacobian:
        r.jacobian.at(o.var).at(o.row * sig.vars.at(o.var).tangent + o.col) = value;
        break;
      case OutputRole::Cost: r.cost = value; break;
      case OutputRole::Gradient: r.gradient.at(o.var).at(o.row) = value; break;
      case OutputRole::Hessian:
        if (o.var > o.var2 || o.var2 >= n)
          throw Error("interpreter: Hessian output H[" + std::to_string(o.var) + "," +
                      std::to_string(o.var2) + "] needs slots v <= w < " + std::to_string(n));
        r.hessian.at(hessian_pair(o.var, o.var2, n))
            .at(o.row * sig.vars[o.var2].tangent + o.col) = value;
        break;
    }
  }
  return r;
}

}  // namespace lsjit::ir
