// Jacobians of traced functions against central finite differences: every op, Eigen's
// fixed-size algebra, Quaternion and AngleAxis, at random points and at the edges where
// branches and singularities are.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "../support/jacobian_check.h"
#include "../support/round_trip.h"
#include "../support/test_functions.h"
#include "lsjit/ir/differentiate.h"
#include "lsjit/ir/sym_eigen.h"


using namespace lsjit::testing;

TEST_CASE("IR Jacobians match central finite differences on every op") {
  std::mt19937_64 rng(12345);
  size_t checked = 0;
  for (const TestFunction& t : test_functions()) {
    CAPTURE(t.name);
    const lsjit::ir::Trace traced = trace_function(t);
    for (const auto& pt : points_of(t, 4, rng)) {
      std::string at;
      for (double v : pt) at += std::to_string(v) + " ";
      CAPTURE(at);
      lsjit::ir::InputValues in;
      in.vars = {pt};
      in.data = {{0.7, -1.3}};
      lsjit::testing::check_jacobian(traced, in);
      ++checked;
    }
  }
  CHECK(checked >= 100);
}

TEST_CASE("print -> parse -> print is the identity on every test graph at every stage") {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> u(0.3, 0.9);
  for (const TestFunction& t : test_functions()) {
    CAPTURE(t.name);
    const lsjit::ir::Trace traced = trace_function(t);
    lsjit::ir::InputValues in;
    in.vars = {std::vector<double>(t.inputs)};
    for (double& v : in.vars[0]) v = u(rng);
    in.data = {{0.7, -1.3}};
    lsjit::testing::check_round_trip(traced, in);
    lsjit::testing::check_round_trip(lsjit::ir::simplify_residual(traced), in);
    for (auto mode : {lsjit::ir::Accumulation::Forward, lsjit::ir::Accumulation::Reverse})
      lsjit::testing::check_round_trip(lsjit::ir::differentiate(traced, mode), in);
  }
}

TEST_CASE("every op of the op table appears in the finite-difference functions") {
  std::vector<bool> seen(lsjit::ir::kNumOps, false);
  for (const TestFunction& t : test_functions())
    for (const auto& n : trace_function(t).graph.nodes) seen[static_cast<size_t>(n.op)] = true;
  // fma is never traced: fuse_multiply_add makes it, and fuse_multiply_add_test checks its
  // derivative on these functions fused.
  seen[static_cast<size_t>(lsjit::ir::Op::Fma)] = true;
  for (int i = 0; i < lsjit::ir::kNumOps; ++i)
    CHECK_MESSAGE(seen[i], "op not covered: " << lsjit::ir::name(static_cast<lsjit::ir::Op>(i)));
}

TEST_CASE("no tangent input survives differentiation") {
  for (const TestFunction& t : test_functions()) {
    CAPTURE(t.name);
    const auto traced = trace_function(t);
    for (auto g : {lsjit::ir::differentiate(traced).graph, lsjit::ir::simplify_residual(traced).graph})
      for (const auto& n : g.nodes)
        CHECK_FALSE((n.op == lsjit::ir::Op::Input && n.input.kind == lsjit::ir::InputKind::Tangent));
  }
}

TEST_CASE("auto accumulation keeps the smaller of forward and reverse") {
  for (const TestFunction& t : test_functions()) {
    CAPTURE(t.name);
    const auto traced = trace_function(t);
    lsjit::ir::DifferentiationReport report;
    const auto jac = lsjit::ir::differentiate(traced, lsjit::ir::Accumulation::Auto, &report);
    CHECK(jac.graph.op_count() == std::min(report.forward_ops, report.reverse_ops));
    CHECK(report.residual_ops <= jac.graph.op_count());
  }
}
