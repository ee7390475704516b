// The normal_equations stage: its cost, gradient and Gauss-Newton blocks against ½‖r‖²,
// Jᵀr and JᵀJ computed in double from the Jacobian stage, on every test function and on
// costs with several variable slots; its structure (symmetric diagonal blocks, structural
// zeros, the Jacobian stage's nodes kept as they are); its text form; and the stage rules
// in verify() and the parser.
#include <doctest/doctest.h>

#include "../support/ir_errors.h"

#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "../support/jacobian_check.h"
#include "../support/multi_slot_functions.h"
#include "../support/round_trip.h"
#include "../support/test_functions.h"
#include "lsjit/common/error.h"
#include "lsjit/ir/differentiate.h"
#include "lsjit/ir/interpreter.h"
#include "lsjit/ir/normal_equations.h"
#include "lsjit/ir/parser.h"
#include "lsjit/ir/printer.h"
#include "lsjit/ir/structural_hash.h"
#include "lsjit/ir/sym.h"
#include "lsjit/ir/verify.h"

using namespace lsjit::ir;
using lsjit::testing::relative;

namespace {

// A traced cost and the inputs to check it at.
struct Case {
  std::string name;
  Trace traced;
  std::vector<InputValues> inputs;
};

// Every test function (at its points and 2 random ones) and every multi-slot function (at
// 4 random inputs).
std::vector<Case> cases() {
  std::vector<Case> out;
  std::mt19937_64 rng(2024);
  for (const lsjit::testing::TestFunction& t : lsjit::testing::test_functions()) {
    Case c{t.name, lsjit::testing::trace_function(t), {}};
    for (const auto& pt : lsjit::testing::points_of(t, 2, rng))
      c.inputs.push_back({{pt}, {{0.7, -1.3}}, {}});
    out.push_back(std::move(c));
  }
  for (const lsjit::testing::MultiSlotFunction& f : lsjit::testing::multi_slot_functions()) {
    Case c{f.name, f.trace(), {}};
    for (int k = 0; k < 4; ++k) c.inputs.push_back(f.sample(rng));
    out.push_back(std::move(c));
  }
  return out;
}

const Output* find_output(const Graph& g, OutputRole role, uint32_t var, uint32_t var2,
                          uint32_t row, uint32_t col) {
  for (const Output& o : g.outputs)
    if (o.role == role && o.var == var && o.var2 == var2 && o.row == row && o.col == col)
      return &o;
  return nullptr;
}

// The cost, g and H of `ne` against the same sums, in row order, of the Jacobian stage's
// values.
void check_against_jacobian(const Trace& jac, const Trace& ne, const InputValues& in) {
  const Signature& sig = jac.signature;
  const EvalResult j = evaluate(jac, in);
  const EvalResult e = evaluate(ne, in);
  const size_t n = sig.vars.size();
  CHECK(j.cost == 0);
  CHECK(j.gradient.empty());
  CHECK(j.hessian.empty());
  CHECK(e.residual.empty());
  CHECK(e.jacobian.empty());
  REQUIRE(e.gradient.size() == n);
  REQUIRE(e.hessian.size() == n * (n + 1) / 2);

  double squares = 0;
  for (double r : j.residual) squares += r * r;
  CHECK_MESSAGE(relative(e.cost, 0.5 * squares) <= 1e-12,
                "cost " << e.cost << " but ½‖r‖² = " << 0.5 * squares);
  for (size_t v = 0; v < n; ++v) {
    const uint32_t tv = sig.vars[v].tangent;
    REQUIRE(e.gradient[v].size() == tv);
    for (uint32_t a = 0; a < tv; ++a) {
      double g = 0;
      for (uint32_t i = 0; i < sig.residual_dim; ++i) g += j.jacobian[v][i * tv + a] * j.residual[i];
      CHECK_MESSAGE(relative(e.gradient[v][a], g) <= 1e-12,
                    "g[" << v << "](" << a << ") = " << e.gradient[v][a] << " but Jᵀr = " << g);
    }
    for (size_t w = v; w < n; ++w) {
      const uint32_t tw = sig.vars[w].tangent;
      const std::vector<double>& h = e.hessian.at(hessian_pair(v, w, n));
      REQUIRE(h.size() == size_t{tv} * tw);
      for (uint32_t a = 0; a < tv; ++a)
        for (uint32_t b = 0; b < tw; ++b) {
          double s = 0;
          for (uint32_t i = 0; i < sig.residual_dim; ++i)
            s += j.jacobian[v][i * tv + a] * j.jacobian[w][i * tw + b];
          CHECK_MESSAGE(relative(h[a * tw + b], s) <= 1e-12,
                        "H[" << v << "," << w << "](" << a << "," << b << ") = " << h[a * tw + b]
                             << " but JᵀJ = " << s);
        }
    }
  }
}

// Node ids of a structural numbering shared by several graphs: equal ids for equal
// expressions (op, type, attributes and, recursively, arguments).
class Structures {
 public:
  std::vector<size_t> number(const Graph& g) {
    std::vector<size_t> id(g.size());
    for (NodeId i = 0; i < g.size(); ++i) {
      const Node& n = g.nodes[i];
      Key k{n.op, n.type, std::bit_cast<uint64_t>(n.value), n.int_attr, n.input.kind,
            n.input.slot, n.input.component, {kNone, kNone, kNone}};
      for (int a = 0; a < n.num_args; ++a) k.args[a] = id[n.args[a]];
      id[i] = table_.try_emplace(k, table_.size()).first->second;
    }
    return id;
  }

