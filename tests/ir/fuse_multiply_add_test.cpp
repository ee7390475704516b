// ir/fuse_multiply_add.h: which products are fused, that the fused graph computes a·b + c
// with one rounding (C fma), and that fma nodes differentiate and round-trip like any op.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "../support/jacobian_check.h"
#include "../support/round_trip.h"
#include "../support/test_functions.h"
#include "lsjit/ir/differentiate.h"
#include "lsjit/ir/fuse_multiply_add.h"
#include "lsjit/ir/interpreter.h"
#include "lsjit/ir/normal_equations.h"

using namespace lsjit::ir;

namespace {

// res[0] = expr over inputs x, y, z (Var slot 0, components 0-2) with extra outputs.
Trace small_trace(const std::function<std::vector<NodeId>(GraphBuilder&, NodeId, NodeId, NodeId)>& f) {
  Trace t;
  t.signature.name = "fma_case";
  t.signature.vars.push_back({"v", "Vec3", 3, 3});
  GraphBuilder b;
  const NodeId x = b.input({InputKind::Var, 0, 0}), y = b.input({InputKind::Var, 0, 1}),
               z = b.input({InputKind::Var, 0, 2});
  const std::vector<NodeId> outs = f(b, x, y, z);
  for (uint32_t r = 0; r < outs.size(); ++r) b.add_output({OutputRole::Residual, r, 0, 0, outs[r]});
  t.signature.residual_dim = static_cast<uint32_t>(outs.size());
  t.graph = b.finish();
  return t;
}

size_t count(const Trace& t, Op op) {
  size_t n = 0;
  for (const Node& node : t.graph.nodes) n += node.op == op;
  return n;
}

const Node& output_node(const Trace& t, size_t k) { return t.graph[t.graph.outputs[k].node]; }

}  // namespace

TEST_CASE("a single-use product is fused into its sum or difference, the first operand first") {
  const Trace t = fuse_multiply_add(small_trace([](GraphBuilder& b, NodeId x, NodeId y, NodeId z) {
    return std::vector<NodeId>{
        b.make(Op::Add, b.make(Op::Mul, x, y), z),                     // fma(x, y, z)
        b.make(Op::Add, b.make(Op::Sin, z), b.make(Op::Mul, y, y)),     // fma(y, y, sin z)
        b.make(Op::Sub, b.make(Op::Mul, z, y), x),                      // fma(z, y, -x)
        b.make(Op::Sub, x, b.make(Op::Mul, z, z)),                      // fma(-z, z, x)
        b.make(Op::Add, b.make(Op::Div, x, y), b.make(Op::Div, y, x)),  // no product
    };
  }));
  const Node& o0 = output_node(t, 0);
  REQUIRE(o0.op == Op::Fma);
  CHECK(t.graph[o0.args[0]].input.component == 0);
  CHECK(t.graph[o0.args[2]].input.component == 2);
  CHECK(output_node(t, 1).op == Op::Fma);
  CHECK(t.graph[output_node(t, 1).args[2]].op == Op::Sin);
  const Node& o2 = output_node(t, 2);
  REQUIRE(o2.op == Op::Fma);
  CHECK(t.graph[o2.args[2]].op == Op::Neg);
  const Node& o3 = output_node(t, 3);
  REQUIRE(o3.op == Op::Fma);
  CHECK(t.graph[o3.args[0]].op == Op::Neg);
  CHECK(output_node(t, 4).op == Op::Add);
  CHECK(count(t, Op::Mul) == 0);  // every fused product is gone
  CHECK(count(t, Op::Fma) == 4);
}

TEST_CASE("a product with two uses, or that is an output, stays a product") {
  const Trace t = fuse_multiply_add(small_trace([](GraphBuilder& b, NodeId x, NodeId y, NodeId z) {
    const NodeId shared = b.make(Op::Mul, x, y);
    const NodeId output = b.make(Op::Mul, y, z);
    const NodeId twice = b.make(Op::Mul, z, x);
    return std::vector<NodeId>{b.make(Op::Add, shared, z), b.make(Op::Sub, shared, x), output,
                               b.make(Op::Add, output, x), b.make(Op::Add, twice, twice)};
  }));
  CHECK(count(t, Op::Fma) == 0);
  CHECK(count(t, Op::Mul) == 3);
}

TEST_CASE("fused graphs compute C fma: a rounding fewer, the same values to 1e-12") {
  std::mt19937_64 rng(21);
  size_t fused = 0;
  for (const lsjit::testing::TestFunction& f : lsjit::testing::test_functions()) {
    CAPTURE(f.name);
    const Trace traced = trace_function(f);
    for (const Trace& stage : {simplify_residual(traced), differentiate(traced),
                               normal_equations(differentiate(traced))}) {
      const Trace t = fuse_multiply_add(stage);
      CHECK(t.stage == stage.stage);
      CHECK(t.graph.outputs.size() == stage.graph.outputs.size());
      CHECK(count(t, Op::Mul) + count(t, Op::Fma) >= count(stage, Op::Mul));
      fused += count(t, Op::Fma);
      for (const auto& pt : lsjit::testing::points_of(f, 2, rng)) {
        InputValues in;
        in.vars = {pt};
        in.data = {{0.7, -1.3}};
        const std::vector<double> a = evaluate_nodes(stage.graph, in), b = evaluate_nodes(t.graph, in);
        for (size_t k = 0; k < t.graph.outputs.size(); ++k) {
          const double x = a[stage.graph.outputs[k].node], y = b[t.graph.outputs[k].node];
          if (std::isnan(x)) {
            CHECK(std::isnan(y));
          } else if (std::isfinite(x)) {
            CHECK(std::abs(x - y) <= 1e-9 * std::max(1.0, std::abs(x)));
          }
        }
      }
      // Every fma node is C fma of its arguments' values (the interpreter's eval_op).
      InputValues in;
      in.vars = {std::vector<double>(f.inputs, 0.37)};
      in.data = {{0.7, -1.3}};
      const std::vector<double> v = evaluate_nodes(t.graph, in);
      for (NodeId i = 0; i < t.graph.size(); ++i) {
        const Node& n = t.graph[i];
        if (n.op != Op::Fma) continue;
        const double want = std::fma(v[n.args[0]], v[n.args[1]], v[n.args[2]]);
        CHECK((v[i] == want || (std::isnan(v[i]) && std::isnan(want))));
      }
    }
  }
  CHECK(fused > 100);
}

TEST_CASE("fma nodes differentiate (against finite differences) and print and parse back") {
  std::mt19937_64 rng(22);
  size_t fused = 0;
  for (const lsjit::testing::TestFunction& f : lsjit::testing::test_functions()) {
    CAPTURE(f.name);
    const Trace traced = fuse_multiply_add(trace_function(f));
    fused += count(traced, Op::Fma);
    for (const auto& pt : lsjit::testing::points_of(f, 2, rng)) {
      InputValues in;
      in.vars = {pt};
      in.data = {{0.7, -1.3}};
      lsjit::testing::check_jacobian(traced, in);
      lsjit::testing::check_round_trip(traced, in);
    }
  }
  CHECK(fused > 20);
}
