#include "lsjit/ir/verify.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <tuple>

#include "lsjit/common/error.h"

namespace lsjit::ir {
namespace {

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// A violated rule: "expected WHAT, found WHAT".
struct Problem {
  std::string expected, found;
};

std::optional<Problem> signature_problem(const Signature& sig, ResidualDim residual_dim) {
  if (!is_cost_name(sig.name))
    return Problem{"a cost name of letters, digits, '_', '.' and '-'", quoted(sig.name)};
  if (residual_dim == ResidualDim::Required && sig.residual_dim == 0)
    return Problem{"at least 1 residual", "residual_dim 0"};
  std::map<std::string_view, size_t> seen;
  for (size_t i = 0; i < sig.vars.size(); ++i) {
    const VarSlot& v = sig.vars[i];
    const std::string slot = "variable slot " + std::to_string(i);
    if (!is_identifier(v.name))
      return Problem{"variable names that are identifiers ([A-Za-z_][A-Za-z0-9_]*)",
                     quoted(v.name) + " (" + slot + ")"};
    if (auto [it, inserted] = seen.try_emplace(v.name, i); !inserted)
      return Problem{"unique variable names", quoted(v.name) + " for variable slots " +
                                                  std::to_string(it->second) + " and " +
                                                  std::to_string(i)};
    if (!is_type_name(v.type))
      return Problem{"a type name without whitespace or '#' for variable " + quoted(v.name),
                     quoted(v.type)};
    if (v.ambient == 0 || v.tangent == 0)
      return Problem{"ambient and tangent dimensions of at least 1 for variable " +
                         quoted(v.name),
                     "ambient=" + std::to_string(v.ambient) +
                         " tangent=" + std::to_string(v.tangent)};
  }
  seen.clear();
  for (size_t i = 0; i < sig.data.size(); ++i) {
    const DataSlot& d = sig.data[i];
    const std::string slot = "data slot " + std::to_string(i);
    if (!is_identifier(d.name))
      return Problem{"data names that are identifiers ([A-Za-z_][A-Za-z0-9_]*)",
                     quoted(d.name) + " (" + slot + ")"};
    if (auto [it, inserted] = seen.try_emplace(d.name, i); !inserted)
      return Problem{"unique data names", quoted(d.name) + " for data slots " +
                                              std::to_string(it->second) + " and " +
                                              std::to_string(i)};
    if (!is_type_name(d.type))
      return Problem{"a type name without whitespace or '#' for data " + quoted(d.name),
                     quoted(d.type)};
    if (d.rows == 0 || d.cols == 0 || uint64_t{d.rows} * d.cols > UINT32_MAX)
      return Problem{"rows and cols of at least 1 and rows*cols below 2^32 for data " +
                         quoted(d.name),
                     "rows=" + std::to_string(d.rows) + " cols=" + std::to_string(d.cols)};
  }
  return std::nullopt;
}

std::string node_ref(NodeId id) { return "%" + std::to_string(id); }

class Verifier {
 public:
  explicit Verifier(const Trace& trace) : t_(trace), sig_(trace.signature), g_(trace.graph) {}

  void run() {
    if (auto p = signature_problem(sig_, ResidualDim::Required))
      fail("signature", "the signature", p->expected, p->found);
    if (static_cast<int>(t_.stage) > static_cast<int>(Stage::NormalEquations))
      fail("stage", "the trace", "traced, simplified, jacobian or normal_equations",
           "stage #" + std::to_string(static_cast<int>(t_.stage)));
    for (NodeId i = 0; i < g_.size(); ++i) node(i);
    for (size_t k = 0; k < g_.outputs.size(); ++k) output(k);
    whole_outputs();
  }

 private:
  [[noreturn]] void fail(std::string_view invariant, const std::string& at,
                         const std::string& expected, const std::string& found) const {
    throw std::logic_error("lsjit::ir::verify: cost " + quoted(sig_.name) + " at stage " +
                           std::string(stage_name(t_.stage)) + " violates " +
                           std::string(invariant) + ": " + at + ": expected " + expected +
                           ", found " + found);
  }

