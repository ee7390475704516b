#include "lsjit/ir/differentiate.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "lsjit/ir/verify.h"
#include "lsjit/ir/work_limits.h"

namespace lsjit::ir {
namespace {

constexpr uint32_t kDerivativeAssumptions = kAssumeFinite | kIgnoreSignedZero;

// The contribution of argument k of node `self` to the derivative of `self`, given the
// derivative `d` of that argument: ∂self/∂arg_k · d. Select, min and max route d instead
// of multiplying it by an indicator, which keeps their derivatives exact and small.
// Returns kNoNode when the partial is structurally zero.
NodeId chain(GraphBuilder& b, NodeId self, int k, NodeId d) {
  const Node n = b[self];  // copy: making nodes may reallocate
  const NodeId a = n.args[0], c = n.args[1];
  auto C = [&b](double v) { return b.constant(v); };
  auto mk = [&b](Op op, NodeId x, NodeId y = kNoNode, NodeId z = kNoNode, int32_t i = 0) {
    return b.make(op, x, y, z, i);
  };
  auto times = [&](NodeId partial) { return mk(Op::Mul, partial, d); };
  // d / x as d · (1/x): hash-consing makes 1/x one node, however many directions (forward)
  // or adjoints (reverse) divide by x, and a division costs several multiplications (the
  // reprojection's derivatives divide many times by the same 3 values). A derivative
  // changes by a rounding; the residual's own nodes are left as they are.
  auto reciprocal = [&](NodeId x) { return mk(Op::Div, C(1.0), x); };
  auto over = [&](NodeId denominator) { return times(reciprocal(denominator)); };
  switch (n.op) {
    case Op::Add: return d;
    case Op::Sub: return k == 0 ? d : mk(Op::Neg, d);
    case Op::Mul: return times(k == 0 ? c : a);
    case Op::Div: return k == 0 ? over(c) : mk(Op::Neg, times(mk(Op::Mul, self, reciprocal(c))));
    case Op::Neg: return mk(Op::Neg, d);
    case Op::Sqrt: return over(mk(Op::Mul, C(2.0), self));
    case Op::Cbrt: return over(mk(Op::Mul, C(3.0), mk(Op::Mul, self, self)));
    case Op::Exp: return times(self);
    case Op::Expm1: return times(mk(Op::Add, self, C(1.0)));
    case Op::Log: return over(a);
    case Op::Log1p: return over(mk(Op::Add, a, C(1.0)));
    case Op::Pow:
      if (k == 0) return times(mk(Op::Mul, c, mk(Op::Pow, a, mk(Op::Sub, c, C(1.0)))));
      return times(mk(Op::Mul, self, mk(Op::Log, a)));
    case Op::Powi:
      return times(mk(Op::Mul, C(n.int_attr), mk(Op::Powi, a, kNoNode, kNoNode, n.int_attr - 1)));
    case Op::Sin: return times(mk(Op::Cos, a));
    case Op::Cos: return mk(Op::Neg, times(mk(Op::Sin, a)));
    case Op::Tan: return times(mk(Op::Add, C(1.0), mk(Op::Mul, self, self)));
    case Op::Asin: return over(mk(Op::Sqrt, mk(Op::Sub, C(1.0), mk(Op::Mul, a, a))));
    case Op::Acos: return mk(Op::Neg, over(mk(Op::Sqrt, mk(Op::Sub, C(1.0), mk(Op::Mul, a, a)))));
    case Op::Atan: return over(mk(Op::Add, C(1.0), mk(Op::Mul, a, a)));
    case Op::Atan2: {  // atan2(y = a, x = c)
      const NodeId r2 = mk(Op::Add, mk(Op::Mul, a, a), mk(Op::Mul, c, c));
      return k == 0 ? times(mk(Op::Mul, c, reciprocal(r2))) : mk(Op::Neg, times(mk(Op::Mul, a, reciprocal(r2))));
    }
    case Op::Sinh: return times(mk(Op::Cosh, a));
    case Op::Cosh: return times(mk(Op::Sinh, a));
    case Op::Tanh: return times(mk(Op::Sub, C(1.0), mk(Op::Mul, self, self)));
    case Op::Abs: return mk(Op::Select, mk(Op::Lt, a, C(0.0)), mk(Op::Neg, d), d);
    case Op::Hypot: return times(mk(Op::Mul, k == 0 ? a : c, reciprocal(self)));
    case Op::Floor:
    case Op::Ceil: return kNoNode;  // piecewise constant
    case Op::Fmod:  // fmod(a, c) = a - trunc(a/c)·c, and trunc(a/c) = (a - self)/c
      if (k == 0) return d;
      return mk(Op::Neg, times(mk(Op::Mul, mk(Op::Sub, a, self), reciprocal(c))));
    case Op::Min:
    case Op::Max: {  // fmin picks a when a <= b (fmax when a >= b)
      const NodeId picks_a = mk(n.op == Op::Min ? Op::Le : Op::Ge, a, c);
      return k == 0 ? mk(Op::Select, picks_a, d, C(0.0)) : mk(Op::Select, picks_a, C(0.0), d);
    }
    case Op::Fma:  // a·b + c
      return k == 2 ? d : times(k == 0 ? c : a);
    case Op::Select:
      if (k == 0) return kNoNode;  // the condition is boolean
      return k == 1 ? mk(Op::Select, a, d, C(0.0)) : mk(Op::Select, a, C(0.0), d);
    default: return kNoNode;  // comparisons and logic are boolean
  }
}

NodeId accumulate(GraphBuilder& b, NodeId sum, NodeId term) {
  if (term == kNoNode) return sum;
  return sum == kNoNode ? term : b.make(Op::Add, sum, term);
}

struct Differentiable {
  GraphBuilder builder;
  std::vector<NodeId> residual;                       // per residual row
  std::vector<std::vector<NodeId>> tangent;           // [slot][component] -> node
  std::vector<bool> depends;                          // node depends on some δ
  size_t primal_size = 0;
};

// Copies the traced graph into a builder (IEEE-safe rules) and finds what depends on δ.
Differentiable prepare(const Trace& traced) {
  Differentiable p{GraphBuilder({.fold_constants = true, .rewrite = true}), {}, {}, {}, 0};
  const Graph& g = traced.graph;
  // Differentiation makes 4-9 nodes per traced one (se3_between: 533 traced, 3585 built
  // forward, 4524 reverse); room for 8 saves most of the growing.
  p.builder.reserve(8 * g.size());
  std::vector<NodeId> map(g.size(), kNoNode);
  p.tangent.resize(traced.signature.vars.size());
  for (size_t s = 0; s < p.tangent.size(); ++s)
    p.tangent[s].assign(traced.signature.vars[s].tangent, kNoNode);
  for (NodeId i = 0; i < g.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.op == Op::Const)
      map[i] = n.type == Type::Bool ? p.builder.boolean(n.value != 0) : p.builder.constant(n.value);
    else if (n.op == Op::Input) {
      map[i] = p.builder.input(n.input);
      if (n.input.kind == InputKind::Tangent) p.tangent.at(n.input.slot).at(n.input.component) = map[i];
    } else
      map[i] = p.builder.make(n.op, n.num_args > 0 ? map[n.args[0]] : kNoNode,
                              n.num_args > 1 ? map[n.args[1]] : kNoNode,
                              n.num_args > 2 ? map[n.args[2]] : kNoNode, n.int_attr);
  }
  p.residual.assign(traced.signature.residual_dim, kNoNode);
  for (const Output& o : g.outputs)
    if (o.role == OutputRole::Residual) p.residual.at(o.row) = map[o.node];
  p.primal_size = p.builder.size();
  p.depends.assign(p.primal_size, false);
  for (NodeId i = 0; i < p.primal_size; ++i) {
    const Node& n = p.builder[i];
    bool d = n.op == Op::Input && n.input.kind == InputKind::Tangent;
    for (int k = 0; k < n.num_args; ++k) d = d || p.depends[n.args[k]];
    p.depends[i] = d;
  }
  p.builder.options().assumptions = kDerivativeAssumptions;
  return p;
}

// jac[row][slot][component], kNoNode where structurally zero.
using JacobianNodes = std::vector<std::vector<std::vector<NodeId>>>;

JacobianNodes forward(Differentiable& p) {
  JacobianNodes jac(p.residual.size());
  for (auto& row : jac) {
    row.resize(p.tangent.size());
    for (size_t s = 0; s < p.tangent.size(); ++s) row[s].assign(p.tangent[s].size(), kNoNode);
  }
  // The work is (δ-dependent nodes) x (directions), as ir/work_limits predicts: a
  // direction clears and visits only dependent nodes, not the whole graph.
  std::vector<NodeId> dependent;
  for (NodeId i = 0; i < p.primal_size; ++i)
    if (p.depends[i]) dependent.push_back(i);
  std::vector<NodeId> dot(p.primal_size, kNoNode);
  for (size_t s = 0; s < p.tangent.size(); ++s) {
    for (size_t c = 0; c < p.tangent[s].size(); ++c) {
      const NodeId seed = p.tangent[s][c];
      if (seed == kNoNode) continue;
      for (NodeId i : dependent) dot[i] = kNoNode;  // (only dependent nodes are ever set)
      dot[seed] = p.builder.constant(1.0);
      const auto first = std::upper_bound(dependent.begin(), dependent.end(), seed);
      for (auto it = first; it != dependent.end(); ++it) {
        const NodeId i = *it;
        const Node n = p.builder[i];
        NodeId sum = kNoNode;
        for (int k = 0; k < n.num_args; ++k)
          if (dot[n.args[k]] != kNoNode)
            sum = accumulate(p.builder, sum, chain(p.builder, i, k, dot[n.args[k]]));
        dot[i] = sum;
      }
      for (size_t r = 0; r < p.residual.size(); ++r) jac[r][s][c] = dot[p.residual[r]];
    }
  }
  return jac;
}

JacobianNodes reverse(Differentiable& p) {
  JacobianNodes jac(p.residual.size());
  std::vector<NodeId> adj(p.primal_size);
  for (size_t r = 0; r < p.residual.size(); ++r) {
    std::fill(adj.begin(), adj.end(), kNoNode);
    if (p.depends[p.residual[r]]) adj[p.residual[r]] = p.builder.constant(1.0);
    for (NodeId i = p.primal_size; i-- > 0;) {
      if (adj[i] == kNoNode) continue;
      const Node n = p.builder[i];
      for (int k = 0; k < n.num_args; ++k)
        if (p.depends[n.args[k]])
          adj[n.args[k]] = accumulate(p.builder, adj[n.args[k]], chain(p.builder, i, k, adj[i]));
    }
    jac[r].resize(p.tangent.size());
    for (size_t s = 0; s < p.tangent.size(); ++s) {
      jac[r][s].assign(p.tangent[s].size(), kNoNode);
      for (size_t c = 0; c < p.tangent[s].size(); ++c)
        if (p.tangent[s][c] != kNoNode) jac[r][s][c] = adj[p.tangent[s][c]];
    }
  }
  return jac;
}

// Substitutes δ = 0, simplifies (relaxed rules on δ-dependent and derivative nodes) and
// removes dead code.
Graph substitute_zero_tangent(const Graph& g, const std::vector<bool>& depends,
                              size_t primal_size) {
  GraphBuilder::Options options{.fold_constants = true, .rewrite = true};
  RebuildHooks hooks;
  hooks.replace_input = [](const Node& n, GraphBuilder& b) {
    return n.input.kind == InputKind::Tangent ? b.constant(0.0) : kNoNode;
  };
  hooks.assumptions_for = [&depends, primal_size](NodeId old) {
    return old >= primal_size || depends[old] ? kDerivativeAssumptions : kAssumeNothing;
  };
  return rebuild(g, options, hooks);
}

Trace build(const Trace& traced, Accumulation mode) {
  Differentiable p = prepare(traced);
  const JacobianNodes jac = mode == Accumulation::Reverse ? reverse(p) : forward(p);
  for (uint32_t r = 0; r < p.residual.size(); ++r)
    p.builder.add_output({OutputRole::Residual, r, 0, 0, p.residual[r]});
  const NodeId zero = p.builder.constant(0.0);
  for (uint32_t s = 0; s < p.tangent.size(); ++s)
    for (uint32_t r = 0; r < p.residual.size(); ++r)
      for (uint32_t c = 0; c < p.tangent[s].size(); ++c) {
        const NodeId j = jac[r][s][c];
        p.builder.add_output({OutputRole::Jacobian, r, s, c, j == kNoNode ? zero : j});
      }
  const size_t primal_size = p.primal_size;
  Graph g = p.builder.finish();
  return Trace{traced.signature, Stage::Jacobian, substitute_zero_tangent(g, p.depends, primal_size)};
}

void check_traced(const Trace& traced) {
  if (traced.stage != Stage::Traced)
    throw std::logic_error("differentiation expects a trace at stage 'traced'");
  verify(traced);
}

}  // namespace

