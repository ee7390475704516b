// The lsjit IR: a hash-consed SSA graph of scalar ops, plus the signature of the cost it
// computes.
//
// Nodes live in one vector in topological order (every argument has a smaller id than its
// user) and are never mutated once made; passes build a new graph. A Node's NodeId is its
// index. Identical (op, args, attributes) are one node: GraphBuilder::make looks every new
// node up before appending it, after constant folding and the rewrite rules of
// simplify_rules.h.
//
// Inputs are Input nodes tagged with what they read at run time:
//   Var     component `component` of the ambient parameters of variable slot `slot`
//   Data    component `component` of data slot `slot` (flattened in Eigen storage order)
//   Tangent component `component` of the tangent perturbation delta of variable slot `slot`;
//           present only until differentiation substitutes delta = 0.
// Outputs are named by role: residual `res[row]`, or Jacobian `J[var](row, col)` (col is the
// tangent component); at stage normal_equations the cost `cost`, gradient `g[var](row)` and
// Gauss-Newton block `H[var,var2](row, col)` (see Output).
//
// Every invariant of a Trace (these, the op table's, the signature's and the stage rules
// below) is written down and checked in verify.h; every pass verifies its output.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lsjit/ir/op.h"

namespace lsjit::ir {

using NodeId = uint32_t;
constexpr NodeId kNoNode = 0xffffffffu;

enum class InputKind : uint8_t { Var, Data, Tangent };

struct InputRef {
  InputKind kind = InputKind::Var;
  uint32_t slot = 0;
  uint32_t component = 0;
  bool operator==(const InputRef&) const = default;
};

struct Node {
  Op op = Op::Const;
  Type type = Type::F64;
  uint8_t num_args = 0;
  NodeId args[3] = {kNoNode, kNoNode, kNoNode};
  double value = 0.0;  // Const: the value (bool constants are 0 or 1)
  int32_t int_attr = 0;  // Powi: the exponent
  InputRef input;        // Input: what it reads

  bool is_const() const { return op == Op::Const; }
  bool is_const(double v) const { return op == Op::Const && type == Type::F64 && value == v; }
};

enum class OutputRole : uint8_t { Residual, Jacobian, Cost, Gradient, Hessian };

// What an output is, by role (fields a role does not use are 0):
//   Residual  res[row]
//   Jacobian  J[var](row, col)         ∂res[row]/∂δ_var[col]
//   Cost      cost                     ½‖r‖² (row 0)
//   Gradient  g[var](row)              (J_varᵀ r)[row], row < tangent of var
//   Hessian   H[var,var2](row, col)    (J_varᵀ J_var2)[row, col], var <= var2 (slot order),
//                                      row < tangent of var, col < tangent of var2
// var2 comes last so that the aggregate initializers {role, row, var, col, node} of the
// other roles keep their meaning.
struct Output {
  OutputRole role = OutputRole::Residual;
  uint32_t row = 0;
  uint32_t var = 0;  // Jacobian, Gradient, Hessian: variable slot
  uint32_t col = 0;  // Jacobian: tangent component of var; Hessian: tangent component of var2
  NodeId node = kNoNode;
  uint32_t var2 = 0;  // Hessian: the second variable slot (var <= var2)
  bool operator==(const Output&) const = default;
};

enum class CostKind : uint8_t { LeastSquares, Equality, InequalityLe, InequalityGe };
std::string_view cost_kind_name(CostKind kind);
// The kind named `name` (as cost_kind_name prints it), or nullopt.
std::optional<CostKind> cost_kind_from_name(std::string_view name);

struct VarSlot {
  std::string name;  // as printed: a, b, ... unless given
  std::string type;  // SE3, VecVar3, ...
  uint32_t ambient = 0;
  uint32_t tangent = 0;
  bool operator==(const VarSlot&) const = default;
};

struct DataSlot {
  std::string name;
  std::string type;  // f64, Mat3x3, SE3, ...
  uint32_t rows = 1, cols = 1;
  uint32_t size() const { return rows * cols; }
  bool operator==(const DataSlot&) const = default;
};

// The static interface of a cost: what the graph reads and writes.
struct Signature {
  std::string name;
  CostKind kind = CostKind::LeastSquares;
  std::vector<VarSlot> vars;
  std::vector<DataSlot> data;
  uint32_t residual_dim = 0;
  bool operator==(const Signature&) const = default;
};

// Which rewrite rules may assume more than IEEE 754 guarantees (see simplify_rules.h).
enum Assumption : uint32_t {
  kAssumeNothing = 0,
  kAssumeFinite = 1u << 0,        // no value is NaN or infinite, no op over- or underflows:
                                  // x*0 -> 0, x-x -> 0, x/x -> 1
  kIgnoreSignedZero = 1u << 1,    // -0 and +0 are interchangeable: x+0 -> x, 0-x -> -x
};

struct Graph {
  std::vector<Node> nodes;
  std::vector<Output> outputs;