  void node(NodeId i) {
    const Node& n = g_.nodes[i];
    const int op_index = static_cast<int>(n.op);
    if (op_index >= kNumOps)
      fail("op table", "node " + node_ref(i), "an op of the op table",
           "op #" + std::to_string(op_index));
    const OpInfo& oi = info(n.op);
    // Messages are built only on failure: this runs on every node of every pass's output.
    const auto at = [&] { return "node " + node_ref(i) + " (" + std::string(oi.name) + ")"; };
    const bool leaf = n.op == Op::Const || n.op == Op::Input;

    // Arity, and that unused argument slots are empty.
    bool args_ok = n.num_args == oi.arity;
    for (int k = oi.arity; k < 3; ++k) args_ok = args_ok && n.args[k] == kNoNode;
    if (!args_ok) {
      std::string found = std::to_string(n.num_args) + " argument(s), args =";
      for (NodeId a : n.args) found += " " + (a == kNoNode ? std::string("none") : node_ref(a));
      fail(leaf ? "leaves" : "arity", at(),
           leaf ? std::string("no arguments")
                : std::to_string(oi.arity) + " argument(s) and no others",
           found);
    }
    for (int k = 0; k < oi.arity; ++k) {
      const NodeId a = n.args[k];
      const auto which = [&] { return "argument " + std::to_string(k + 1); };
      if (a >= i)
        fail("topological order", at(), which() + " to be a node before " + node_ref(i),
             a == kNoNode ? std::string("no node") : node_ref(a));
      if (g_.nodes[a].type != oi.args[k])
        fail("argument types", at(), which() + " of type " + std::string(type_name(oi.args[k])),
             node_ref(a) + " of type " + type_label(g_.nodes[a].type));
    }

    // Result type.
    if (n.op == Op::Const) {
      if (n.type != Type::F64 && n.type != Type::Bool)
        fail("result type", at(), "type f64 or bool", "type " + type_label(n.type));
      if (n.type == Type::Bool && n.value != 0.0 && n.value != 1.0)
        fail("result type", at(), "a bool constant of value 0 or 1",
             "value " + std::to_string(n.value));
    } else if (n.type != oi.result) {
      fail("result type", at(), "type " + std::string(type_name(oi.result)),
           "type " + type_label(n.type));
    }

    if (n.op != Op::Powi && n.int_attr != 0)
      fail("int attribute", at(), "int_attr 0 (only powi has an integer attribute)",
           "int_attr " + std::to_string(n.int_attr));
    if (n.op != Op::Const && std::bit_cast<uint64_t>(n.value) != 0)
      fail("unused fields", at(), "value +0 (only a const has a value)",
           "value " + std::to_string(n.value));
    if (n.op != Op::Input && !(n.input == InputRef{}))
      fail("unused fields", at(), "the default input reference (only an input has one)",
           "kind #" + std::to_string(static_cast<int>(n.input.kind)) + " slot " +
               std::to_string(n.input.slot) + " component " +
               std::to_string(n.input.component));

    if (n.op == Op::Input) input(at, n.input);
  }

