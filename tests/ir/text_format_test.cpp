#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "../support/ir_errors.h"
#include "lsjit/common/error.h"
#include "lsjit/ir/graph.h"
#include "lsjit/ir/parser.h"
#include "lsjit/ir/printer.h"
#include "lsjit/ir/verify.h"

using namespace lsjit::ir;

namespace {

// print -> parse gives the same trace, and printing that again gives the same bytes.
void check_round_trip(const Trace& t) {
  const std::string text = print(t);
  INFO(text);
  Trace back;
  REQUIRE_NOTHROW(back = parse(text));
  CHECK(back.signature == t.signature);
  CHECK(back.stage == t.stage);
  CHECK(back.graph == t.graph);
  CHECK(print(back) == text);
}

using lsjit::testing::parse_error;

#define CHECK_ERROR(text, location, words)              \
  do {                                                 \
    const std::string message = parse_error(text);     \
    INFO(message);                                     \
    CHECK(message.find(location) == 0);                \
    CHECK(message.find(words) != std::string::npos);   \
  } while (0)

Signature two_var_signature() {
  Signature s;
  s.name = "se2_between";
  s.vars = {{"a", "SE2", 4, 3}, {"b", "Point2", 2, 2}};
  s.data = {{"z", "Vec3", 3, 1}};
  return s;
}

GraphBuilder plain_builder() { return GraphBuilder({.fold_constants = false, .rewrite = false}); }

// Lines 1-4 of a valid text; nodes start at line 5.
const std::string kHead =
    "lsjit.ir 1\n"
    "cost c kind=least_squares stage=traced residuals=2\n"
    "var a : SE2 ambient=4 tangent=3\n"
    "data z : Vec3 rows=3 cols=1\n";

// The same at stage jacobian, where J outputs may be written.
const std::string kJacobianHead =
    "lsjit.ir 1\n"
    "cost c kind=least_squares stage=jacobian residuals=2\n"
    "var a : SE2 ambient=4 tangent=3\n"
    "data z : Vec3 rows=3 cols=1\n";

}  // namespace

TEST_CASE("text format: every op of the op table round-trips") {
  Trace t;
  t.signature = two_var_signature();
  GraphBuilder b = plain_builder();
  const NodeId x = b.input({InputKind::Var, 0, 0});
  const NodeId y = b.input({InputKind::Var, 1, 1});
  const NodeId w = b.input({InputKind::Data, 0, 2});
  const NodeId c = b.constant(0.5);
  const NodeId yes = b.boolean(true);
  std::vector<NodeId> f64_results;
  std::vector<bool> seen(kNumOps, false);
  for (int i = 2; i < kNumOps; ++i) {
    const Op op = static_cast<Op>(i);
    const OpInfo& oi = info(op);
    NodeId args[3] = {kNoNode, kNoNode, kNoNode};
    const NodeId f64_pool[3] = {x, w, c};
    const NodeId bool_pool[3] = {b.make(Op::Lt, x, y), yes, b.make(Op::Ge, w, c)};
    for (int k = 0; k < oi.arity; ++k)
      args[k] = oi.args[k] == Type::Bool ? bool_pool[k] : f64_pool[k];
    const NodeId r = b.make(op, args[0], args[1], args[2], op == Op::Powi ? -3 : 0);
    if (oi.result == Type::F64) f64_results.push_back(r);
  }
  for (int e : {0, 1, 2, -1, std::numeric_limits<int32_t>::min(),
                std::numeric_limits<int32_t>::max()})
    f64_results.push_back(b.make(Op::Powi, y, kNoNode, kNoNode, e));
  t.signature.residual_dim = static_cast<uint32_t>(f64_results.size());
  for (uint32_t r = 0; r < f64_results.size(); ++r) b.add_output({.row = r, .node = f64_results[r]});
  t.graph = b.finish();
  for (const Node& n : t.graph.nodes) seen[static_cast<int>(n.op)] = true;
  for (int i = 0; i < kNumOps; ++i) CHECK_MESSAGE(seen[i], name(static_cast<Op>(i)));

  check_round_trip(t);
  const std::string text = print(t);
  CHECK(text.find(" = powi %1 -2147483648 : f64\n") != std::string::npos);
  CHECK(text.find(" = select %") != std::string::npos);
  CHECK(text.find("\nend\n") != std::string::npos);
}

