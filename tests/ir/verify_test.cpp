// verify(): one test per invariant of verify.h, each breaking a valid trace in one place and
// checking that the message names the invariant, where it is broken and what was expected.
#include <doctest/doctest.h>

#include "../support/ir_errors.h"

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "lsjit/common/error.h"
#include "lsjit/ir/differentiate.h"
#include "lsjit/ir/graph.h"
#include "lsjit/ir/sym.h"
#include "lsjit/ir/verify.h"

using namespace lsjit::ir;

namespace {

Node constant(double v, Type type = Type::F64) {
  Node n;
  n.op = Op::Const;
  n.type = type;
  n.value = v;
  return n;
}

Node input(InputKind kind, uint32_t slot, uint32_t component) {
  Node n;
  n.op = Op::Input;
  n.input = {kind, slot, component};
  return n;
}

Node op(Op o, std::initializer_list<NodeId> args, int32_t int_attr = 0) {
  Node n;
  n.op = o;
  n.type = info(o).result;
  n.num_args = static_cast<uint8_t>(args.size());
  int k = 0;
  for (NodeId a : args) n.args[k++] = a;
  n.int_attr = int_attr;
  return n;
}

Output res(uint32_t row, NodeId node) { return {OutputRole::Residual, row, 0, 0, node}; }
Output jac(uint32_t var, uint32_t row, uint32_t col, NodeId node) {
  return {OutputRole::Jacobian, row, var, col, node};
}

Signature signature() {
  Signature s;
  s.name = "c";
  s.vars = {{"a", "SE2", 4, 3}, {"b", "Scalar", 1, 1}};
  s.data = {{"z", "Vec3", 3, 1}};
  s.residual_dim = 2;
  return s;
}

// A valid traced trace using every kind of node:
//   %0 = input var a[0]     %1 = input tangent a[1]   %2 = input data z[2]   %3 = const 0.5
//   %4 = add %0 %1          %5 = mul %4 %2            %6 = lt %5 %3 (bool)
//   %7 = select %6 %5 %3    %8 = powi %7 -2           %9 = const true (bool)
//   res[0] = %5, res[1] = %8
Trace traced() {
  Trace t;
  t.signature = signature();
  t.stage = Stage::Traced;
  t.graph.nodes = {input(InputKind::Var, 0, 0),
                   input(InputKind::Tangent, 0, 1),
                   input(InputKind::Data, 0, 2),
                   constant(0.5),
                   op(Op::Add, {0, 1}),
                   op(Op::Mul, {4, 2}),
                   op(Op::Lt, {5, 3}),
                   op(Op::Select, {6, 5, 3}),
                   op(Op::Powi, {7}, -2),
                   constant(1.0, Type::Bool)};
  t.graph.outputs = {res(0, 5), res(1, 8)};
  return t;
}

// The same at stage jacobian: %1 reads var a[1] instead of a tangent, and every entry of
// J[a] (2x3) and J[b] (2x1) is an output.
Trace jacobian() {
  Trace t = traced();
  t.stage = Stage::Jacobian;
  t.graph.nodes[1] = input(InputKind::Var, 0, 1);
  for (uint32_t r = 0; r < 2; ++r) {
    for (uint32_t c = 0; c < 3; ++c) t.graph.outputs.push_back(jac(0, r, c, 3));
    t.graph.outputs.push_back(jac(1, r, 0, 8));
  }
  return t;
}


#define CHECK_VIOLATION(trace, invariant, words)                            \
  do {                                                                      \
    const std::string message = lsjit::testing::verify_violation(trace);   \
    INFO(message);                                                          \
    CHECK(message.find("violates " invariant ": ") != std::string::npos);  \
    CHECK(message.find(words) != std::string::npos);                        \
  } while (0)

// The message of the lsjit::Error that verify_signature throws.
std::string signature_error(const Signature& s, ResidualDim dim = ResidualDim::Required) {
  try {
    verify_signature(s, dim);
  } catch (const lsjit::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("verify: valid traces pass") {
  CHECK(lsjit::testing::verify_violation(traced()) == "(no violation)");
  CHECK(lsjit::testing::verify_violation(jacobian()) == "(no violation)");
  Trace simplified = traced();
  simplified.stage = Stage::Simplified;
  simplified.graph.nodes[1] = input(InputKind::Var, 0, 1);
  CHECK(lsjit::testing::verify_violation(simplified) == "(no violation)");
  // Outputs in any order; a node may be several outputs.
  Trace shuffled = jacobian();
  std::swap(shuffled.graph.outputs.front(), shuffled.graph.outputs.back());
  CHECK(lsjit::testing::verify_violation(shuffled) == "(no violation)");
}

TEST_CASE("verify: traced, simplified and differentiated costs pass") {
  Signature s;
  s.name = "traced.cost-1";
  s.vars = {{"x", "Vec2", 2, 2}};
  s.data = {{"p", "f64", 1, 1}};
  Trace t;
  {
    lsjit::Tracer tracer(s);
    const lsjit::Sym x0 = tracer.var(0, 0) + tracer.tangent(0, 0);
    const lsjit::Sym x1 = tracer.var(0, 1) + tracer.tangent(0, 1);
    const lsjit::Sym p = tracer.data(0, 0);
    tracer.set_residual({sin(x0) * p, lsjit::select(x0 < x1, x1 * x1, pow(x0, 3)), p});
    t = tracer.finish();
  }
  CHECK(lsjit::testing::verify_violation(t) == "(no violation)");
  CHECK(lsjit::testing::verify_violation(simplify_residual(t)) == "(no violation)");
  for (Accumulation mode : {Accumulation::Forward, Accumulation::Reverse, Accumulation::Auto})
    CHECK(lsjit::testing::verify_violation(differentiate(t, mode)) == "(no violation)");
}

TEST_CASE("verify: signature") {
  Trace t = traced();
  t.signature.name = "bad name";
  CHECK_VIOLATION(t, "signature", "expected a cost name of letters, digits, '_', '.' and '-', "
                                  "found 'bad name'");
  t = traced();
  t.signature.residual_dim = 0;
  CHECK_VIOLATION(t, "signature", "expected at least 1 residual, found residual_dim 0");
  t = traced();
  t.signature.vars[1].name = "1x";
  CHECK_VIOLATION(t, "signature", "found '1x' (variable slot 1)");
  t = traced();
  t.signature.vars[1].name = "a";
  CHECK_VIOLATION(t, "signature",
                  "expected unique variable names, found 'a' for variable slots 0 and 1");
  t = traced();
  t.signature.vars[0].tangent = 0;
  CHECK_VIOLATION(t, "signature", "found ambient=4 tangent=0");
  t = traced();
  t.signature.data[0].type = "Vec 3";
  CHECK_VIOLATION(t, "signature", "found 'Vec 3'");
  // The message says which cost and which stage.
  CHECK(lsjit::testing::verify_violation(t).find("lsjit::ir::verify: cost 'c' at stage traced violates") == 0);
}

TEST_CASE("verify_signature: the rules, as lsjit::Error naming the cost") {
  CHECK(signature_error(signature()) == "(no error)");
  Signature s = signature();
  s.name = "";
  CHECK(signature_error(s).find("lsjit: cost '': expected a cost name") == 0);
  s = signature();
  s.name = "tab\there";
  CHECK(signature_error(s).find("found 'tab\\x09here'") != std::string::npos);
  s = signature();
  s.name = "c.d-e_1";  // every allowed character class
  CHECK(signature_error(s) == "(no error)");

  s = signature();
  s.residual_dim = 0;
  CHECK(signature_error(s).find("expected at least 1 residual") != std::string::npos);
  CHECK(signature_error(s, ResidualDim::MayBeZero) == "(no error)");

  for (const char* bad : {"", "1x", "a-b", "a b", "é"}) {
    s = signature();
    s.vars[0].name = bad;
    CHECK_MESSAGE(signature_error(s).find("expected variable names that are identifiers") !=
                      std::string::npos,
                  bad);
    s = signature();
    s.data[0].name = bad;
    CHECK_MESSAGE(signature_error(s).find("expected data names that are identifiers") !=
                      std::string::npos,
                  bad);
  }
  s = signature();
  s.data.push_back({"z", "f64", 1, 1});
  CHECK(signature_error(s) == "lsjit: cost 'c': expected unique data names, found 'z' for "
                              "data slots 0 and 1");
  s = signature();
  s.data.push_back({"a", "f64", 1, 1});  // a variable and a data slot may share a name
  CHECK(signature_error(s) == "(no error)");

  for (const char* bad : {"", "SE 3", "SE3#x", "a\tb"}) {
    s = signature();
    s.vars[0].type = bad;
    CHECK_MESSAGE(signature_error(s).find("expected a type name without whitespace or '#' "
                                          "for variable 'a'") != std::string::npos,
                  bad);
  }
  s = signature();
  s.vars[1].ambient = 0;
  CHECK(signature_error(s).find("for variable 'b', found ambient=0 tangent=1") !=
        std::string::npos);
  s = signature();
  s.data[0].cols = 0;
  CHECK(signature_error(s).find("for data 'z', found rows=3 cols=0") != std::string::npos);
  s = signature();
  s.data[0].rows = s.data[0].cols = 65536;
  CHECK(signature_error(s).find("rows*cols below 2^32") != std::string::npos);
}

TEST_CASE("verify: stage") {
  Trace t = traced();
  t.stage = static_cast<Stage>(7);
  CHECK_VIOLATION(t, "stage", "expected traced, simplified, jacobian or normal_equations, found stage #7");
}

TEST_CASE("verify: op table") {
  Trace t = traced();
  t.graph.nodes[4].op = static_cast<Op>(200);
  CHECK_VIOLATION(t, "op table", "node %4: expected an op of the op table, found op #200");
}

TEST_CASE("verify: leaves have no arguments") {
  Trace t = traced();
  t.graph.nodes[3].num_args = 1;
  t.graph.nodes[3].args[0] = 0;
  CHECK_VIOLATION(t, "leaves", "node %3 (const): expected no arguments, found 1 argument(s)");
  t = traced();
  t.graph.nodes[1].args[2] = 0;  // num_args 0 but an argument id set
  CHECK_VIOLATION(t, "leaves", "node %1 (input): expected no arguments, found 0 argument(s), "
                               "args = none none %0");
}

TEST_CASE("verify: arity") {
  Trace t = traced();
  t.graph.nodes[4].num_args = 1;
  CHECK_VIOLATION(t, "arity", "node %4 (add): expected 2 argument(s) and no others");
  t = traced();
  t.graph.nodes[8].args[1] = 0;  // powi with a second argument
  CHECK_VIOLATION(t, "arity", "node %8 (powi): expected 1 argument(s) and no others, found "
                              "1 argument(s), args = %7 %0 none");
}

TEST_CASE("verify: topological order") {
  Trace t = traced();
  t.graph.nodes[5].args[1] = 5;
  CHECK_VIOLATION(t, "topological order",
                  "node %5 (mul): expected argument 2 to be a node before %5, found %5");
  t = traced();
  t.graph.nodes[4].args[0] = 9;
  CHECK_VIOLATION(t, "topological order", "node %4 (add): expected argument 1 to be a node "
                                          "before %4, found %9");
  t = traced();
  t.graph.nodes[4].args[0] = kNoNode;
  CHECK_VIOLATION(t, "topological order", "found no node");
}

TEST_CASE("verify: argument types") {
  Trace t = traced();
  t.graph.nodes[7].args[0] = 5;  // select on an f64
  CHECK_VIOLATION(t, "argument types",
                  "node %7 (select): expected argument 1 of type bool, found %5 of type f64");
  t = traced();
  t.graph.nodes[8].args[0] = 6;  // powi of a bool
  CHECK_VIOLATION(t, "argument types", "expected argument 1 of type f64, found %6 of type bool");
}

TEST_CASE("verify: result type") {
  Trace t = traced();
  t.graph.nodes[6].type = Type::F64;  // lt is bool
  CHECK_VIOLATION(t, "result type", "node %6 (lt): expected type bool, found type f64");
  t = traced();
  t.graph.nodes[0].type = Type::Bool;
  CHECK_VIOLATION(t, "result type", "node %0 (input): expected type f64, found type bool");
  t = traced();
  t.graph.nodes[9].value = 2.0;
  CHECK_VIOLATION(t, "result type", "node %9 (const): expected a bool constant of value 0 or 1");
  t = traced();
  t.graph.nodes[3].type = static_cast<Type>(5);
  CHECK_VIOLATION(t, "result type", "expected type f64 or bool, found type #5");
}

TEST_CASE("verify: only powi has an integer attribute") {
  Trace t = traced();
  t.graph.nodes[4].int_attr = 3;
  CHECK_VIOLATION(t, "int attribute", "node %4 (add): expected int_attr 0 (only powi has an "
                                      "integer attribute), found int_attr 3");
  t = traced();
  t.graph.nodes[2].int_attr = -1;
  CHECK_VIOLATION(t, "int attribute", "node %2 (input)");
  t = traced();
  t.graph.nodes[8].int_attr = 0;  // powi's exponent may be anything, 0 included
  CHECK(lsjit::testing::verify_violation(t) == "(no violation)");
}

TEST_CASE("verify: unused fields are zero") {
  Trace t = traced();
  t.graph.nodes[4].value = -0.0;
  CHECK_VIOLATION(t, "unused fields", "node %4 (add): expected value +0 (only a const has a value)");
  t = traced();
  t.graph.nodes[3].input.slot = 1;
  CHECK_VIOLATION(t, "unused fields", "node %3 (const): expected the default input reference");
}

TEST_CASE("verify: input references are in range of the signature") {
  Trace t = traced();
  t.graph.nodes[0].input.slot = 2;
  CHECK_VIOLATION(t, "input range",
                  "node %0 (input): expected var slot below 2 (the number of variables), found slot 2");
  t = traced();
  t.graph.nodes[0].input.component = 4;
  CHECK_VIOLATION(t, "input range",
                  "expected var component below 4 (ambient dimension of a), found component 4");
  t = traced();
  t.graph.nodes[1].input.component = 3;
  CHECK_VIOLATION(t, "input range",
                  "expected tangent component below 3 (tangent dimension of a), found component 3");
  t = traced();
  t.graph.nodes[2].input.slot = 1;
  CHECK_VIOLATION(t, "input range", "expected data slot below 1 (the number of data slots)");
  t = traced();
  t.graph.nodes[2].input.component = 3;
  CHECK_VIOLATION(t, "input range",
                  "expected data component below 3 (rows*cols of z), found component 3");
  t = traced();
  t.graph.nodes[2].input.kind = static_cast<InputKind>(9);
  CHECK_VIOLATION(t, "input range", "expected an input kind var, data or tangent, found kind #9");
}

TEST_CASE("verify: stage rules") {
  // Traced and simplified: residual outputs only.
  Trace t = traced();
  t.graph.outputs.push_back(jac(0, 0, 0, 3));
  CHECK_VIOLATION(t, "stage rules", "output 2 (J[a](0,0)): expected residual outputs only at "
                                    "stage traced, found a Jacobian output");
  // Simplified and jacobian: no tangent inputs.
  t = traced();
  t.stage = Stage::Simplified;
  CHECK_VIOLATION(t, "stage rules", "node %1 (input): expected no tangent input at stage "
                                    "simplified (only traced has them), found input tangent a[1]");
  t = jacobian();
  t.graph.nodes[1] = input(InputKind::Tangent, 0, 1);
  CHECK_VIOLATION(t, "stage rules", "expected no tangent input at stage jacobian");
  // Jacobian: every entry.
  t = jacobian();
  t.graph.outputs.erase(t.graph.outputs.begin() + 6);  // J[a](1,0)
  CHECK_VIOLATION(t, "stage rules", "the outputs: expected an output for every J[var](row, col) "
                                    "at stage jacobian, found no output J[a](1,0)");
  t = jacobian();
  t.graph.outputs.pop_back();  // J[b](1,0)
  CHECK_VIOLATION(t, "stage rules", "found no output J[b](1,0)");
  t = jacobian();
  t.graph.outputs.resize(2);
  CHECK_VIOLATION(t, "stage rules", "found no output J[a](0,0)");
}

TEST_CASE("verify: output nodes exist and are f64") {
  Trace t = traced();
  t.graph.outputs[1].node = 10;
  CHECK_VIOLATION(t, "output node", "output 1 (res[1]): expected a node below %10, found %10");
  t.graph.outputs[1].node = kNoNode;
  CHECK_VIOLATION(t, "output node", "found no node");
  t = traced();
  t.graph.outputs[0].node = 6;
  CHECK_VIOLATION(t, "output node", "output 0 (res[0]): expected an f64 node, found %6 of type bool");
  t = traced();
  t.graph.outputs[0].role = static_cast<OutputRole>(9);
  CHECK_VIOLATION(t, "output node",
                  "expected role residual, jacobian, cost, gradient or hessian, found role #9");
}

TEST_CASE("verify: residual outputs") {
  Trace t = traced();
  t.graph.outputs[0].var = 1;
  CHECK_VIOLATION(t, "residual output", "output 0 (res[0]): expected var 0 and col 0 on a "
                                        "residual output, found var 1 col 0");
  t = traced();
  t.graph.outputs[0].col = 2;
  CHECK_VIOLATION(t, "residual output", "found var 0 col 2");
  t = traced();
  t.graph.outputs[1].row = 2;
  CHECK_VIOLATION(t, "residual output",
                  "output 1 (res[2]): expected a row below 2 (residual_dim 2), found row 2");
}

TEST_CASE("verify: jacobian outputs") {
  Trace t = jacobian();
  t.graph.outputs.push_back(jac(2, 0, 0, 3));
  CHECK_VIOLATION(t, "jacobian output",
                  "output 10 (J[#2](0,0)): expected a variable slot below 2, found var 2");
  t = jacobian();
  t.graph.outputs[2].row = 2;
  CHECK_VIOLATION(t, "jacobian output",
                  "output 2 (J[a](2,0)): expected a row below 2 (residual_dim 2), found row 2");
  t = jacobian();
  t.graph.outputs[2].col = 3;
  CHECK_VIOLATION(t, "jacobian output", "output 2 (J[a](0,3)): expected a column below 3 "
                                        "(tangent dimension of a), found col 3");
}

TEST_CASE("verify: each output target once") {
  Trace t = traced();
  t.graph.outputs.push_back(res(0, 8));
  CHECK_VIOLATION(t, "unique outputs", "output 2 (res[0]): expected each output target once, "
                                       "found a second output for it (the first is output 0)");
  t = jacobian();
  t.graph.outputs.insert(t.graph.outputs.begin(), jac(1, 1, 0, 3));
  CHECK_VIOLATION(t, "unique outputs", "output 10 (J[b](1,0))");
}

TEST_CASE("verify: every residual row has an output") {
  Trace t = traced();
  t.graph.outputs.erase(t.graph.outputs.begin());
  CHECK_VIOLATION(t, "residual rows",
                  "the outputs: expected an output for every residual row, found no output res[0]");
  t = jacobian();
  t.graph.outputs.erase(t.graph.outputs.begin() + 1);
  CHECK_VIOLATION(t, "residual rows", "found no output res[1]");  // before the missing J
}

TEST_CASE("first_missing_output: residual rows, then J by var, row, col") {
  const Signature s = signature();
  CHECK_FALSE(first_missing_output(s, Stage::Traced, {res(1, 0), res(0, 0)}).has_value());
  CHECK(first_missing_output(s, Stage::Traced, {res(1, 0)}) == res(0, kNoNode));
  CHECK(first_missing_output(s, Stage::Simplified, {res(0, 0), res(0, 0)}) == res(1, kNoNode));
  CHECK(first_missing_output(s, Stage::Jacobian, {res(0, 0), res(1, 0)}) == jac(0, 0, 0, kNoNode));
  std::vector<Output> all = jacobian().graph.outputs;
  CHECK_FALSE(first_missing_output(s, Stage::Jacobian, all).has_value());
  all.erase(all.begin() + 8);  // J[a](1,2)
  all.push_back(jac(5, 0, 0, 0));  // out of range: ignored
  CHECK(first_missing_output(s, Stage::Jacobian, all) == jac(0, 1, 2, kNoNode));
  CHECK_FALSE(first_missing_output(s, Stage::Traced, all).has_value());
}

TEST_CASE("the name rules and output names") {
  CHECK(is_identifier("_a1"));
  CHECK_FALSE(is_identifier("1a"));
  CHECK_FALSE(is_identifier(""));
  CHECK(is_cost_name("se2.between-v2"));
  CHECK_FALSE(is_cost_name("a+b"));
  CHECK(is_type_name("Mat3x3"));
  CHECK(is_type_name("VecN<4>"));
  CHECK_FALSE(is_type_name("a#b"));
  CHECK(quoted("a\nb") == "'a\\x0ab'");
  CHECK(output_name(signature(), res(3, 0)) == "res[3]");
  CHECK(output_name(signature(), jac(1, 0, 0, 0)) == "J[b](0,0)");
}

TEST_CASE("cost kinds and stages are found by name") {
  for (CostKind k : {CostKind::LeastSquares, CostKind::Equality, CostKind::InequalityLe,
                     CostKind::InequalityGe})
    CHECK(cost_kind_from_name(cost_kind_name(k)) == k);
  for (Stage s : {Stage::Traced, Stage::Simplified, Stage::Jacobian, Stage::NormalEquations})
    CHECK(stage_from_name(stage_name(s)) == s);
  CHECK_FALSE(cost_kind_from_name("least-squares").has_value());
  CHECK_FALSE(stage_from_name("Traced").has_value());
  CHECK_FALSE(stage_from_name("").has_value());
}

TEST_CASE("the Tracer rejects signatures with bad names") {
  auto tracer_error = [](const Signature& s) -> std::string {
    try {
      lsjit::Tracer t(s);
    } catch (const lsjit::Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  Signature s = signature();
  s.residual_dim = 0;  // the tracer takes it from the residual
  CHECK(tracer_error(s) == "(no error)");

  Signature bad = s;
  bad.name = "bad name";
  CHECK(tracer_error(bad) == "lsjit: cost 'bad name': expected a cost name of letters, digits, "
                             "'_', '.' and '-', found 'bad name'");
  bad = s;
  bad.vars[1].name = "a";
  CHECK(tracer_error(bad) == "lsjit: cost 'c': expected unique variable names, found 'a' for "
                             "variable slots 0 and 1");
  bad = s;
  bad.vars[0].name = "1x";
  CHECK(tracer_error(bad) == "lsjit: cost 'c': expected variable names that are identifiers "
                             "([A-Za-z_][A-Za-z0-9_]*), found '1x' (variable slot 0)");
  bad = s;
  bad.data[0].name = "z z";
  CHECK(tracer_error(bad).find("found 'z z' (data slot 0)") != std::string::npos);

  // A rejected signature leaves no active trace behind.
  CHECK(lsjit::Tracer::active() == nullptr);
  {
    lsjit::Tracer outer(s);
    CHECK(tracer_error(bad) != "(no error)");
    CHECK(lsjit::Tracer::active() == &outer);
  }
  CHECK(lsjit::Tracer::active() == nullptr);
}
