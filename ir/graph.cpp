#include "lsjit/ir/graph.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

#include "lsjit/ir/eval_op.h"
#include "lsjit/ir/simplify_rules.h"

namespace lsjit::ir {

std::string_view cost_kind_name(CostKind kind) {
  switch (kind) {
    case CostKind::LeastSquares: return "least_squares";
    case CostKind::Equality: return "equality";
    case CostKind::InequalityLe: return "inequality_le";
    case CostKind::InequalityGe: return "inequality_ge";
  }
  return "?";
}

std::string_view stage_name(Stage stage) {
  switch (stage) {
    case Stage::Traced: return "traced";
    case Stage::Simplified: return "simplified";
    case Stage::Jacobian: return "jacobian";
    case Stage::NormalEquations: return "normal_equations";
  }
  return "?";
}

std::optional<CostKind> cost_kind_from_name(std::string_view name) {
  for (CostKind k : {CostKind::LeastSquares, CostKind::Equality, CostKind::InequalityLe,
                     CostKind::InequalityGe})
    if (cost_kind_name(k) == name) return k;
  return std::nullopt;
}

std::optional<Stage> stage_from_name(std::string_view name) {
  for (Stage s : {Stage::Traced, Stage::Simplified, Stage::Jacobian, Stage::NormalEquations})
    if (stage_name(s) == name) return s;
  return std::nullopt;
}

size_t Graph::op_count() const {
  return static_cast<size_t>(std::count_if(nodes.begin(), nodes.end(), [](const Node& n) {
    return n.op != Op::Const && n.op != Op::Input;
  }));
}

static bool same_node(const Node& a, const Node& b) {
  return a.op == b.op && a.type == b.type && a.num_args == b.num_args &&
         std::equal(a.args, a.args + 3, b.args) &&
         std::bit_cast<uint64_t>(a.value) == std::bit_cast<uint64_t>(b.value) &&
         a.int_attr == b.int_attr && a.input == b.input;
}

bool Graph::operator==(const Graph& other) const {
  return outputs == other.outputs && nodes.size() == other.nodes.size() &&
         std::equal(nodes.begin(), nodes.end(), other.nodes.begin(), same_node);
}

namespace {

// The fields as five words, each multiplied by its own odd constant (independent
// multiplies, not a chain of seven), then one avalanche so that every field reaches the
// low bits that index the table.
uint32_t node_hash(const Node& n) {
  const uint64_t w0 = uint64_t{static_cast<uint8_t>(n.op)} | (uint64_t{static_cast<uint8_t>(n.type)} << 8) |
                      (uint64_t{static_cast<uint32_t>(n.int_attr)} << 32);
  const uint64_t w1 = uint64_t{n.args[0]} | (uint64_t{n.args[1]} << 32);
  const uint64_t w2 = uint64_t{n.args[2]} | (uint64_t{n.input.component} << 32);
  const uint64_t w3 = std::bit_cast<uint64_t>(n.value);
  const uint64_t w4 = uint64_t{static_cast<uint8_t>(n.input.kind)} | (uint64_t{n.input.slot} << 8);
  uint64_t h = (w0 * 0x9e3779b97f4a7c15ull) ^ (w1 * 0xc2b2ae3d27d4eb4full) ^
               (w2 * 0x165667b19e3779f9ull) ^ (w3 * 0xd6e8feb86659fd93ull) ^
               (w4 * 0xff51afd7ed558ccdull);
  h ^= h >> 32;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 29;
  return static_cast<uint32_t>(h ^ (h >> 32));
}

}  // namespace

void GraphBuilder::reserve(size_t nodes) {
  graph_.nodes.reserve(nodes);
  hashes_.reserve(nodes);
  size_t slots = std::max<size_t>(64, table_.size());
  while (2 * (nodes + 1) > slots) slots *= 2;
  if (slots > table_.size()) rehash(slots);
}

void GraphBuilder::grow_table() { rehash(std::max<size_t>(64, 2 * table_.size())); }

void GraphBuilder::rehash(size_t slots) {
  table_.assign(slots, kNoNode);
  const size_t mask = table_.size() - 1;
  for (NodeId id = 0; id < hashes_.size(); ++id) {
    size_t i = hashes_[id] & mask;
    while (table_[i] != kNoNode) i = (i + 1) & mask;
    table_[i] = id;
  }
}

NodeId GraphBuilder::intern(const Node& node) {
  if (2 * (graph_.nodes.size() + 1) > table_.size()) grow_table();
  const uint32_t hash = node_hash(node);
  const size_t mask = table_.size() - 1;
  size_t i = hash & mask;
  for (; table_[i] != kNoNode; i = (i + 1) & mask)
    if (hashes_[table_[i]] == hash && same_node(graph_.nodes[table_[i]], node)) return table_[i];
  const NodeId id = static_cast<NodeId>(graph_.nodes.size());
  table_[i] = id;
  hashes_.push_back(hash);
  graph_.nodes.push_back(node);
  return id;
}

NodeId GraphBuilder::constant(double value) {
  Node n;
  n.op = Op::Const;
  n.value = value;
  return intern(n);
}

NodeId GraphBuilder::boolean(bool value) {
  Node n;
  n.op = Op::Const;
  n.type = Type::Bool;
  n.value = value ? 1.0 : 0.0;
  return intern(n);
}

NodeId GraphBuilder::input(InputRef ref) {
  Node n;
  n.op = Op::Input;
  n.input = ref;
  return intern(n);
}

NodeId GraphBuilder::fold(Op op, const NodeId* args, int arity, int32_t int_attr) {
  double v[3] = {0, 0, 0};
  for (int i = 0; i < arity; ++i) v[i] = graph_.nodes[args[i]].value;
  const double r = eval_op(op, v[0], v[1], v[2], int_attr);
  return info(op).result == Type::Bool ? boolean(r != 0.0) : constant(r);
}

NodeId GraphBuilder::make(Op op, NodeId a, NodeId b, NodeId c, int32_t int_attr) {
  const OpInfo& oi = info(op);
  if (op == Op::Const || op == Op::Input)
    throw std::logic_error("GraphBuilder::make: use constant() or input() for leaves");
  NodeId args[3] = {a, b, c};
  for (int i = 0; i < 3; ++i) {
    const bool wanted = i < oi.arity;
    if (wanted != (args[i] != kNoNode))
      throw std::logic_error("GraphBuilder::make: " + std::string(oi.name) + " takes " +
                             std::to_string(oi.arity) + " arguments");
    if (!wanted) continue;
    if (args[i] >= graph_.nodes.size())
      throw std::logic_error("GraphBuilder::make: argument id out of range");
    if (graph_.nodes[args[i]].type != oi.args[i])
      throw std::logic_error("GraphBuilder::make: argument " + std::to_string(i) + " of " +
                             std::string(oi.name) + " must be " +
                             std::string(type_name(oi.args[i])));
  }
  if (op != Op::Powi && int_attr != 0)
    throw std::logic_error("GraphBuilder::make: only powi has an integer attribute");

  if (options_.fold_constants &&
      std::all_of(args, args + oi.arity, [&](NodeId id) { return graph_.nodes[id].is_const(); }))
    return fold(op, args, oi.arity, int_attr);

  // Commutative ops keep constants on the right and otherwise order arguments by id, so
  // a*b and b*a are one node and rules need only match constants on the right.
  if (oi.commutative) {
    const bool a_const = graph_.nodes[args[0]].is_const();
    const bool b_const = graph_.nodes[args[1]].is_const();
    if ((a_const && !b_const) || (a_const == b_const && args[0] > args[1]))
      std::swap(args[0], args[1]);
  }

  Node n;
  n.op = op;
  n.type = oi.result;
  n.num_args = oi.arity;
  std::copy(args, args + 3, n.args);
  n.int_attr = int_attr;

  if (options_.rewrite) {
    if (NodeId r = rewrite(*this, n, options_.assumptions); r != kNoNode) return r;
  }
  return intern(n);
}

void GraphBuilder::add_output(Output output) {
  if (output.node >= graph_.nodes.size())
    throw std::logic_error("GraphBuilder::add_output: node id out of range");
  if (graph_.nodes[output.node].type != Type::F64)
    throw std::logic_error("GraphBuilder::add_output: outputs must be f64");
  graph_.outputs.push_back(output);
}

Graph GraphBuilder::finish() {
  Graph g = std::move(graph_);
  graph_ = Graph{};
  table_.clear();
  hashes_.clear();
  return g;
}

std::vector<bool> live_nodes(const Graph& graph) {
  std::vector<bool> live(graph.size(), false);
  for (const Output& o : graph.outputs) live[o.node] = true;
  for (size_t i = graph.size(); i-- > 0;) {
    if (!live[i]) continue;
    const Node& n = graph.nodes[i];
    for (int k = 0; k < n.num_args; ++k) live[n.args[k]] = true;
  }
  return live;
}

Graph rebuild(const Graph& graph, GraphBuilder::Options options, const RebuildHooks& hooks) {
  std::vector<bool> live = live_nodes(graph);
  GraphBuilder builder(options);
  builder.reserve(graph.size());
  std::vector<NodeId> map(graph.size(), kNoNode);
  for (NodeId i = 0; i < graph.size(); ++i) {
    const Node& n = graph.nodes[i];
    const bool keep_input =
        n.op == Op::Input && n.input.kind != InputKind::Tangent;  // inputs never disappear
    if (!live[i] && !keep_input) continue;
    builder.options().assumptions =
        hooks.assumptions_for ? hooks.assumptions_for(i) : options.assumptions;
    switch (n.op) {
      case Op::Const:
        map[i] = n.type == Type::Bool ? builder.boolean(n.value != 0.0) : builder.constant(n.value);
        break;
      case Op::Input: {
        NodeId r = hooks.replace_input ? hooks.replace_input(n, builder) : kNoNode;
        map[i] = r != kNoNode ? r : builder.input(n.input);
        break;
      }
      default: {
        NodeId a[3] = {kNoNode, kNoNode, kNoNode};
        for (int k = 0; k < n.num_args; ++k) a[k] = map[n.args[k]];
        map[i] = builder.make(n.op, a[0], a[1], a[2], n.int_attr);
      }
    }
  }
  for (Output o : graph.outputs) {
    o.node = map[o.node];
    builder.add_output(o);
  }
  // The builder may have appended nodes that the rules then made dead; one more pass
  // without rewriting drops them and keeps ids dense and ordered.
  Graph out = builder.finish();
  std::vector<bool> live2 = live_nodes(out);
  bool all_live = true;
  for (NodeId i = 0; i < out.size(); ++i)
    if (!live2[i] && !(out.nodes[i].op == Op::Input)) all_live = false;
  if (all_live) return out;
  GraphBuilder::Options plain{.fold_constants = false, .rewrite = false};
  return rebuild(out, plain);
}

}  // namespace lsjit::ir
