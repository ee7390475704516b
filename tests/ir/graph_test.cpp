#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "lsjit/ir/graph.h"
#include "lsjit/ir/simplify_rules.h"
#include "lsjit/ir/sym.h"

using namespace lsjit::ir;

TEST_CASE("identical subexpressions are one node") {
  GraphBuilder b;
  NodeId x = b.input({InputKind::Var, 0, 0});
  NodeId y = b.input({InputKind::Var, 0, 1});
  NodeId s1 = b.make(Op::Add, x, y);
  NodeId s2 = b.make(Op::Add, y, x);  // commutative: same node
  CHECK(s1 == s2);
  NodeId m1 = b.make(Op::Sin, s1);
  NodeId m2 = b.make(Op::Sin, s2);
  CHECK(m1 == m2);
  CHECK(b.make(Op::Sub, x, y) != b.make(Op::Sub, y, x));
}

TEST_CASE("the identical-node index holds across its growth and is emptied by finish") {
  GraphBuilder b;
  const NodeId x = b.input({InputKind::Var, 0, 0});
  std::vector<NodeId> first;
  for (int k = 0; k < 2000; ++k) first.push_back(b.make(Op::Mul, x, b.constant(k + 0.5)));
  const size_t size = b.size();
  for (int k = 1999; k >= 0; --k) CHECK(b.make(Op::Mul, x, b.constant(k + 0.5)) == first[k]);
  CHECK(b.size() == size);
  CHECK(b.constant(-0.0) != b.constant(0.0));  // constants are told apart by their bits
  const Graph g = b.finish();
  CHECK(g.nodes.size() == size + 2);
  CHECK(b.size() == 0);
  CHECK(b.input({InputKind::Var, 0, 0}) == 0);
  CHECK(b.make(Op::Mul, 0, b.constant(0.5)) == 2);
}

TEST_CASE("constants fold with the semantics of eval_op") {
  GraphBuilder b;
  NodeId two = b.constant(2.0);
  NodeId r = b.make(Op::Sqrt, two);
  REQUIRE(b[r].is_const());
  CHECK(b[r].value == std::sqrt(2.0));
  NodeId c = b.make(Op::Lt, two, b.constant(3.0));
  CHECK(b[c].type == Type::Bool);
  CHECK(b[c].value == 1.0);
}

TEST_CASE("make checks arity and argument types") {
  GraphBuilder b;
  NodeId x = b.input({InputKind::Var, 0, 0});
  NodeId c = b.make(Op::Lt, x, x);
  CHECK_THROWS_AS(b.make(Op::Add, x), std::logic_error);
  CHECK_THROWS_AS(b.make(Op::Add, x, c), std::logic_error);
  CHECK_THROWS_AS(b.make(Op::Select, x, x, x), std::logic_error);
  CHECK_THROWS_AS(b.make(Op::Neg, 12345), std::logic_error);
}

TEST_CASE("IEEE-safe rules apply by default, the others only when assumed") {
  NodeId x, r;
  {
    GraphBuilder b;
    x = b.input({InputKind::Var, 0, 0});
    CHECK(b.make(Op::Mul, x, b.constant(1.0)) == x);
    CHECK(b.make(Op::Neg, b.make(Op::Neg, x)) == x);
    r = b.make(Op::Sub, x, x);
    CHECK(b[r].op == Op::Sub);  // inf - inf is NaN: not 0 without kAssumeFinite
    r = b.make(Op::Add, x, b.constant(0.0));
    CHECK(b[r].op == Op::Add);  // -0 + 0 is +0
  }
  {
    GraphBuilder b({.assumptions = kAssumeFinite | kIgnoreSignedZero});
    x = b.input({InputKind::Var, 0, 0});
    r = b.make(Op::Sub, x, x);
    CHECK(b[r].is_const(0.0));
    CHECK(b.make(Op::Add, x, b.constant(0.0)) == x);
    CHECK(b[b.make(Op::Mul, b.make(Op::Sin, x), b.constant(0.0))].is_const(0.0));
  }
}

TEST_CASE("every rule parses") { CHECK(rewrite_rules().size() > 30); }