TEST_CASE("text format: special f64 constants and bool constants keep their bits") {
  const double kInf = std::numeric_limits<double>::infinity();
  const std::vector<double> values = {
      0.0, -0.0, 0.1, 1.0 / 3.0, -1e300, 5e-324, std::numeric_limits<double>::max(),
      std::numeric_limits<double>::min(), 123456789012345678.0, kInf, -kInf,
      std::bit_cast<double>(0x7ff8000000000000ull),   // nan
      std::bit_cast<double>(0xfff8000000000000ull),   // -nan, what x86 makes of 0/0
      std::bit_cast<double>(0x7ff8000000000123ull),   // quiet NaN with a payload
      std::bit_cast<double>(0xfff0000000000001ull)};  // signalling NaN, sign set
  Trace t;
  t.signature.name = "consts";
  t.signature.residual_dim = static_cast<uint32_t>(values.size());
  GraphBuilder b = plain_builder();
  for (uint32_t i = 0; i < values.size(); ++i) b.add_output({.row = i, .node = b.constant(values[i])});
  b.boolean(true);
  b.boolean(false);
  t.graph = b.finish();
  REQUIRE(t.graph.size() == values.size() + 2);

  check_round_trip(t);
  const std::string text = print(t);
  for (const char* line : {"%0 = const 0 : f64", "%1 = const -0 : f64", "%2 = const 0.1 : f64",
                           "%5 = const 5e-324 : f64", "%9 = const inf : f64",
                           "%10 = const -inf : f64", "%11 = const nan : f64",
                           "%12 = const -nan : f64", "%13 = const nan(0x7ff8000000000123) : f64",
                           "%14 = const nan(0xfff0000000000001) : f64",
                           "%15 = const true : bool", "%16 = const false : bool"})
    CHECK_MESSAGE(text.find(std::string(line) + "\n") != std::string::npos, line);
}

TEST_CASE("text format: jacobian outputs and the sparsity comment") {
  Trace t;
  t.signature = two_var_signature();
  t.signature.kind = CostKind::Equality;
  t.signature.residual_dim = 2;
  t.stage = Stage::Jacobian;
  GraphBuilder b = plain_builder();
  const NodeId x = b.input({InputKind::Var, 0, 3});
  const NodeId z = b.input({InputKind::Data, 0, 0});
  const NodeId zero = b.constant(0.0);
  const NodeId s = b.make(Op::Mul, b.make(Op::Sin, x), z);
  b.add_output({.row = 0, .node = s});
  b.add_output({.row = 1, .node = x});
  b.add_output({.role = OutputRole::Jacobian, .row = 0, .var = 0, .col = 0, .node = s});
  b.add_output({.role = OutputRole::Jacobian, .row = 1, .var = 0, .col = 2, .node = x});
  b.add_output({.role = OutputRole::Jacobian, .row = 1, .var = 1, .col = 1, .node = z});
  // Stage jacobian has an output for every entry; the structural zeros are const 0.
  for (const auto& [var, row, col] : {std::tuple{0u, 0u, 1u}, {0u, 0u, 2u}, {0u, 1u, 0u},
                                      {0u, 1u, 1u}, {1u, 0u, 0u}, {1u, 0u, 1u}, {1u, 1u, 0u}})
    b.add_output({.role = OutputRole::Jacobian, .row = row, .var = var, .col = col, .node = zero});
  t.graph = b.finish();
  REQUIRE_NOTHROW(verify(t));

  check_round_trip(t);
  const std::string text = print(t);
  CHECK(text.find("cost se2_between kind=equality stage=jacobian residuals=2\n") != std::string::npos);
  CHECK(text.find("# outputs 12: res 2, J 10\n") != std::string::npos);
  CHECK(text.find("# jacobian sparsity: J[a] 2x3 2/6 nonzero, J[b] 2x2 1/4 nonzero\n"
                  "# J[a] = [x.. | ..x]\n"
                  "# J[b] = [.. | .x]\n") != std::string::npos);
  CHECK(text.find("J[a](1,2) = %0\n") != std::string::npos);
  CHECK(text.find("J[b](1,1) = %1\n") != std::string::npos);
  CHECK(text.find("J[b](1,0) = %2\n") != std::string::npos);
}