 private:
  static constexpr size_t kNone = ~size_t{0};
  struct Key {
    Op op;
    Type type;
    uint64_t value;
    int32_t int_attr;
    InputKind kind;
    uint32_t slot, component;
    std::array<size_t, 3> args;
    auto tie() const { return std::tie(op, type, value, int_attr, kind, slot, component, args); }
    bool operator<(const Key& o) const { return tie() < o.tie(); }
  };
  std::map<Key, size_t> table_;
};

// A text with `line` (with its newline) inserted before the `end` line.
std::string with_line(const std::string& text, const std::string& line) {
  const size_t end = text.rfind("end\n");
  REQUIRE(end != std::string::npos);
  return text.substr(0, end) + line + "\n" + text.substr(end);
}

// `text` with the output line starting with `target` (e.g. "g[a](1) = ") removed; the
// removed line goes to *removed.
std::string without_output(const std::string& text, const std::string& target,
                           std::string* removed = nullptr) {
  const size_t at = text.find("\n" + target);
  REQUIRE_MESSAGE(at != std::string::npos, target);
  const size_t end = text.find('\n', at + 1);
  if (removed != nullptr) *removed = text.substr(at + 1, end - at - 1);
  return text.substr(0, at) + text.substr(end);
}



#define CHECK_CONTAINS(message_expr, words)                    \
  do {                                                         \
    const std::string message_ = (message_expr);               \
    INFO(message_);                                            \
    CHECK(message_.find(words) != std::string::npos);          \
  } while (0)

Trace multi_slot(const std::string& name) {
  for (const auto& f : lsjit::testing::multi_slot_functions())
    if (f.name == name) return f.trace();
  FAIL("no multi-slot function " << name);
  return {};
}

}  // namespace

TEST_CASE("normal equations: cost, g and H equal ½‖r‖², Jᵀr and JᵀJ of the Jacobian stage") {
  size_t checked = 0;
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    for (Accumulation mode : {Accumulation::Forward, Accumulation::Reverse, Accumulation::Auto}) {
      const Trace jac = differentiate(c.traced, mode);
      const Trace ne = normal_equations(jac);
      CHECK(ne.stage == Stage::NormalEquations);
      CHECK(ne.signature == jac.signature);
      lsjit::testing::require_valid(ne);
      for (const InputValues& in : c.inputs) {
        check_against_jacobian(jac, ne, in);
        ++checked;
      }
    }
  }
  CHECK(checked >= 200);
}