  // `at` returns the node's label for a message.
  template <class At>
  void input(const At& at, const InputRef& in) {
    // `what` and `name` make the bound's explanation: "ambient dimension of " + a name.
    const auto component = [&](std::string_view kind, uint32_t bound, std::string_view what,
                               const std::string& name) {
      if (in.component >= bound)
        fail("input range", at(),
             std::string(kind) + " component below " + std::to_string(bound) + " (" +
                 std::string(what) + name + ")",
             "component " + std::to_string(in.component));
    };
    switch (in.kind) {
      case InputKind::Var:
      case InputKind::Tangent: {
        const bool is_var = in.kind == InputKind::Var;
        const char* kind = is_var ? "var" : "tangent";
        if (in.slot >= sig_.vars.size())
          fail("input range", at(),
               std::string(kind) + " slot below " + std::to_string(sig_.vars.size()) +
                   " (the number of variables)",
               "slot " + std::to_string(in.slot));
        const VarSlot& v = sig_.vars[in.slot];
        if (is_var)
          component(kind, v.ambient, "ambient dimension of ", v.name);
        else
          component(kind, v.tangent, "tangent dimension of ", v.name);
        if (!is_var && !stage_allows_tangent_inputs(t_.stage))
          fail("stage rules", at(),
               "no tangent input at stage " + std::string(stage_name(t_.stage)) +
                   " (only traced has them)",
               "input tangent " + v.name + "[" + std::to_string(in.component) + "]");
        return;
      }
      case InputKind::Data: {
        if (in.slot >= sig_.data.size())
          fail("input range", at(),
               "data slot below " + std::to_string(sig_.data.size()) +
                   " (the number of data slots)",
               "slot " + std::to_string(in.slot));
        const DataSlot& d = sig_.data[in.slot];
        component("data", d.size(), "rows*cols of ", d.name);
        return;
      }
    }
    fail("input range", at(), "an input kind var, data or tangent",
         "kind #" + std::to_string(static_cast<int>(in.kind)));
  }

  void output(size_t k) {
    const Output& o = g_.outputs[k];
    const auto at = [&] { return "output " + std::to_string(k) + " (" + output_name(sig_, o) + ")"; };
    if (o.node >= g_.size())
      fail("output node", at(), "a node below " + node_ref(static_cast<NodeId>(g_.size())),
           o.node == kNoNode ? std::string("no node") : node_ref(o.node));
    if (g_.nodes[o.node].type != Type::F64)
      fail("output node", at(), "an f64 node",
           node_ref(o.node) + " of type " + type_label(g_.nodes[o.node].type));
    if (static_cast<int>(o.role) > static_cast<int>(OutputRole::Hessian))
      fail("output node", at(), "role residual, jacobian, cost, gradient or hessian",
           "role #" + std::to_string(static_cast<int>(o.role)));
    if (!stage_has_role(t_.stage, o.role))
      fail("stage rules", at(),
           stage_has_normal_equations(t_.stage)
               ? std::string("only cost, g and H outputs at stage normal_equations")
           : stage_has_jacobian(t_.stage)
               ? std::string("only residual and Jacobian outputs at stage jacobian")
               : "residual outputs only at stage " + std::string(stage_name(t_.stage)),
           std::string(role_label(o.role)) + " output");
    const auto number = [](std::string_view field, uint32_t value) {
      return std::string(field) + " " + std::to_string(value);
    };
    // The fields a role does not use must be 0; `found` makes the message.
    const auto zero = [&](std::string_view invariant, std::string_view expected, bool ok,
                          const auto& found) {
      if (!ok) fail(invariant, at(), std::string(expected), found());
    };
    const auto row_below_residuals = [&](std::string_view invariant) {
      if (o.row >= sig_.residual_dim)
        fail(invariant, at(),
             "a row below " + std::to_string(sig_.residual_dim) + " (residual_dim " +
                 std::to_string(sig_.residual_dim) + ")",
             number("row", o.row));
    };
    // A variable slot in range, for the roles that name one.
    const auto slot = [&](std::string_view invariant, std::string_view field,
                          uint32_t var) -> const VarSlot& {
      if (var >= sig_.vars.size())
        fail(invariant, at(), "a variable slot below " + std::to_string(sig_.vars.size()),
             number(field, var));
      return sig_.vars[var];
    };
    // A tangent index of `v`: `what` is "row" or "column", `field` the Output field.
    const auto tangent_index = [&](std::string_view invariant, std::string_view what,
                                   std::string_view field, const VarSlot& v, uint32_t value) {
      if (value >= v.tangent)
        fail(invariant, at(),
             "a " + std::string(what) + " below " + std::to_string(v.tangent) +
                 " (tangent dimension of " + v.name + ")",
             number(field, value));
    };
    switch (o.role) {
      case OutputRole::Residual:
        zero("residual output", "var 0 and col 0 on a residual output", o.var == 0 && o.col == 0,
             [&] { return number("var", o.var) + " " + number("col", o.col); });
        zero("residual output", "var2 0 on a residual output", o.var2 == 0,
             [&] { return number("var2", o.var2); });
        row_below_residuals("residual output");
        return;
      case OutputRole::Jacobian: {
        zero("jacobian output", "var2 0 on a Jacobian output", o.var2 == 0,
             [&] { return number("var2", o.var2); });
        const VarSlot& v = slot("jacobian output", "var", o.var);
        row_below_residuals("jacobian output");
        tangent_index("jacobian output", "column", "col", v, o.col);
        return;
      }
      case OutputRole::Cost:
        zero("cost output", "row 0, var 0, col 0 and var2 0 on the cost output",
             o.row == 0 && o.var == 0 && o.col == 0 && o.var2 == 0, [&] {
               return number("row", o.row) + " " + number("var", o.var) + " " +
                      number("col", o.col) + " " + number("var2", o.var2);
             });
        return;
      case OutputRole::Gradient: {
        zero("gradient output", "col 0 and var2 0 on a gradient output",
             o.col == 0 && o.var2 == 0,
             [&] { return number("col", o.col) + " " + number("var2", o.var2); });
        const VarSlot& v = slot("gradient output", "var", o.var);
        tangent_index("gradient output", "row", "row", v, o.row);
        return;
      }
      case OutputRole::Hessian: {
        const VarSlot& v = slot("hessian output", "var", o.var);
        const VarSlot& w = slot("hessian output", "var2", o.var2);
        if (o.var > o.var2)
          fail("hessian output", at(), "var <= var2 (H[v,w] only for v <= w in slot order)",
               number("var", o.var) + " " + number("var2", o.var2));
        tangent_index("hessian output", "row", "row", v, o.row);
        tangent_index("hessian output", "column", "col", w, o.col);
        return;
      }
    }
  }