  const Node& operator[](NodeId id) const { return nodes[id]; }
  size_t size() const { return nodes.size(); }
  // Nodes that compute something: not Const, not Input.
  size_t op_count() const;
  bool operator==(const Graph& other) const;
};

// A cost at one stage of the pipeline. Besides the invariants of every graph (verify.h),
// each stage has its rules, checked by verify() and by the parser:
//   Traced      what the tracer records: residual outputs only; Tangent inputs allowed
//               (they are how the retraction x ⊞ δ was traced).
//   Simplified  simplify_residual(): residual outputs only; no Tangent input nodes.
//   Jacobian    differentiate(): no Tangent input nodes; exactly one output J[var](row, col)
//               for every variable slot, residual row and tangent column (structural zeros
//               are outputs of const 0), plus every residual.
//   NormalEquations  normal_equations() (normal_equations.h): no Tangent input nodes; the
//               outputs are exactly one Cost, one Gradient g[v](a) for every variable slot v
//               and a < T_v, and one Hessian H[v,w](a, b) for every pair of slots v <= w,
//               a < T_v and b < T_w (structural zeros are outputs of const 0); no residual
//               and no Jacobian outputs.
// At every stage but normal_equations each residual row has exactly one output.
enum class Stage : uint8_t { Traced, Simplified, Jacobian, NormalEquations };
std::string_view stage_name(Stage stage);
// The stage named `name` (as stage_name prints it), or nullopt.
std::optional<Stage> stage_from_name(std::string_view name);
constexpr bool stage_allows_tangent_inputs(Stage stage) { return stage == Stage::Traced; }
constexpr bool stage_has_residual(Stage stage) { return stage != Stage::NormalEquations; }
constexpr bool stage_has_jacobian(Stage stage) { return stage == Stage::Jacobian; }
constexpr bool stage_has_normal_equations(Stage stage) {
  return stage == Stage::NormalEquations;
}
// The outputs a stage has: Residual and Jacobian, or Cost, Gradient and Hessian.
constexpr bool stage_has_role(Stage stage, OutputRole role) {
  switch (role) {
    case OutputRole::Residual: return stage_has_residual(stage);
    case OutputRole::Jacobian: return stage_has_jacobian(stage);
    case OutputRole::Cost:
    case OutputRole::Gradient:
    case OutputRole::Hessian: return stage_has_normal_equations(stage);
  }
  return false;
}

struct Trace {
  Signature signature;
  Stage stage = Stage::Traced;
  Graph graph;
};

// Builds a Graph node by node. make() checks the op's invariants (arity, argument types,
// argument ids in range), folds constants, applies the rewrite rules allowed by `rules`,
// and returns the id of an existing identical node when there is one.
class GraphBuilder {
 public:
  struct Options {
    bool fold_constants = true;
    bool rewrite = true;         // apply the rule table
    uint32_t assumptions = kAssumeNothing;
  };
  GraphBuilder() = default;
  explicit GraphBuilder(Options options) : options_(options) {}

  NodeId constant(double value);
  NodeId boolean(bool value);
  NodeId input(InputRef ref);
  NodeId make(Op op, NodeId a = kNoNode, NodeId b = kNoNode, NodeId c = kNoNode,
              int32_t int_attr = 0);

  // Room for `nodes` nodes without growing the node array or the index: a pass that
  // knows about how many nodes it makes saves the copies and rehashes of growing.
  void reserve(size_t nodes);

  const Node& operator[](NodeId id) const { return graph_.nodes[id]; }
  size_t size() const { return graph_.nodes.size(); }
  Options& options() { return options_; }

  void add_output(Output output);
  // Hands over the graph; the builder is empty afterwards.
  Graph finish();

 private:
  NodeId intern(const Node& node);
  NodeId fold(Op op, const NodeId* args, int arity, int32_t int_attr);

  Options options_;
  Graph graph_;
  // The identical-node index: open addressing over node ids, linear probing, at most half
  // full; a slot holds kNoNode or a node's id, and hashes_[id] is that node's hash. A
  // cold differentiation interns tens of thousands of nodes: through std::unordered_map
  // (a heap entry per node, a chained lookup) interning would be a large part of its time.
  std::vector<NodeId> table_;
  std::vector<uint32_t> hashes_;
  void grow_table();
  void rehash(size_t slots);  // a power of two, at least twice the nodes
};

// Rebuilds `graph` through a builder with `options`, keeping only what the outputs need
// (dead-code elimination) plus every Var and Data input, so a graph's inputs never
// disappear. This is how every pass that simplifies works: nodes are re-made in order, so
// folding and rules see already-rebuilt arguments.
//   replace_input  (may be empty) returns a replacement for an Input node, or kNoNode to
//                  keep it; the differentiation pass uses it to substitute delta = 0.
//   assumptions_for (may be empty) gives the rule assumptions for rebuilding one old node.
struct RebuildHooks {
  std::function<NodeId(const Node& input, GraphBuilder& builder)> replace_input;
  std::function<uint32_t(NodeId old_node)> assumptions_for;
};
Graph rebuild(const Graph& graph, GraphBuilder::Options options, const RebuildHooks& hooks = {});

// Marks nodes reachable from the outputs.
std::vector<bool> live_nodes(const Graph& graph);

}  // namespace lsjit::ir