TEST_CASE("normal equations: outputs in order, one per target, diagonal blocks symmetric") {
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    const Trace ne = normal_equations(differentiate(c.traced));
    const Signature& sig = ne.signature;
    const uint32_t n = static_cast<uint32_t>(sig.vars.size());
    // The order: cost, g by var and row, H by pair (row-major) and entry (row-major).
    std::vector<Output> expected{{OutputRole::Cost, 0, 0, 0, kNoNode}};
    for (uint32_t v = 0; v < n; ++v)
      for (uint32_t a = 0; a < sig.vars[v].tangent; ++a)
        expected.push_back({OutputRole::Gradient, a, v, 0, kNoNode});
    for (uint32_t v = 0; v < n; ++v)
      for (uint32_t w = v; w < n; ++w)
        for (uint32_t a = 0; a < sig.vars[v].tangent; ++a)
          for (uint32_t b = 0; b < sig.vars[w].tangent; ++b)
            expected.push_back({OutputRole::Hessian, a, v, b, kNoNode, w});
    REQUIRE(ne.graph.outputs.size() == expected.size());
    for (size_t k = 0; k < expected.size(); ++k) {
      Output o = ne.graph.outputs[k];
      o.node = kNoNode;
      CHECK_MESSAGE(o == expected[k], "output " << k << " is " << output_name(sig, ne.graph.outputs[k])
                                                << ", expected " << output_name(sig, expected[k]));
    }
    for (uint32_t v = 0; v < n; ++v)
      for (uint32_t a = 0; a < sig.vars[v].tangent; ++a)
        for (uint32_t b = a + 1; b < sig.vars[v].tangent; ++b) {
          const Output* ab = find_output(ne.graph, OutputRole::Hessian, v, v, a, b);
          const Output* ba = find_output(ne.graph, OutputRole::Hessian, v, v, b, a);
          REQUIRE(ab != nullptr);
          REQUIRE(ba != nullptr);
          CHECK(ab->node == ba->node);
        }
  }
}

TEST_CASE("normal equations keep every input and remove dead code") {
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    const Trace jac = differentiate(c.traced);
    const Trace ne = normal_equations(jac);
    Structures structures;
    const std::vector<size_t> jac_ids = structures.number(jac.graph);
    const std::vector<size_t> ne_ids = structures.number(ne.graph);
    const std::set<size_t> in_jac(jac_ids.begin(), jac_ids.end());
    const std::set<size_t> in_ne(ne_ids.begin(), ne_ids.end());
    const std::vector<bool> live = live_nodes(ne.graph);
    for (NodeId i = 0; i < ne.graph.size(); ++i) {
      const Node& n = ne.graph.nodes[i];
      CHECK_MESSAGE((live[i] || n.op == Op::Input), "node %" << i << " is dead");
      if (n.op == Op::Input) CHECK(in_jac.count(ne_ids[i]) == 1);
    }
    for (NodeId i = 0; i < jac.graph.size(); ++i)
      if (jac.graph.nodes[i].op == Op::Input) CHECK(in_ne.count(jac_ids[i]) == 1);
  }
}

// The residual's own nodes are simplified only by IEEE-exact rules (differentiate.h); the
// pass copies them as they are, though its new nodes may assume finite values.
TEST_CASE("normal equations copy the residual's nodes without relaxed rules") {
  Signature sig;
  sig.name = "keeps_p_times_0";
  sig.vars = {{"x", "Scalar", 1, 1}};
  sig.data = {{"p", "Vec2", 2, 1}};
  lsjit::Tracer tr(sig);
  const lsjit::Sym x = tr.var(0, 0) + tr.tangent(0, 0);
  tr.set_residual({tr.data(0, 0) * 0.0 + x, tr.data(0, 1) * 0.0});
  const Trace jac = differentiate(tr.finish());
  const Trace ne = normal_equations(jac);
  // p[k]·0 is NaN for p[k] = inf: both nodes stay, and so the cost is NaN as r is.
  size_t kept = 0;
  for (const Node& n : ne.graph.nodes)
    kept += n.op == Op::Mul && ne.graph[n.args[0]].op == Op::Input && ne.graph[n.args[1]].is_const(0.0);
  CHECK(kept == 2);
  const InputValues in{{{0.5}}, {{std::numeric_limits<double>::infinity(), 1.0}}, {}};
  CHECK(std::isnan(evaluate(jac, in).residual[0]));
  CHECK(std::isnan(evaluate(ne, in).cost));
  const InputValues finite{{{0.5}}, {{2.0, 1.0}}, {}};
  CHECK(evaluate(ne, finite).cost == 0.125);
  CHECK(evaluate(ne, finite).gradient[0][0] == 0.5);
  CHECK(evaluate(ne, finite).hessian[0][0] == 1.0);
}