TEST_CASE("text format: tangent inputs round-trip at stage traced") {
  Trace t;
  t.signature = two_var_signature();
  t.signature.residual_dim = 2;
  GraphBuilder b = plain_builder();
  const NodeId x = b.input({InputKind::Var, 0, 3});
  const NodeId d = b.input({InputKind::Tangent, 0, 2});
  b.add_output({.row = 0, .node = b.make(Op::Add, x, d)});
  b.add_output({.row = 1, .node = d});
  t.graph = b.finish();
  REQUIRE_NOTHROW(verify(t));

  check_round_trip(t);
  const std::string text = print(t);
  CHECK(text.find("%1 = input tangent a[2] : f64\n") != std::string::npos);
  CHECK(text.find("res[1] = %1\n") != std::string::npos);
}

TEST_CASE("text format: empty names print as defaults and parse back as those names") {
  Trace t;
  t.signature.vars = {{"", "SE3", 7, 6}, {"a", "SE3", 7, 6}, {"", "Scalar", 1, 1}};
  t.signature.data = {{"", "f64", 1, 1}};
  t.signature.residual_dim = 1;
  GraphBuilder b;
  b.add_output({.row = 0, .node = b.make(Op::Add, b.input({InputKind::Var, 0, 0}),
                                        b.input({InputKind::Data, 0, 0}))});
  t.graph = b.finish();
  const std::string text = print(t);
  INFO(text);
  CHECK(text.find("cost unnamed kind=least_squares") != std::string::npos);
  CHECK(text.find("var a_ : SE3 ambient=7 tangent=6\nvar a : SE3 ambient=7 tangent=6\n"
                  "var c : Scalar ambient=1 tangent=1\ndata d0 : f64 rows=1 cols=1\n") !=
        std::string::npos);
  const Trace back = parse(text);
  CHECK(back.graph == t.graph);
  CHECK(back.signature.name == "unnamed");
  CHECK(back.signature.vars[0].name == "a_");
  CHECK(back.signature.data[0].name == "d0");
  CHECK(print(back) == text);
}

TEST_CASE("text format: hand-written text parses to exactly the nodes written") {
  const std::string text =
      "# a comment before the header\n"
      "lsjit.ir 1   # trailing comment\n"
      "\n"
      "cost my.cost-2 kind=inequality_le stage=simplified residuals=1\n"
      "var p : Vec2 ambient=2 tangent=2\n"
      "%0 = input var p[1] : f64\n"
      "  %1   =   mul   %0   %0   :   f64  \r\n"
      "%2 = mul %0 %0 : f64\n"  // not hash-consed away
      "%3 = add %2 %1 : f64\n"  // nor reordered
      "%4 = powi %3 -2 : f64\n"
      "res[0] = %4\n"
      "end\n"
      "# trailing comment\n";
  const Trace t = parse(text);
  CHECK(t.signature.name == "my.cost-2");
  CHECK(t.signature.kind == CostKind::InequalityLe);
  CHECK(t.stage == Stage::Simplified);
  REQUIRE(t.graph.size() == 5);
  CHECK(t.graph[0].input == InputRef{InputKind::Var, 0, 1});
  CHECK(t.graph[2].op == Op::Mul);
  CHECK(t.graph[3].args[0] == 2);
  CHECK(t.graph[3].args[1] == 1);
  CHECK(t.graph[4].int_attr == -2);
  CHECK(t.graph.outputs == std::vector<Output>{{.row = 0, .node = 4}});
  check_round_trip(t);
}

TEST_CASE("parse rejects empty and comment-only input") {
  CHECK_ERROR("", "t.ir:1:1: ", "expected the header 'lsjit.ir 1', found end of file");
  CHECK_ERROR("# nothing\n\n", "t.ir:3:1: ", "expected the header");
}

TEST_CASE("parse rejects a wrong header or version") {
  CHECK_ERROR("lsjit 1\n", "t.ir:1:1: ", "expected the header 'lsjit.ir 1', found 'lsjit'");
  CHECK_ERROR("lsjit.ir 2\n", "t.ir:1:10: ", "expected format version 1, found '2'");
  CHECK_ERROR("lsjit.ir 1 x\n", "t.ir:1:12: ", "expected end of line after the header");
}