Trace simplify_residual(const Trace& traced) {
  check_traced(traced);
  check_work(traced, "simplifying its graph (nodes)", traced.graph.size(), kMaxGraphNodes);
  Differentiable p = prepare(traced);
  for (uint32_t r = 0; r < p.residual.size(); ++r)
    p.builder.add_output({OutputRole::Residual, r, 0, 0, p.residual[r]});
  const size_t primal_size = p.primal_size;
  Graph g = p.builder.finish();
  Trace result{traced.signature, Stage::Simplified,
               substitute_zero_tangent(g, p.depends, primal_size)};
  verify(result);
  return result;
}

Trace differentiate(const Trace& traced, Accumulation mode, DifferentiationReport* report) {
  check_traced(traced);
  // Each mode only where its predicted work is within the limit: Auto then builds the one
  // that fits when only one does, and a graph that fits neither is refused before either
  // is built.
  const WorkEstimate work = estimate_work(traced);
  check_work(traced, "simplifying its graph (nodes)", work.nodes, kMaxGraphNodes);
  const bool forward_fits = work.forward_visits <= kMaxDifferentiationVisits;
  const bool reverse_fits = work.reverse_visits <= kMaxDifferentiationVisits;
  if (mode == Accumulation::Auto && forward_fits != reverse_fits)
    mode = forward_fits ? Accumulation::Forward : Accumulation::Reverse;
  if (mode != Accumulation::Reverse && !(mode == Accumulation::Auto && reverse_fits))
    check_work(traced, "differentiating it by forward accumulation (node visits)", work.forward_visits,
               kMaxDifferentiationVisits);
  if (mode != Accumulation::Forward && !(mode == Accumulation::Auto && forward_fits))
    check_work(traced, "differentiating it by reverse accumulation (node visits)", work.reverse_visits,
               kMaxDifferentiationVisits);
  DifferentiationReport r;
  Trace result;
  if (mode == Accumulation::Auto) {
    Trace fwd = build(traced, Accumulation::Forward);
    Trace rev = build(traced, Accumulation::Reverse);
    r.forward_ops = fwd.graph.op_count();
    r.reverse_ops = rev.graph.op_count();
    const bool use_reverse = r.reverse_ops < r.forward_ops;
    r.chosen = use_reverse ? Accumulation::Reverse : Accumulation::Forward;
    result = std::move(use_reverse ? rev : fwd);
  } else {
    result = build(traced, mode);
    r.chosen = mode;
    (mode == Accumulation::Forward ? r.forward_ops : r.reverse_ops) = result.graph.op_count();
  }
  if (report != nullptr) {
    r.residual_ops = simplify_residual(traced).graph.op_count();
    *report = r;
  }
  verify(result);
  return result;
}

}  // namespace lsjit::ir