  static std::string_view role_label(OutputRole role) {
    switch (role) {
      case OutputRole::Residual: return "a residual";
      case OutputRole::Jacobian: return "a Jacobian";
      case OutputRole::Cost: return "a cost";
      case OutputRole::Gradient: return "a gradient";
      case OutputRole::Hessian: return "a Hessian";
    }
    return "an unknown";
  }

  void whole_outputs() {
    using Key = std::tuple<OutputRole, uint32_t, uint32_t, uint32_t, uint32_t, size_t>;
    std::vector<Key> keys;
    keys.reserve(g_.outputs.size());
    for (size_t k = 0; k < g_.outputs.size(); ++k) {
      const Output& o = g_.outputs[k];
      keys.emplace_back(o.role, o.var, o.var2, o.row, o.col, k);
    }
    std::sort(keys.begin(), keys.end());
    for (size_t i = 1; i < keys.size(); ++i) {
      const auto& [role, var, var2, row, col, k] = keys[i];
      const auto& [role0, var0, var20, row0, col0, k0] = keys[i - 1];
      if (std::tie(role, var, var2, row, col) == std::tie(role0, var0, var20, row0, col0)) {
        const size_t first = std::min(k, k0), second = std::max(k, k0);
        fail("unique outputs",
             "output " + std::to_string(second) + " (" + output_name(sig_, g_.outputs[second]) +
                 ")",
             "each output target once", "a second output for it (the first is output " +
                                             std::to_string(first) + ")");
      }
    }
    if (const auto missing = first_missing_output(sig_, t_.stage, g_.outputs)) {
      const bool residual = missing->role == OutputRole::Residual;
      fail(residual ? "residual rows" : "stage rules", "the outputs",
           "an output for " + required_outputs(missing->role),
           "no output " + output_name(sig_, *missing));
    }
  }

