#include "lsjit/ir/printer.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "lsjit/ir/structural_hash.h"

namespace lsjit::ir {
namespace {

constexpr uint64_t kDefaultNan = 0x7ff8000000000000ull;
constexpr uint64_t kSignBit = 0x8000000000000000ull;

std::string f64_literal(double v) {
  const uint64_t bits = std::bit_cast<uint64_t>(v);
  if (std::isnan(v)) {
    if (bits == kDefaultNan) return "nan";
    if (bits == (kDefaultNan | kSignBit)) return "-nan";
    char buf[32];
    std::snprintf(buf, sizeof buf, "nan(0x%016llx)", static_cast<unsigned long long>(bits));
    return buf;
  }
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, result.ptr);
}

// The printed names of slots: their own, or a default (see printer.h) for empty ones.
template <class Slot, class Default>
std::vector<std::string> slot_names(const std::vector<Slot>& slots, Default default_name) {
  std::vector<std::string> names;
  for (const Slot& s : slots) names.push_back(s.name);
  for (size_t i = 0; i < names.size(); ++i) {
    if (!slots[i].name.empty()) continue;
    std::string candidate = default_name(i);
    while (std::find(names.begin(), names.end(), candidate) != names.end()) candidate += '_';
    names[i] = candidate;
  }
  return names;
}

struct Printer {
  explicit Printer(const Trace& t) : trace(t) {}

  const Trace& trace;
  std::vector<std::string> var_names = slot_names(trace.signature.vars, [](size_t i) {
    return i < 26 ? std::string(1, static_cast<char>('a' + i)) : "v" + std::to_string(i);
  });
  std::vector<std::string> data_names =
      slot_names(trace.signature.data, [](size_t i) { return "d" + std::to_string(i); });
  std::string out;

  // A slot that the signature lacks (an invalid trace) prints as `?N`, which parse rejects.
  std::string name_of(const std::vector<std::string>& names, uint32_t slot) const {
    return slot < names.size() ? names[slot] : "?" + std::to_string(slot);
  }

  void line(const std::string& text) { out += text, out += '\n'; }

  void header() {
    const Signature& sig = trace.signature;
    line("lsjit.ir 1");
    line("cost " + (sig.name.empty() ? std::string("unnamed") : sig.name) +
         " kind=" + std::string(cost_kind_name(sig.kind)) +
         " stage=" + std::string(stage_name(trace.stage)) +
         " residuals=" + std::to_string(sig.residual_dim));
    line("# structural hash " + structural_hash(trace).hex() +
         " (the static key: equal for traces that differ only in IDs, values, data)");
  }

  void counts() {
    const Graph& g = trace.graph;
    std::array<size_t, kNumOps> by_op{};
    for (const Node& n : g.nodes) ++by_op[static_cast<size_t>(n.op) % kNumOps];
    std::string ops;
    for (int i = 2; i < kNumOps; ++i)
      if (by_op[i] != 0)
        ops += (ops.empty() ? "" : ", ") + std::string(name(static_cast<Op>(i))) + " " +
               std::to_string(by_op[i]);
    line("# nodes " + std::to_string(g.size()) + ": const " + std::to_string(by_op[0]) +
         ", input " + std::to_string(by_op[1]) + ", ops " + std::to_string(g.op_count()) +
         (ops.empty() ? "" : " (" + ops + ")"));
    // Per role: res and J before normal_equations, cost, g and H at it; and any role
    // outside its stage that is present (an invalid trace).
    std::array<size_t, 5> by_role{};
    for (const Output& o : g.outputs) ++by_role[static_cast<size_t>(o.role) % by_role.size()];
    const bool normal = stage_has_normal_equations(trace.stage);
    std::string roles;
    const auto add = [&](std::string_view label, OutputRole role, bool always) {
      const size_t n = by_role[static_cast<size_t>(role)];
      if (always || n != 0)
        roles += (roles.empty() ? "" : ", ") + std::string(label) + " " + std::to_string(n);
    };
    add("res", OutputRole::Residual, !normal);
    add("J", OutputRole::Jacobian, !normal);
    add("cost", OutputRole::Cost, normal);
    add("g", OutputRole::Gradient, normal);
    add("H", OutputRole::Hessian, normal);
    line("# outputs " + std::to_string(g.outputs.size()) + ": " + roles);
    cache_effect(by_op[0]);
  }