TEST_CASE("normal equations: structural zeros cost nothing") {
  const Trace ne = normal_equations(differentiate(multi_slot("independent_blocks")));
  const Graph& g = ne.graph;
  // Slots a (tangent 2), u (1, unused), b (3): no row reads both a and b, none reads u.
  for (const Output& o : g.outputs) {
    const bool reads_u = (o.role != OutputRole::Cost && o.var == 1) ||
                         (o.role == OutputRole::Hessian && o.var2 == 1);
    const bool mixes = o.role == OutputRole::Hessian && o.var == 0 && o.var2 == 2;
    if (reads_u || mixes)
      CHECK_MESSAGE(g[o.node].is_const(0.0), output_name(ne.signature, o) << " is not const 0");
  }
  // The sparsity comment shows the H blocks.
  const std::string text = print(ne);
  CHECK_CONTAINS(text, "# outputs 32: cost 1, g 6, H 25\n");
  CHECK_CONTAINS(text, "# hessian sparsity: H[a,a] 2x2 4/4 nonzero, H[a,u] 2x1 0/2 nonzero, "
                       "H[a,b] 2x3 0/6 nonzero, H[u,u] 1x1 0/1 nonzero, H[u,b] 1x3 0/3 nonzero, "
                       "H[b,b] 3x3 5/9 nonzero\n");
  CHECK_CONTAINS(text, "# H[a,b] = [... | ...]\n");
  CHECK_CONTAINS(text, "# H[b,b] = [xx. | xx. | ..x]\n");
  CHECK(text.find("# jacobian sparsity") == std::string::npos);

  // A constant residual adds a constant to the cost, a constant 0 residual nothing; a
  // constant J entry is folded into its products.
  const Trace ap = normal_equations(differentiate(multi_slot("angle_and_point")));
  const Output* h11 = find_output(ap.graph, OutputRole::Hessian, 1, 1, 1, 1);
  REQUIRE(h11 != nullptr);  // Σ_i J[x](i,1)²: only row 0 (−sin θ) and row 5 (3) read x1
  CHECK(!ap.graph[h11->node].is_const());
  InputValues in{{{0.6, 0.8}, {0.1, 0.2, 0.3}}, {{0.4, -0.5}}, {}};
  const EvalResult r = evaluate(ap, in);
  CHECK(r.hessian.at(hessian_pair(1, 1, 2)).at(4) == doctest::Approx(0.8 * 0.8 + 9.0));
  const EvalResult jr = evaluate(differentiate(multi_slot("angle_and_point")), in);
  CHECK(jr.residual[3] == 1.5);
  CHECK(jr.residual[4] == 0.0);
}

TEST_CASE("print -> parse -> print is the identity at stage normal_equations") {
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    lsjit::testing::check_round_trip(normal_equations(differentiate(c.traced)), c.inputs.front());
  }
  const std::string text = print(normal_equations(differentiate(multi_slot("rotate_scale_point"))));
  CHECK_CONTAINS(text, "stage=normal_equations residuals=4\n");
  CHECK_CONTAINS(text, "\ncost = %");
  CHECK_CONTAINS(text, "\ng[t](1) = %");
  CHECK_CONTAINS(text, "\nH[q,s](2,0) = %");
  CHECK(text.find("\nres[") == std::string::npos);
  CHECK(text.find("\nJ[") == std::string::npos);
}

TEST_CASE("normal_equations takes a Jacobian-stage trace") {
  const Trace traced = multi_slot("rotate_scale_point");
  CHECK_THROWS_AS(normal_equations(traced), std::logic_error);
  CHECK_THROWS_AS(normal_equations(simplify_residual(traced)), std::logic_error);
  CHECK_THROWS_AS(normal_equations(normal_equations(differentiate(traced))), std::logic_error);
  Trace broken = differentiate(traced);
  broken.graph.outputs.pop_back();
  CHECK_THROWS_AS(normal_equations(broken), std::logic_error);
}