TEST_CASE("parse rejects a missing or malformed cost line") {
  CHECK_ERROR("lsjit.ir 1\n", "t.ir:2:1: ", "expected the cost line");
  CHECK_ERROR("lsjit.ir 1\nvar a : SE2 ambient=4 tangent=3\n", "t.ir:2:1: ",
              "expected the cost line 'cost NAME");
  CHECK_ERROR("lsjit.ir 1\ncost a+b kind=equality stage=traced residuals=1\n", "t.ir:2:6: ",
              "expected a cost name");
  CHECK_ERROR("lsjit.ir 1\ncost c kind=squares stage=traced residuals=1\n", "t.ir:2:13: ",
              "expected a cost kind (least_squares,");
  CHECK_ERROR("lsjit.ir 1\ncost c kind=equality stag=traced residuals=1\n", "t.ir:2:22: ",
              "expected 'stage=', found 'stag'");
  CHECK_ERROR("lsjit.ir 1\ncost c kind=equality stage=done residuals=1\n", "t.ir:2:28: ",
              "expected a stage (traced, simplified, jacobian, normal_equations), found 'done'");
  CHECK_ERROR("lsjit.ir 1\ncost c kind=equality stage=traced residuals=-1\n", "t.ir:2:45: ",
              "expected the number of residuals, found '-1'");
}

TEST_CASE("parse rejects a truncated text") {
  Trace t;
  t.signature = two_var_signature();
  t.signature.residual_dim = 1;
  GraphBuilder b;
  b.add_output({.row = 0, .node = b.make(Op::Sin, b.input({InputKind::Var, 0, 0}))});
  t.graph = b.finish();
  const std::string text = print(t);
  // Cut at the start of the last line (`end`), and in the middle of the output line.
  const size_t end_line = text.rfind("end\n");
  const std::string cut = text.substr(0, end_line);
  const std::string lines_before = std::to_string(std::count(cut.begin(), cut.end(), '\n') + 1);
  CHECK_ERROR(cut, "t.ir:" + lines_before + ":1: ",
              "expected 'end' (the text is truncated), found end of file");
  CHECK_ERROR(text.substr(0, end_line - 4), "t.ir:" + std::to_string(std::stoi(lines_before) - 1),
              "expected a node id like %0, found end of line");
  CHECK_ERROR(text.substr(0, text.find(" : f64")), "t.ir:", "expected ':' and the type");
}

TEST_CASE("parse rejects text after end") {
  CHECK_ERROR(kHead + "end\n# fine\nend\n", "t.ir:7:1: ",
              "expected nothing but comments after 'end', found 'end'");
  CHECK_ERROR(kHead + "end x\n", "t.ir:5:5: ", "expected end of line after 'end', found 'x'");
}

TEST_CASE("parse rejects a node whose id is not the next index") {
  CHECK_ERROR(kHead + "%0 = input var a[0] : f64\n%2 = neg %0 : f64\n", "t.ir:6:1: ",
              "expected %1 (nodes are numbered in order), found '%2'");
  CHECK_ERROR(kHead + "%x = input var a[0] : f64\n", "t.ir:5:1: ", "expected a node id, found '%x'");
}

TEST_CASE("parse rejects an argument that is not an earlier node") {
  CHECK_ERROR(kHead + "%0 = input var a[0] : f64\n%1 = add %0 %1 : f64\n", "t.ir:6:13: ",
              "expected a node defined before %1, found '%1'");
  CHECK_ERROR(kHead + "%0 = input var a[0] : f64\n%1 = add %0 %99 : f64\n", "t.ir:6:13: ",
              "found '%99'");
}

TEST_CASE("parse rejects the wrong number of arguments") {
  CHECK_ERROR(kHead + "%0 = input var a[0] : f64\n%1 = add %0 : f64\n", "t.ir:6:13: ",
              "expected argument 2 of add (a node id like %0), found ':'");
  CHECK_ERROR(kHead + "%0 = input var a[0] : f64\n%1 = neg %0 %0 : f64\n", "t.ir:6:13: ",
              "expected ':' and the type (neg takes 1 argument), found '%0'");
}

TEST_CASE("parse rejects arguments of the wrong type") {
  CHECK_ERROR(kHead + "%0 = input var a[0] : f64\n%1 = select %0 %0 %0 : f64\n", "t.ir:6:13: ",
              "expected argument 1 of select to be bool, found %0 of type f64");
  CHECK_ERROR(kHead + "%0 = const true : bool\n%1 = sin %0 : f64\n", "t.ir:6:10: ",
              "expected argument 1 of sin to be f64, found %0 of type bool");
}

