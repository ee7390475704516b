// Inputs that broke the g2o and BAL readers' contracts, found by fuzzing or by probing the
// edges that the fuzz targets check (tests/fuzz, docs/testing.md). Each test says what was
// wrong.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "../support/io_checks.h"
#include "lsjit/common/error.h"
#include "lsjit/runtime/io/bal.h"
#include "lsjit/runtime/io/g2o.h"

namespace {

using lsjit::io::PoseGraph;

// g2o.h: a returned quaternion is unit (to the 8ε that write -> read keeps exactly).
void check_unit_quaternion(const Eigen::Vector4d& q, const Eigen::Vector4d& expected) {
  INFO(q.transpose());
  CHECK(std::abs(q.squaredNorm() - 1) <= 8 * std::numeric_limits<double>::epsilon());
  CHECK((q - expected).cwiseAbs().maxCoeff() <= 1e-15);
}

}  // namespace

TEST_CASE("io: g2o normalizes quaternions at the ends of the double range to unit ones") {
  // The norm of (DBL_MAX, DBL_MAX, 0, 0) is inf even by Eigen's stableNorm, and q / inf is
  // zero: the reader returned a zero quaternion, which format_g2o then refused. The norm of
  // subnormal components is off by far more than 8ε: (5e-324, 0, 0, 5e-324) came back as
  // (1, 0, 0, 1).
  const std::string big = "1.7976931348623157e308";
  const std::string identity_information = " 1 0 0 0 0 0 1 0 0 0 0 1 0 0 0 1 0 0 1 0 1";
  const PoseGraph g = lsjit::io::parse_g2o(
      "VERTEX_SE3:QUAT 0 0 0 0 " + big + " " + big + " 0 0\n" +
          "VERTEX_SE3:QUAT 1 0 0 0 5e-324 0 0 5e-324\n" +
          "VERTEX_SE3:QUAT 2 0 0 0 1.5e-323 2e-323 0 0\n" +  // 3 and 4 times 2^-1074
          "EDGE_SE3:QUAT 0 1 0 0 0 " + big + " -" + big + " 0 0" + identity_information + "\n",
      "extremes.g2o");
  REQUIRE(g.poses3.size() == 3);
  REQUIRE(g.edges3.size() == 1);
  const double h = std::sqrt(0.5);
  check_unit_quaternion(g.poses3[0].rotation().params(), {h, h, 0, 0});
  check_unit_quaternion(g.poses3[1].rotation().params(), {h, 0, 0, h});
  check_unit_quaternion(g.poses3[2].rotation().params(), {0.6, 0.8, 0, 0});
  check_unit_quaternion(g.edges3[0].measurement.rotation().params(), {h, -h, 0, 0});
  std::string written;
  REQUIRE_NOTHROW(written = lsjit::io::format_g2o(g));
  lsjit::testing::check_same_graph(lsjit::io::parse_g2o(written, "written.g2o"), g);
}

TEST_CASE("io: NUL bytes and a BOM, as fuzzers write them, end in a message, not a crash") {
  // A line of NULs was one token as long as the input; the whole input was held in memory.
  const auto message = [](auto parse) -> std::string {
    try {
      parse();
    } catch (const lsjit::Error& e) {
      return e.what();
    }
    return "(no error)";
  };
  CHECK(message([] { lsjit::io::parse_g2o(std::string("VERTEX_SE2 0 0\0 0 0\n", 20), "n.g2o"); }) ==
        "n.g2o:1: VERTEX_SE2 x is '0\\x00': expected a number");
  CHECK(message([] { lsjit::io::parse_bal(std::string("\0\0\0", 3), "n.bal"); }) ==
        "n.bal:1: the header's number of cameras is '\\x00\\x00\\x00': expected an integer");
  CHECK(message([] { lsjit::io::parse_bal("\xEF\xBB\xBF" "0 0 0\n", "bom.bal"); }) == "(no error)");
  // The BOM of a BOM-only file is skipped: it is an empty file.
  CHECK(message([] { lsjit::io::parse_g2o("\xEF\xBB\xBF", "bom.g2o"); }) ==
        "bom.g2o:1: no vertices: expected VERTEX_SE2 or VERTEX_SE3:QUAT lines");
}