TEST_CASE("verify: the stage rules of normal_equations") {
  const Trace ne = normal_equations(differentiate(multi_slot("rotate_scale_point")));
  lsjit::testing::require_valid(ne);
  const Graph& g = ne.graph;
  const auto index_of = [&g](OutputRole role, uint32_t var, uint32_t var2, uint32_t row,
                             uint32_t col) {
    const Output* o = find_output(g, role, var, var2, row, col);
    REQUIRE(o != nullptr);
    return static_cast<size_t>(o - g.outputs.data());
  };
  const NodeId some = g.outputs.front().node;
  const std::string extra = "output " + std::to_string(g.outputs.size());

  // Missing: the cost, a gradient entry, a Hessian entry (diagonal and off-diagonal block).
  Trace t = ne;
  t.graph.outputs.erase(t.graph.outputs.begin());
  CHECK_CONTAINS(lsjit::testing::verify_violation(t), "violates stage rules: the outputs: expected an output for the "
                               "cost at stage normal_equations, found no output cost");
  t = ne;
  t.graph.outputs.erase(t.graph.outputs.begin() + index_of(OutputRole::Gradient, 1, 0, 1, 0));
  CHECK_CONTAINS(lsjit::testing::verify_violation(t), "expected an output for every g[var](row) at stage "
                               "normal_equations, found no output g[t](1)");
  t = ne;
  t.graph.outputs.erase(t.graph.outputs.begin() + index_of(OutputRole::Hessian, 0, 0, 2, 1));
  CHECK_CONTAINS(lsjit::testing::verify_violation(t), "found no output H[q,q](2,1)");
  t = ne;
  t.graph.outputs.erase(t.graph.outputs.begin() + index_of(OutputRole::Hessian, 1, 2, 1, 0));
  CHECK_CONTAINS(lsjit::testing::verify_violation(t), "found no output H[t,s](1,0)");

  // Extra: residual and Jacobian outputs; a Hessian below the diagonal of blocks; out of range.
  t = ne;
  t.graph.outputs.push_back({OutputRole::Residual, 0, 0, 0, some});
  CHECK_CONTAINS(lsjit::testing::verify_violation(t), "violates stage rules: " + extra + " (res[0]): expected only cost, "
                               "g and H outputs at stage normal_equations, found a residual output");
  t = ne;
  t.graph.outputs.push_back({OutputRole::Jacobian, 0, 1, 0, some});
  CHECK_CONTAINS(lsjit::testing::verify_violation(t), "found a Jacobian output");
  t = ne;
  t.graph.outputs.push_back({OutputRole::Hessian, 0, 2, 0, some, 0});
  CHECK_CONTAINS(lsjit::testing::verify_violation(t), "violates hessian output: " + extra + " (H[s,q](0,0)): expected var "
                               "<= var2 (H[v,w] only for v <= w in slot order), found var 2 var2 0");
  t = ne;
  t.graph.outputs.push_back({OutputRole::Hessian, 0, 1, 2, some, 1});
  CHECK_CONTAINS(lsjit::testing::verify_violation(t), "violates hessian output: " + extra + " (H[t,t](0,2)): expected a "
                               "column below 2 (tangent dimension of t), found col 2");
  t = ne;
  t.graph.outputs.push_back({OutputRole::Hessian, 0, 0, 0, some, 3});
  CHECK_CONTAINS(lsjit::testing::verify_violation(t), "expected a variable slot below 3, found var2 3");
  t = ne;
  t.graph.outputs.push_back({OutputRole::Gradient, 2, 1, 0, some});
  CHECK_CONTAINS(lsjit::testing::verify_violation(t), "violates gradient output: " + extra + " (g[t](2)): expected a row "
                               "below 2 (tangent dimension of t), found row 2");
  t = ne;
  t.graph.outputs.push_back({OutputRole::Gradient, 0, 1, 1, some});
  CHECK_CONTAINS(lsjit::testing::verify_violation(t), "expected col 0 and var2 0 on a gradient output, found col 1 var2 0");
  t = ne;
  t.graph.outputs.front().row = 1;
  CHECK_CONTAINS(lsjit::testing::verify_violation(t), "violates cost output: output 0 (cost): expected row 0, var 0, "
                               "col 0 and var2 0 on the cost output");

  // Duplicates.
  t = ne;
  t.graph.outputs.push_back(t.graph.outputs.front());
  CHECK_CONTAINS(lsjit::testing::verify_violation(t), "violates unique outputs: " + extra + " (cost): expected each output "
                               "target once, found a second output for it (the first is output 0)");
  t = ne;
  t.graph.outputs.push_back(g.outputs[index_of(OutputRole::Hessian, 0, 2, 1, 0)]);
  CHECK_CONTAINS(lsjit::testing::verify_violation(t), "violates unique outputs: " + extra + " (H[q,s](1,0))");

  // Normal-equation outputs at the other stages, and var2 on the other roles.
  Trace jac = differentiate(multi_slot("rotate_scale_point"));
  t = jac;
  t.graph.outputs.push_back({OutputRole::Gradient, 0, 0, 0, jac.graph.outputs.front().node});
  CHECK_CONTAINS(lsjit::testing::verify_violation(t), "expected only residual and Jacobian outputs at stage jacobian, "
                               "found a gradient output");
  t = jac;
  t.graph.outputs.back().var2 = 1;
  CHECK_CONTAINS(lsjit::testing::verify_violation(t), "violates jacobian output");
  CHECK_CONTAINS(lsjit::testing::verify_violation(t), "expected var2 0 on a Jacobian output, found var2 1");
  t = multi_slot("rotate_scale_point");
  t.graph.outputs.push_back({OutputRole::Cost, 0, 0, 0, t.graph.outputs.front().node});
  CHECK_CONTAINS(lsjit::testing::verify_violation(t), "expected residual outputs only at stage traced, found a cost output");
  t = multi_slot("rotate_scale_point");
  t.graph.outputs.front().var2 = 2;
  CHECK_CONTAINS(lsjit::testing::verify_violation(t), "expected var2 0 on a residual output, found var2 2");
}