TEST_CASE("parse rejects a declared type that is not the op's result type") {
  CHECK_ERROR(kHead + "%0 = input var a[0] : f64\n%1 = lt %0 %0 : f64\n", "t.ir:6:17: ",
              "expected type bool (the result type of lt), found 'f64'");
  CHECK_ERROR(kHead + "%0 = input var a[0] : bool\n", "t.ir:5:23: ",
              "expected type f64 (inputs are f64), found 'bool'");
  CHECK_ERROR(kHead + "%0 = const 1 : bool\n", "t.ir:5:16: ",
              "expected type f64 (the type of a number), found 'bool'");
  CHECK_ERROR(kHead + "%0 = const false : f64\n", "t.ir:5:20: ",
              "expected type bool (the type of true and false), found 'f64'");
  CHECK_ERROR(kHead + "%0 = const 1 : f32\n", "t.ir:5:16: ",
              "expected a type (f64 or bool), found 'f32'");
  CHECK_ERROR(kHead + "%0 = const 1\n", "t.ir:5:13: ",
              "expected ':' and the type of the node, found end of line");
}

TEST_CASE("parse rejects unknown ops") {
  CHECK_ERROR(kHead + "%0 = input var a[0] : f64\n%1 = sine %0 : f64\n", "t.ir:6:6: ",
              "expected an op (const, input, add, mul, ... as in op.h), found 'sine'");
}

TEST_CASE("parse rejects integer attributes except powi's exponent") {
  CHECK_ERROR(kHead + "%0 = input var a[0] : f64\n%1 = neg %0 2 : f64\n", "t.ir:6:13: ",
              "expected ':' and the type (only powi takes an integer), found '2'");
  CHECK_ERROR(kHead + "%0 = input var a[0] : f64\n%1 = powi %0 : f64\n", "t.ir:6:14: ",
              "expected the exponent of powi (a 32-bit integer), found ':'");
  CHECK_ERROR(kHead + "%0 = input var a[0] : f64\n%1 = powi %0 2147483648 : f64\n",
              "t.ir:6:14: ", "expected the exponent of powi (a 32-bit integer)");
  CHECK_ERROR(kHead + "%0 = input var a[0] : f64\n%1 = powi %0 1.5 : f64\n", "t.ir:6:14: ",
              "found '1.5'");
}

TEST_CASE("parse rejects malformed constants") {
  CHECK_ERROR(kHead + "%0 = const 1.5x : f64\n", "t.ir:5:12: ", "expected a constant");
  CHECK_ERROR(kHead + "%0 = const infinity : f64\n", "t.ir:5:12: ", "found 'infinity'");
  CHECK_ERROR(kHead + "%0 = const 1e999 : f64\n", "t.ir:5:12: ",
              "expected an f64 literal within the range of double, found '1e999'");
  CHECK_ERROR(kHead + "%0 = const nan(0x12) : f64\n", "t.ir:5:12: ",
              "expected nan(0x followed by 16 hex digits) with no sign, found 'nan(0x12)'");
  CHECK_ERROR(kHead + "%0 = const nan(0x3ff0000000000000) : f64\n", "t.ir:5:12: ",
              "expected the bits of a NaN in nan(0x...), found 'nan(0x3ff0000000000000)'");
  CHECK_ERROR(kHead + "%0 = const -nan(0x7ff8000000000001) : f64\n", "t.ir:5:12: ",
              "with no sign");
  CHECK_ERROR(kHead + "%0 = const : f64\n", "t.ir:5:12: ", "expected a constant");
}

TEST_CASE("parse rejects unknown variable and data names") {
  CHECK_ERROR(kHead + "%0 = input var q[0] : f64\n", "t.ir:5:16: ",
              "expected a declared variable (a), found 'q'");
  CHECK_ERROR(kHead + "%0 = input data a[0] : f64\n", "t.ir:5:17: ",
              "expected a declared data slot (z), found 'a'");
  CHECK_ERROR(kHead + "%0 = input velocity a[0] : f64\n", "t.ir:5:12: ",
              "expected 'var', 'data' or 'tangent' after input, found 'velocity'");
  CHECK_ERROR(kJacobianHead + "%0 = input var a[0] : f64\nJ[c](0,0) = %0\n", "t.ir:6:3: ",
              "expected a declared variable (a), found 'c'");
}