  // What changes the kernel and what does not: the inputs are runtime, the constants are
  // part of the cache key.
  void cache_effect(size_t constants) {
    std::string vars, data;
    for (const std::string& n : var_names) vars += " " + n;
    for (const std::string& n : data_names) data += " " + n;
    line("# runtime inputs (never recompile): var" + (vars.empty() ? " -" : vars) + "; data" +
         (data.empty() ? " -" : data));
    line("# baked into the kernel (in the cache key): " + std::to_string(constants) +
         " constants; pass values that change as data");
  }

  // Which entries of each Jacobian block J[v] (or, at stage normal_equations, each
  // Gauss-Newton block H[v,w], v <= w) are outputs other than constant 0.
  void sparsity() {
    const Signature& sig = trace.signature;
    const auto n = static_cast<uint32_t>(sig.vars.size());
    std::vector<Block> jacobian, hessian;
    // Only the blocks of roles the graph has: slot pairs are quadratic in the slots.
    const auto has = [&](OutputRole role) {
      return std::any_of(trace.graph.outputs.begin(), trace.graph.outputs.end(),
                         [role](const Output& o) { return o.role == role; });
    };
    const bool has_j = has(OutputRole::Jacobian), has_h = has(OutputRole::Hessian);
    for (uint32_t v = 0; v < n && (has_j || has_h); ++v) {
      if (has_j)
        jacobian.push_back({"J[" + var_names[v] + "]", sig.residual_dim, sig.vars[v].tangent,
                            OutputRole::Jacobian, v, 0});
      for (uint32_t w = v; w < n && has_h; ++w)
        hessian.push_back({"H[" + var_names[v] + "," + var_names[w] + "]", sig.vars[v].tangent,
                           sig.vars[w].tangent, OutputRole::Hessian, v, w});
    }
    blocks("jacobian", OutputRole::Jacobian, jacobian);
    blocks("hessian", OutputRole::Hessian, hessian);
  }

  struct Block {
    std::string name;
    uint32_t rows, cols;
    OutputRole role;
    uint32_t var, var2;  // the outputs of the block have these
  };

  // `# KIND sparsity: BLOCK RxC N/M nonzero, ...` and each block's pattern, if there is an
  // output of `role`.
  void blocks(std::string_view kind, OutputRole role, const std::vector<Block>& list) {
    const Graph& g = trace.graph;
    if (std::none_of(g.outputs.begin(), g.outputs.end(),
                     [role](const Output& o) { return o.role == role; }))
      return;
    std::string summary, patterns;
    // Each output to its block once (blocks are in (var, var2) order): one pass over the
    // outputs, not one per block.
    std::map<std::pair<uint32_t, uint32_t>, std::vector<const Output*>> of_block;
    for (const Output& o : g.outputs)
      if (o.role == role) of_block[{o.var, o.var2}].push_back(&o);
    for (const Block& b : list) {
      const bool drawn = b.rows <= 64 && b.cols <= 64;
      std::vector<std::string> grid(drawn ? b.rows : 0, std::string(drawn ? b.cols : 0, '.'));
      std::set<std::pair<uint32_t, uint32_t>> seen;  // large blocks: nonzero places
      size_t nonzero = 0;
      const auto it = of_block.find({b.var, b.var2});
      for (const Output* o : it == of_block.end() ? std::vector<const Output*>{} : it->second) {
        if (o->row >= b.rows || o->col >= b.cols || o->node >= g.size() || g[o->node].is_const(0.0))
          continue;
        if (drawn ? grid[o->row][o->col] == 'x' : !seen.insert({o->row, o->col}).second) continue;
        if (drawn) grid[o->row][o->col] = 'x';
        ++nonzero;
      }
      summary += (summary.empty() ? " " : ", ") + b.name + " " + std::to_string(b.rows) + "x" +
                 std::to_string(b.cols) + " " + std::to_string(nonzero) + "/" +
                 std::to_string(size_t{b.rows} * b.cols) + " nonzero";
      if (!drawn) {
        patterns += "# " + b.name + " pattern omitted: too large\n";
        continue;
      }
      std::string rows_text;
      for (const std::string& r : grid) rows_text += (rows_text.empty() ? "" : " | ") + r;
      patterns += "# " + b.name + " = [" + rows_text + "]\n";
    }
    line("# " + std::string(kind) + " sparsity:" + summary);
    out += patterns;
  }