TEST_CASE("first_missing_output at stage normal_equations: cost, g by var and row, H by pair") {
  const Trace ne = normal_equations(differentiate(multi_slot("rotate_scale_point")));
  const Signature& sig = ne.signature;
  CHECK_FALSE(first_missing_output(sig, Stage::NormalEquations, ne.graph.outputs).has_value());
  CHECK(first_missing_output(sig, Stage::NormalEquations, {}) ==
        Output{OutputRole::Cost, 0, 0, 0, kNoNode});
  // Residual and Jacobian outputs are not required, and out-of-range ones are ignored.
  CHECK_FALSE(first_missing_output(sig, Stage::NormalEquations,
                                   [&] {
                                     auto o = ne.graph.outputs;
                                     o.push_back({OutputRole::Hessian, 0, 2, 0, 0, 0});
                                     o.push_back({OutputRole::Gradient, 5, 0, 0, 0});
                                     return o;
                                   }())
                   .has_value());
  // Remove outputs from the back, one at a time: each time the removed one is the first missing.
  std::vector<Output> outputs = ne.graph.outputs;
  while (!outputs.empty()) {
    Output last = outputs.back();
    outputs.pop_back();
    last.node = kNoNode;
    const auto missing = first_missing_output(sig, Stage::NormalEquations, outputs);
    REQUIRE(missing.has_value());
    CHECK_MESSAGE(*missing == last, output_name(sig, *missing) << " vs " << output_name(sig, last));
  }
  // At the other stages the normal-equation outputs do not count.
  CHECK(first_missing_output(sig, Stage::Jacobian, ne.graph.outputs) ==
        Output{OutputRole::Residual, 0, 0, 0, kNoNode});
}