TEST_CASE("parse rejects input components out of range of their slot") {
  CHECK_ERROR(kHead + "%0 = input var a[4] : f64\n", "t.ir:5:18: ",
              "expected a component below 4 (ambient dimension of a), found '4'");
  CHECK_ERROR(kHead + "%0 = input tangent a[3] : f64\n", "t.ir:5:22: ",
              "expected a component below 3 (tangent dimension of a), found '3'");
  CHECK_ERROR(kHead + "%0 = input data z[3] : f64\n", "t.ir:5:19: ",
              "expected a component below 3 (rows*cols of z), found '3'");
  CHECK_ERROR(kHead + "%0 = input data z(0) : f64\n", "t.ir:5:18: ",
              "expected '[' and a component index, found '('");
}

TEST_CASE("parse rejects duplicate and misplaced declarations") {
  CHECK_ERROR(kHead + "var a : SE3 ambient=7 tangent=6\n", "t.ir:5:5: ",
              "expected a new variable name, found 'a', already declared at line 3");
  CHECK_ERROR(kHead + "data z : f64 rows=1 cols=1\n", "t.ir:5:6: ",
              "expected a new data name, found 'z', already declared at line 4");
  CHECK_ERROR(kHead + "var 2a : SE3 ambient=7 tangent=6\n", "t.ir:5:5: ",
              "expected a variable name (an identifier), found '2a'");
  CHECK_ERROR(kHead + "var b SE3 ambient=7 tangent=6\n", "t.ir:5:7: ",
              "expected ':' and the type of b, found 'SE3'");
  CHECK_ERROR(kHead + "var b : SE3 ambient=7\n", "t.ir:5:22: ",
              "expected 'tangent=', found end of line");
  CHECK_ERROR(kHead + "data w : M rows=65536 cols=65536\n", "t.ir:5:28: ",
              "expected rows*cols below 2^32");
  CHECK_ERROR(kHead + "%0 = input var a[0] : f64\nvar b : SE3 ambient=7 tangent=6\n",
              "t.ir:6:1: ", "(declarations come before nodes), found 'var'");
  CHECK_ERROR(kHead + "let x = 1\n", "t.ir:5:1: ",
              "expected a declaration (var, data), a node, an output or 'end', found 'let'");
}

TEST_CASE("parse rejects outputs out of range, of bool type or given twice") {
  const std::string nodes =
      kJacobianHead + "%0 = input var a[0] : f64\n%1 = lt %0 %0 : bool\n";
  CHECK_ERROR(nodes + "res[2] = %0\n", "t.ir:7:5: ",
              "expected a residual row below 2 (residuals=2), found '2'");
  CHECK_ERROR(nodes + "J[a](2,0) = %0\n", "t.ir:7:6: ", "expected a residual row below 2");
  CHECK_ERROR(nodes + "J[a](0,3) = %0\n", "t.ir:7:8: ",
              "expected a tangent column below 3 (tangent dimension of a), found '3'");
  CHECK_ERROR(nodes + "res[0] = %2\n", "t.ir:7:10: ",
              "expected a defined node (below %2), found '%2'");
  CHECK_ERROR(nodes + "res[0] = %1\n", "t.ir:7:10: ",
              "expected an f64 node, found %1 of type bool");
  CHECK_ERROR(nodes + "res[0] = %0\nJ[a](0,0) = %0\nres[0] = %0\n", "t.ir:9:1: ",
              "expected each output once, found a second one for the same target (the first "
              "is at line 7)");
  CHECK_ERROR(nodes + "res[0] = %0\n%2 = neg %0 : f64\n", "t.ir:8:1: ",
              "expected an output or 'end' (nodes come before outputs), found '%2'");
  CHECK_ERROR(nodes + "res[0] %0\n", "t.ir:7:8: ", "expected '=' and the node, found '%0'");
  CHECK_ERROR(nodes + "J[a](0 0) = %0\n", "t.ir:7:8: ", "expected ',' and the column, found '0'");
}

TEST_CASE("parse errors name the source given by the caller") {
  try {
    parse("lsjit.ir 1\n", "costs/se2.ir");
    FAIL("no error");
  } catch (const lsjit::Error& e) {
    CHECK(std::string(e.what()).find("costs/se2.ir:2:1: expected the cost line") == 0);
  }
}