  static std::string required_outputs(OutputRole role) {
    switch (role) {
      case OutputRole::Residual: return "every residual row";
      case OutputRole::Jacobian: return "every J[var](row, col) at stage jacobian";
      case OutputRole::Cost: return "the cost at stage normal_equations";
      case OutputRole::Gradient: return "every g[var](row) at stage normal_equations";
      case OutputRole::Hessian:
        return "every H[var,var2](row, col) with var <= var2 at stage normal_equations";
    }
    return "every required target";
  }

  static std::string type_label(Type type) {
    if (type == Type::F64 || type == Type::Bool) return std::string(type_name(type));
    return "#" + std::to_string(static_cast<int>(type));
  }

  const Trace& t_;
  const Signature& sig_;
  const Graph& g_;
};

}  // namespace

bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return is_alnum(c) || c == '_'; });
}

bool is_cost_name(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return is_alnum(c) || c == '_' || c == '.' || c == '-';
  });
}

bool is_type_name(std::string_view s) {
  return !s.empty() && s.find_first_of(" \t\r\n\v\f#") == std::string_view::npos;
}

std::string quoted(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f) {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      out += buf;
    }
  }
  return out + "'";
}

std::string output_name(const Signature& sig, const Output& o) {
  const auto var = [&sig](uint32_t slot) {
    return slot < sig.vars.size() && !sig.vars[slot].name.empty() ? sig.vars[slot].name
                                                                  : "#" + std::to_string(slot);
  };
  switch (o.role) {
    case OutputRole::Jacobian:
      return "J[" + var(o.var) + "](" + std::to_string(o.row) + "," + std::to_string(o.col) + ")";
    case OutputRole::Cost: return "cost";
    case OutputRole::Gradient: return "g[" + var(o.var) + "](" + std::to_string(o.row) + ")";
    case OutputRole::Hessian:
      return "H[" + var(o.var) + "," + var(o.var2) + "](" + std::to_string(o.row) + "," +
             std::to_string(o.col) + ")";
    case OutputRole::Residual: break;
  }
  return "res[" + std::to_string(o.row) + "]";
}

namespace {

// The first index missing from `present`, all of whose entries are below the count of
// indexes (sorted and deduplicated here); the count when none is missing.
uint64_t first_gap(std::vector<uint64_t>& present) {
  std::sort(present.begin(), present.end());
  present.erase(std::unique(present.begin(), present.end()), present.end());
  uint64_t i = 0;
  while (i < present.size() && present[i] == i) ++i;
  return i;
}

// At stage normal_equations: the cost, then g[v](a) by v, a, then H[v,w](a, b) by v, w, a, b.
std::optional<Output> first_missing_normal_equation(const Signature& sig,
                                                    const std::vector<Output>& outputs) {
  const size_t n = sig.vars.size();
  // g[v](a) is entry g_offset[v] + a; H[v,w](a, b) is entry h_offset[pair(v, w)] + a*T_w + b,
  // pairs (v, w >= v) numbered in row-major order.
  std::vector<uint64_t> g_offset(n + 1, 0), h_offset(1, 0), pair_start(n + 1, 0);
  for (size_t v = 0; v < n; ++v) {
    g_offset[v + 1] = g_offset[v] + sig.vars[v].tangent;
    pair_start[v + 1] = pair_start[v] + (n - v);
    for (size_t w = v; w < n; ++w)
      h_offset.push_back(h_offset.back() + uint64_t{sig.vars[v].tangent} * sig.vars[w].tangent);
  }
  bool has_cost = false;
  std::vector<uint64_t> gradient, hessian;
  for (const Output& o : outputs) {
    if (o.role == OutputRole::Cost) {
      has_cost = true;
    } else if (o.role == OutputRole::Gradient && o.var < n && o.row < sig.vars[o.var].tangent) {
      gradient.push_back(g_offset[o.var] + o.row);
    } else if (o.role == OutputRole::Hessian && o.var <= o.var2 && o.var2 < n &&
               o.row < sig.vars[o.var].tangent && o.col < sig.vars[o.var2].tangent) {
      const uint64_t pair = pair_start[o.var] + (o.var2 - o.var);
      hessian.push_back(h_offset[pair] + uint64_t{o.row} * sig.vars[o.var2].tangent + o.col);
    }
  }
  if (!has_cost) return Output{OutputRole::Cost, 0, 0, 0, kNoNode};
  if (const uint64_t j = first_gap(gradient); j < g_offset.back()) {
    const auto v = static_cast<uint32_t>(
        std::upper_bound(g_offset.begin(), g_offset.end(), j) - g_offset.begin() - 1);
    return Output{OutputRole::Gradient, static_cast<uint32_t>(j - g_offset[v]), v, 0, kNoNode};
  }
  const uint64_t j = first_gap(hessian);
  if (j >= h_offset.back()) return std::nullopt;
  const auto pair = static_cast<size_t>(
      std::upper_bound(h_offset.begin(), h_offset.end(), j) - h_offset.begin() - 1);
  const auto v = static_cast<uint32_t>(
      std::upper_bound(pair_start.begin(), pair_start.end(), pair) - pair_start.begin() - 1);
  const auto w = static_cast<uint32_t>(v + (pair - pair_start[v]));
  const uint64_t within = j - h_offset[pair];
  const uint32_t tw = sig.vars[w].tangent;
  return Output{OutputRole::Hessian, static_cast<uint32_t>(within / tw), v,
                static_cast<uint32_t>(within % tw), kNoNode, w};
}

}  // namespace