  void declarations() {
    const Signature& sig = trace.signature;
    auto type = [](const std::string& t) { return t.empty() ? std::string("?") : t; };
    for (size_t i = 0; i < sig.vars.size(); ++i)
      line("var " + var_names[i] + " : " + type(sig.vars[i].type) +
           " ambient=" + std::to_string(sig.vars[i].ambient) +
           " tangent=" + std::to_string(sig.vars[i].tangent));
    for (size_t i = 0; i < sig.data.size(); ++i)
      line("data " + data_names[i] + " : " + type(sig.data[i].type) +
           " rows=" + std::to_string(sig.data[i].rows) +
           " cols=" + std::to_string(sig.data[i].cols));
  }

  void node(NodeId id, const Node& n) {
    std::string text = "%" + std::to_string(id) + " = ";
    switch (n.op) {
      case Op::Const:
        text += "const ";
        text += n.type == Type::Bool ? (n.value != 0.0 ? "true" : "false") : f64_literal(n.value);
        break;
      case Op::Input: {
        const InputRef& in = n.input;
        const bool is_data = in.kind == InputKind::Data;
        text += in.kind == InputKind::Var ? "input var " : is_data ? "input data " : "input tangent ";
        text += name_of(is_data ? data_names : var_names, in.slot);
        text += "[" + std::to_string(in.component) + "]";
        break;
      }
      default:
        text += name(n.op);
        for (int k = 0; k < std::min<int>(n.num_args, 3); ++k)
          text += " %" + std::to_string(n.args[k]);
        if (n.op == Op::Powi) text += " " + std::to_string(n.int_attr);
    }
    line(text + " : " + std::string(type_name(n.type)));
  }

  void output(const Output& o) {
    const auto var = [this](uint32_t slot) { return name_of(var_names, slot); };
    const auto index = [](uint32_t i) { return std::to_string(i); };
    std::string target;
    switch (o.role) {
      case OutputRole::Jacobian:
        target = "J[" + var(o.var) + "](" + index(o.row) + "," + index(o.col) + ")";
        break;
      case OutputRole::Cost: target = "cost"; break;
      case OutputRole::Gradient: target = "g[" + var(o.var) + "](" + index(o.row) + ")"; break;
      case OutputRole::Hessian:
        target = "H[" + var(o.var) + "," + var(o.var2) + "](" + index(o.row) + "," +
                 index(o.col) + ")";
        break;
      default: target = "res[" + index(o.row) + "]";
    }
    line(target + " = %" + std::to_string(o.node));
  }
};

}  // namespace

std::string print(const Trace& trace) {
  Printer p{trace};
  p.header();
  p.counts();
  p.sparsity();
  p.declarations();
  for (NodeId i = 0; i < trace.graph.size(); ++i) p.node(i, trace.graph.nodes[i]);
  for (const Output& o : trace.graph.outputs) p.output(o);
  p.line("end");
  return std::move(p.out);
}

}  // namespace lsjit::ir