TEST_CASE("parse rejects sizes of 0") {
  CHECK_ERROR("lsjit.ir 1\ncost c kind=equality stage=traced residuals=0\n", "t.ir:2:45: ",
              "expected the number of residuals (at least 1), found '0'");
  CHECK_ERROR(kHead + "var b : SE3 ambient=0 tangent=6\n", "t.ir:5:21: ",
              "expected the ambient dimension (at least 1), found '0'");
  CHECK_ERROR(kHead + "var b : SE3 ambient=7 tangent=0\n", "t.ir:5:31: ",
              "expected the tangent dimension (at least 1), found '0'");
  CHECK_ERROR(kHead + "data w : M rows=0 cols=1\n", "t.ir:5:17: ",
              "expected the number of rows (at least 1), found '0'");
  CHECK_ERROR(kHead + "data w : M rows=1 cols=0\n", "t.ir:5:24: ",
              "expected the number of columns (at least 1), found '0'");
}

TEST_CASE("parse rejects tangent inputs after stage traced") {
  for (const char* stage : {"simplified", "jacobian"}) {
    std::string head = kHead;
    head.replace(head.find("traced"), 6, stage);
    CHECK_ERROR(head + "%0 = input tangent a[0] : f64\n", "t.ir:5:12: ",
                "expected 'var' or 'data' after input (stage " + std::string(stage) +
                    " has no tangent inputs), found 'tangent'");
  }
}

TEST_CASE("parse rejects Jacobian outputs before stage jacobian") {
  for (const char* stage : {"traced", "simplified"}) {
    std::string head = kHead;
    head.replace(head.find("traced"), 6, stage);
    CHECK_ERROR(head + "%0 = input var a[0] : f64\nres[0] = %0\nres[1] = %0\nJ[a](0,0) = %0\n",
                "t.ir:8:1: ",
                "expected a residual output 'res[ROW]' or 'end' (stage " + std::string(stage) +
                    " has no Jacobian outputs), found 'J'");
  }
}

TEST_CASE("parse rejects a residual row without an output") {
  const std::string nodes = kHead + "%0 = input var a[0] : f64\n";
  CHECK_ERROR(nodes + "res[1] = %0\nend\n", "t.ir:7:1: ",
              "expected an output for every residual row (residuals=2) before 'end', found "
              "none for res[0]");
  CHECK_ERROR(nodes + "res[0] = %0\n  end  # comment\n", "t.ir:7:3: ", "found none for res[1]");
  CHECK_ERROR(nodes + "end\n", "t.ir:6:1: ", "found none for res[0]");
  // The text after `end` is checked first: a truncated or garbled file says so.
  CHECK_ERROR(nodes + "end\nres[0] = %0\n", "t.ir:7:1: ", "expected nothing but comments");
}

TEST_CASE("parse rejects an incomplete Jacobian at stage jacobian") {
  const std::string outputs = kJacobianHead +
                              "%0 = input var a[0] : f64\n"
                              "%1 = const 0 : f64\n"
                              "res[0] = %0\n"
                              "res[1] = %0\n";
  std::string jacobian;  // every entry but J[a](1,1), in scrambled order
  for (const char* entry : {"(1,2)", "(0,0)", "(1,0)", "(0,2)", "(0,1)"})
    jacobian += "J[a]" + std::string(entry) + " = %1\n";
  CHECK_ERROR(outputs + jacobian + "end\n", "t.ir:14:1: ",
              "expected a Jacobian output for every variable, residual row and tangent column "
              "at stage jacobian before 'end', found none for J[a](1,1)");
  CHECK_ERROR(outputs + "end\n", "t.ir:9:1: ", "found none for J[a](0,0)");
  // Missing residual rows are reported first.
  CHECK_ERROR(kJacobianHead + "%0 = input var a[0] : f64\n%1 = const 0 : f64\nres[0] = %0\n" +
                  jacobian + "end\n",
              "t.ir:13:1: ", "found none for res[1]");

  const Trace complete = parse(outputs + jacobian + "J[a](1,1) = %0\nend\n");
  CHECK(complete.stage == Stage::Jacobian);
  CHECK(complete.graph.outputs.size() == 8);
  CHECK_NOTHROW(verify(complete));
  check_round_trip(complete);
}
