// IR texts that broke the parser's contract (an lsjit::Error for every bad input, never a
// crash or an unbounded allocation), found by fuzz-like probing (tests/fuzz,
// docs/testing.md). Each test says what was wrong.
#include <doctest/doctest.h>

#include <string>

#include "../support/ir_errors.h"
#include "lsjit/ir/parser.h"

using lsjit::testing::parse_error;

namespace {

const std::string kFuzzHead = "lsjit.ir 1\ncost c kind=least_squares stage=traced residuals=1\n";
// A complete trace after the declaration of `a`.
const std::string kBody = "%0 = input var a[0] : f64\nres[0] = %0\nend\n";

}  // namespace

TEST_CASE("parse: absurd variable sizes are errors, not 12 GB allocations") {
  // tangent=4000000000 parsed, and differentiation then died of std::bad_alloc.
  CHECK(parse_error(kFuzzHead + "var a : M ambient=1 tangent=4000000000\n" + kBody) ==
        "t.ir:3:29: expected the tangent dimension (at most 1024), found '4000000000'");
  CHECK(parse_error(kFuzzHead + "var a : M ambient=4000000000 tangent=1\n" + kBody) ==
        "t.ir:3:19: expected the ambient dimension (at most 1024), found '4000000000'");
  CHECK(parse_error(kFuzzHead + "var a : M ambient=1025 tangent=1\n" + kBody) ==
        "t.ir:3:19: expected the ambient dimension (at most 1024), found '1025'");
  // The limit itself is allowed, for a type parse does not know.
  CHECK(parse_error(kFuzzHead + "var a : M ambient=1024 tangent=1024\n" + kBody) ==
        "(parsed without error)");
}

TEST_CASE("parse: the types of docs/variables.md have their own sizes") {
  CHECK(parse_error(kFuzzHead + "var a : SE3 ambient=5 tangent=6\n" + kBody) ==
        "t.ir:3:21: expected ambient=7, the ambient dimension of SE3, found '5'");
  CHECK(parse_error(kFuzzHead + "var a : SE3 ambient=7 tangent=7\n" + kBody) ==
        "t.ir:3:31: expected tangent=6, the tangent dimension of SE3, found '7'");
  CHECK(parse_error(kFuzzHead + "var a : Vec2 ambient=4000000000 tangent=2\n" + kBody) ==
        "t.ir:3:22: expected ambient=2, the ambient dimension of Vec2, found '4000000000'");
  CHECK(parse_error(kFuzzHead + "var a : SO2 ambient=2 tangent=2\n" + kBody).find(
            "expected tangent=1, the tangent dimension of SO2") != std::string::npos);
  CHECK(parse_error(kFuzzHead + "var a : Vec32 ambient=31 tangent=32\n" + kBody).find(
            "expected ambient=32, the ambient dimension of Vec32") != std::string::npos);
  CHECK(parse_error(kFuzzHead + "var a : Scalar ambient=3 tangent=1\n" + kBody).find(
            "expected ambient=1, the ambient dimension of Scalar") != std::string::npos);
  for (const std::string decl :
       {"Scalar ambient=1 tangent=1", "SO2 ambient=2 tangent=1", "SE2 ambient=4 tangent=3",
        "SO3 ambient=4 tangent=3", "SE3 ambient=7 tangent=6", "Vec1 ambient=1 tangent=1",
        "Vec12 ambient=12 tangent=12", "Vec13 ambient=13 tangent=13", "Vec32 ambient=32 tangent=32",
        "Vec33 ambient=3 tangent=3",
        "SE3.ambient ambient=7 tangent=7"}) {
    CAPTURE(decl);
    CHECK(parse_error(kFuzzHead + "var a : " + decl + "\n" + kBody) == "(parsed without error)");
  }
}

TEST_CASE("parse: a long or binary token is echoed cut and escaped") {
  const std::string message = parse_error(kFuzzHead + "var a : M ambient=1 tangent=1\n%0 = " +
                                          std::string(100000, 'x') + "\n");
  CHECK(message == "t.ir:4:6: expected an op (const, input, add, mul, ... as in op.h), found '" +
                       std::string(40, 'x') + "'...");
  CHECK(parse_error(kFuzzHead + std::string("var a\x01\0 : M", 11) + "\n") ==
        "t.ir:3:6: expected ':' and the type of a, found '\\x01'");
}

TEST_CASE("parse: a UTF-8 byte order mark may start the text") {
  CHECK(parse_error("\xEF\xBB\xBF" + kFuzzHead + "var a : M ambient=1 tangent=1\n" + kBody) ==
        "(parsed without error)");
  CHECK(parse_error(kFuzzHead + "\xEF\xBB\xBF" + "var a : M ambient=1 tangent=1\n" + kBody)
            .find("t.ir:3:1: expected a declaration") == 0);
}
