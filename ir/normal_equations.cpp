#include "lsjit/ir/normal_equations.h"

#include <stdexcept>
#include <vector>

#include "lsjit/ir/verify.h"
#include "lsjit/ir/work_limits.h"

namespace lsjit::ir {
namespace {

// As for the derivative nodes of differentiate.cpp.
constexpr uint32_t kProductAssumptions = kAssumeFinite | kIgnoreSignedZero;

// sum + x·y, or sum when either factor is structurally zero (kNoNode); kNoNode for an
// empty sum.
NodeId add_product(GraphBuilder& b, NodeId sum, NodeId x, NodeId y) {
  if (x == kNoNode || y == kNoNode) return sum;
  const NodeId term = b.make(Op::Mul, x, y);
  return sum == kNoNode ? term : b.make(Op::Add, sum, term);
}

// sum, or the constant 0 for an empty sum.
NodeId or_zero(GraphBuilder& b, NodeId sum) { return sum == kNoNode ? b.constant(0.0) : sum; }

// r[i] and J[v][i][a] in the new graph; kNoNode where the constant 0.
struct Entries {
  std::vector<NodeId> r;
  std::vector<std::vector<std::vector<NodeId>>> J;
};

// Copies the live nodes and every Var and Data input of `g` into `b`, in order. Returns each
// old node's new id (kNoNode for the dropped ones).
std::vector<NodeId> copy_live_nodes(GraphBuilder& b, const Graph& g) {
  const std::vector<bool> live = live_nodes(g);
  std::vector<NodeId> map(g.size(), kNoNode);
  for (NodeId i = 0; i < g.size(); ++i) {
    const Node& node = g.nodes[i];
    if (!live[i] && node.op != Op::Input) continue;  // verified: no Tangent inputs
    switch (node.op) {
      case Op::Const:
        map[i] = node.type == Type::Bool ? b.boolean(node.value != 0.0) : b.constant(node.value);
        break;
      case Op::Input: map[i] = b.input(node.input); break;
      default: {
        NodeId a[3] = {kNoNode, kNoNode, kNoNode};
        for (int k = 0; k < node.num_args; ++k) a[k] = map[node.args[k]];
        map[i] = b.make(node.op, a[0], a[1], a[2], node.int_attr);
      }
    }
  }
  return map;
}

Entries gather_entries(const Signature& sig, const Graph& g, const std::vector<NodeId>& map) {
  const uint32_t rows = sig.residual_dim;
  const auto n = static_cast<uint32_t>(sig.vars.size());
  const auto entry = [&](NodeId old) { return g.nodes[old].is_const(0.0) ? kNoNode : map[old]; };
  Entries e{std::vector<NodeId>(rows, kNoNode), std::vector<std::vector<std::vector<NodeId>>>(n)};
  for (uint32_t v = 0; v < n; ++v)
    e.J[v].assign(rows, std::vector<NodeId>(sig.vars[v].tangent, kNoNode));
  for (const Output& o : g.outputs) {
    if (o.role == OutputRole::Residual) e.r.at(o.row) = entry(o.node);
    else e.J.at(o.var).at(o.row).at(o.col) = entry(o.node);
  }
  return e;
}

// The cost output: ½·Σ r[i]².
void add_cost(GraphBuilder& b, const Signature& sig, const Entries& e) {
  const uint32_t rows = sig.residual_dim;
  NodeId squares = kNoNode;
  for (uint32_t i = 0; i < rows; ++i) squares = add_product(b, squares, e.r[i], e.r[i]);
  const NodeId cost =
      squares == kNoNode ? b.constant(0.0) : b.make(Op::Mul, squares, b.constant(0.5));
  b.add_output({OutputRole::Cost, 0, 0, 0, cost});
}

// The gradient outputs: Σ_i J[v][i][a]·r[i] for every variable v and tangent index a.
void add_gradient(GraphBuilder& b, const Signature& sig, const Entries& e) {
  const uint32_t rows = sig.residual_dim;
  const auto n = static_cast<uint32_t>(sig.vars.size());
  for (uint32_t v = 0; v < n; ++v)
    for (uint32_t a = 0; a < sig.vars[v].tangent; ++a) {
      NodeId sum = kNoNode;
      for (uint32_t i = 0; i < rows; ++i) sum = add_product(b, sum, e.J[v][i][a], e.r[i]);
      b.add_output({OutputRole::Gradient, a, v, 0, or_zero(b, sum)});
    }
}

// The Gauss-Newton blocks H[v,w] = Σ_i J[v][i]ᵀ·J[w][i] for w >= v.
void add_hessian(GraphBuilder& b, const Signature& sig, const Entries& e) {
  const uint32_t rows = sig.residual_dim;
  const auto n = static_cast<uint32_t>(sig.vars.size());
  for (uint32_t v = 0; v < n; ++v)
    for (uint32_t w = v; w < n; ++w) {
      const uint32_t tv = sig.vars[v].tangent, tw = sig.vars[w].tangent;
      std::vector<NodeId> block(size_t{tv} * tw, kNoNode);
      for (uint32_t a = 0; a < tv; ++a)
        for (uint32_t c = 0; c < tw; ++c) {
          NodeId& h = block[size_t{a} * tw + c];
          if (v == w && c < a) {
            h = block[size_t{c} * tw + a];  // symmetric: H[v,v](a, c) = H[v,v](c, a)
          } else {
            NodeId sum = kNoNode;
            for (uint32_t i = 0; i < rows; ++i) sum = add_product(b, sum, e.J[v][i][a], e.J[w][i][c]);
            h = or_zero(b, sum);
          }
          b.add_output({OutputRole::Hessian, a, v, c, h, w});
        }
    }
}

}  // namespace

Trace normal_equations(const Trace& jac) {
  if (jac.stage != Stage::Jacobian)
    throw std::logic_error("normal_equations expects a trace at stage 'jacobian', found stage '" +
                           std::string(stage_name(jac.stage)) + "'");
  verify(jac);
  const WorkEstimate work = estimate_work(jac);
  check_work(jac, "its Gauss-Newton block (entries)", work.hessian_entries, kMaxNormalEquationsEntries);
  check_work(jac, "its Gauss-Newton block (products)", work.hessian_products, kMaxNormalEquationsProducts);
  const Signature& sig = jac.signature;
  const Graph& g = jac.graph;

  // Copy the live nodes and every Var and Data input exactly: no folding, no rewriting.
  GraphBuilder b({.fold_constants = false, .rewrite = false});
  const std::vector<NodeId> map = copy_live_nodes(b, g);
  const Entries entries = gather_entries(sig, g, map);

  b.options() = {.fold_constants = true, .rewrite = true, .assumptions = kProductAssumptions};
  add_cost(b, sig, entries);
  add_gradient(b, sig, entries);
  add_hessian(b, sig, entries);

  // Residual and Jacobian nodes that only fed constant products are dead now; drop them
  // (Var and Data inputs stay), keeping every other node exactly.
  Trace result{sig, Stage::NormalEquations,
               rebuild(b.finish(), {.fold_constants = false, .rewrite = false})};
  verify(result);
  return result;
}

}  // namespace lsjit::ir