TEST_CASE("parse: normal-equation outputs only at stage normal_equations, in range") {
  const Trace traced = multi_slot("rotate_scale_point");
  const Trace jac = differentiate(traced);
  const Trace ne = normal_equations(jac);
  const std::string ne_text = print(ne);
  const std::string jac_text = print(jac);
  const std::string traced_text = print(traced);
  const std::string simplified_text = print(simplify_residual(traced));
  const NodeId some = ne.graph.outputs.front().node;  // the cost's node

  // g and H (and cost) at the other stages.
  CHECK_CONTAINS(lsjit::testing::parse_error(with_line(jac_text, "g[q](0) = %0")),
                 "expected an output 'res[ROW]', 'J[VAR](ROW,COL)' or 'end' (stage jacobian has "
                 "no normal-equation outputs), found 'g'");
  CHECK_CONTAINS(lsjit::testing::parse_error(with_line(traced_text, "H[q,t](0,0) = %0")),
                 "expected a residual output 'res[ROW]' or 'end' (stage traced has no "
                 "normal-equation outputs), found 'H'");
  CHECK_CONTAINS(lsjit::testing::parse_error(with_line(simplified_text, "cost = %0")),
                 "(stage simplified has no normal-equation outputs), found 'cost'");
  // res and J at stage normal_equations.
  CHECK_CONTAINS(lsjit::testing::parse_error(with_line(ne_text, "res[0] = %0")),
                 "expected an output 'cost', 'g[VAR](ROW)', 'H[VAR,VAR](ROW,COL)' or 'end' "
                 "(stage normal_equations has no residual outputs), found 'res'");
  CHECK_CONTAINS(lsjit::testing::parse_error(with_line(ne_text, "J[q](0,0) = %0")),
                 "(stage normal_equations has no Jacobian outputs), found 'J'");

  // Ranges: tangent rows and columns, slot order, declared names.
  std::string removed;
  const std::string no_g = without_output(ne_text, "g[t](1) = ", &removed);
  CHECK_CONTAINS(lsjit::testing::parse_error(with_line(no_g, "g[t](2) = %0")),
                 "expected a tangent row below 2 (tangent dimension of t), found '2'");
  const std::string no_h = without_output(ne_text, "H[q,t](2,1) = ");
  CHECK_CONTAINS(lsjit::testing::parse_error(with_line(no_h, "H[q,t](3,1) = %0")),
                 "expected a tangent row below 3 (tangent dimension of q), found '3'");
  CHECK_CONTAINS(lsjit::testing::parse_error(with_line(no_h, "H[q,t](2,2) = %0")),
                 "expected a tangent column below 2 (tangent dimension of t), found '2'");
  CHECK_CONTAINS(lsjit::testing::parse_error(with_line(no_h, "H[t,q](1,2) = %0")),
                 "expected a variable at or after t in slot order (H[v,w] is written for v <= w), "
                 "found 'q'");
  CHECK_CONTAINS(lsjit::testing::parse_error(with_line(no_h, "H[q,r](2,1) = %0")),
                 "expected a declared variable (q, t, s), found 'r'");
  CHECK_CONTAINS(lsjit::testing::parse_error(with_line(no_h, "H[q](2,1) = %0")),
                 "expected ',' and the second variable name, found ']'");
  CHECK_CONTAINS(lsjit::testing::parse_error(with_line(no_g, "g[t](0,1) = %0")), "expected ')', found ','");
  CHECK_CONTAINS(lsjit::testing::parse_error(with_line(ne_text, "cost[0] = %0")), "expected '=' and the node");

  // Missing and duplicate outputs.
  CHECK_CONTAINS(lsjit::testing::parse_error(no_g), "expected a gradient output for every variable and tangent "
                                    "row at stage normal_equations before 'end', found none for "
                                    "g[t](1)");
  CHECK_CONTAINS(lsjit::testing::parse_error(no_h), "found none for H[q,t](2,1)");
  CHECK_CONTAINS(lsjit::testing::parse_error(without_output(ne_text, "cost = ")),
                 "expected a cost output at stage normal_equations before 'end', found none");
  CHECK_CONTAINS(lsjit::testing::parse_error(with_line(no_g, removed + "\n" + removed)),
                 "expected each output once, found a second one for the same target");
  CHECK_CONTAINS(lsjit::testing::parse_error(with_line(ne_text, "cost = %" + std::to_string(some))),
                 "expected each output once, found a second one for the same target");
  // The written form reads back: moving an output keeps the trace valid.
  CHECK_NOTHROW(parse(with_line(no_g, removed)));
  CHECK_CONTAINS(lsjit::testing::parse_error([&] {
                   std::string s = ne_text;
                   s.replace(s.find("stage=normal_equations"), 22, "stage=jacobian");
                   return s;
                 }()),
                 "(stage jacobian has no normal-equation outputs), found 'cost'");
}

TEST_CASE("the structural hash covers var2 and the stage") {
  const Trace ne = normal_equations(differentiate(multi_slot("rotate_scale_point")));
  const Output* qt = find_output(ne.graph, OutputRole::Hessian, 0, 1, 0, 0);
  REQUIRE(qt != nullptr);
  Trace changed = ne;  // H[q,t](0,0) becomes H[q,s](0,0): only var2 differs
  changed.graph.outputs[qt - ne.graph.outputs.data()].var2 = 2;
  CHECK(structural_hash(changed) != structural_hash(ne));
  Trace restaged = ne;
  restaged.stage = Stage::Jacobian;
  CHECK(structural_hash(restaged) != structural_hash(ne));
}

TEST_CASE("hessian_pair numbers the pairs v <= w row-major") {
  for (size_t n : {1, 2, 3, 5}) {
    size_t k = 0;
    for (size_t v = 0; v < n; ++v)
      for (size_t w = v; w < n; ++w) CHECK(hessian_pair(v, w, n) == k++);
  }
}