std::optional<Output> first_missing_output(const Signature& sig, Stage stage,
                                           const std::vector<Output>& outputs) {
  if (stage_has_normal_equations(stage)) return first_missing_normal_equation(sig, outputs);
  const uint32_t rows = sig.residual_dim;
  // J[var](row, col) is entry offset[var] + row * tangent + col of one enumeration.
  std::vector<uint64_t> offset(sig.vars.size() + 1, 0);
  for (size_t s = 0; s < sig.vars.size(); ++s)
    offset[s + 1] = offset[s] + uint64_t{rows} * sig.vars[s].tangent;
  std::vector<uint64_t> residuals, jacobian;
  for (const Output& o : outputs) {
    if (o.row >= rows) continue;
    if (o.role == OutputRole::Residual) {
      residuals.push_back(o.row);
    } else if (o.role == OutputRole::Jacobian && o.var < sig.vars.size() &&
               o.col < sig.vars[o.var].tangent) {
      jacobian.push_back(offset[o.var] + uint64_t{o.row} * sig.vars[o.var].tangent + o.col);
    }
  }
  if (const uint64_t r = first_gap(residuals); r < rows)
    return Output{OutputRole::Residual, static_cast<uint32_t>(r), 0, 0, kNoNode};
  if (!stage_has_jacobian(stage)) return std::nullopt;
  const uint64_t j = first_gap(jacobian);
  if (j >= offset.back()) return std::nullopt;
  // The last slot whose range starts at or before j (slots of tangent 0 have empty ranges).
  const size_t s = static_cast<size_t>(std::upper_bound(offset.begin(), offset.end(), j) -
                                       offset.begin() - 1);
  const uint64_t within = j - offset[s];
  const uint32_t tangent = sig.vars[s].tangent;
  return Output{OutputRole::Jacobian, static_cast<uint32_t>(within / tangent),
                static_cast<uint32_t>(s), static_cast<uint32_t>(within % tangent), kNoNode};
}

void verify(const Trace& trace) { Verifier(trace).run(); }

void verify_signature(const Signature& signature, ResidualDim residual_dim) {
  if (auto p = signature_problem(signature, residual_dim))
    throw Error("lsjit: cost " + quoted(signature.name) + ": expected " + p->expected +
                ", found " + p->found);
}

}  // namespace lsjit::ir
