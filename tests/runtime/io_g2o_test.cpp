// g2o pose graphs (runtime/io/g2o.h): what the reader accepts and returns, exact write ->
// read round trips, atomic writes, and every error with its full message.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numbers>
#include <random>
#include <string>

#include "../support/io_checks.h"
#include "lsjit/runtime/io/g2o.h"

namespace {

namespace fs = std::filesystem;
using lsjit::io::PoseGraph;
using lsjit::testing::g2o_error;

constexpr double kPi = std::numbers::pi;

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// A fresh directory for one test case (ctest runs test cases in parallel processes).
fs::path g2o_dir(const std::string& name) {
  const fs::path dir = fs::path(LSJIT_TEST_TMP_DIR) / ("io_g2o_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

template <int N>
void check_upper_factor(const Eigen::Matrix<double, N, N>& u,
                        const Eigen::Matrix<double, N, N>& omega) {
  for (int r = 0; r < N; ++r) {
    CHECK(u(r, r) > 0.0);
    for (int c = 0; c < r; ++c) CHECK(u(r, c) == 0.0);
  }
  CHECK((u.transpose() * u - omega).norm() <= 1e-14 * omega.norm());
}

constexpr const char* kSe2Text =
    "# a small SE2 graph\n"
    "VERTEX_SE2 10 0 0 0\n"
    "\n"
    "EDGE_SE2 10 7 1 0.5 0.25 4 0.5 0 3 0.25 2   # an edge before its second vertex\n"
    "VERTEX_SE2\t7 1.5 -2 4.0\r\n"
    "FIX 10\n";

constexpr const char* kSe3Text =
    "VERTEX_SE3:QUAT 0 0 0 0 0 0 0 1\n"
    "VERTEX_SE3:QUAT 1 1 2 3 0 0 0 2\n"
    "EDGE_SE3:QUAT 0 1 1 2 3 0.1 0.2 0.3 0.9 "
    "10 1 0 0 0 0 20 2 0 0 0 30 0 0 0 40 3 0 50 4 60\n";

}  // namespace

TEST_CASE("io: g2o reads SE2 vertices, edges and FIX lines among comments and blank lines") {
  const PoseGraph g = lsjit::io::parse_g2o(kSe2Text, "small.g2o");
  CHECK(g.dimension == 2);
  CHECK(g.vertex_ids == std::vector<int64_t>{10, 7});
  REQUIRE(g.poses2.size() == 2);
  CHECK(g.poses3.empty());
  CHECK(g.edges3.empty());
  CHECK(g.poses2[0].params() == lsjit::SE2d().params());
  // 4.0 is outside (-π, π]: it is wrapped first, and the rotation is that of 4 - 2π.
  const double wrapped = 4.0 - 2 * kPi;
  CHECK(g.poses2[1].params() == lsjit::SE2d::from_xy_theta(1.5, -2, wrapped).params());

  REQUIRE(g.edges2.size() == 1);
  const PoseGraph::Edge2& e = g.edges2[0];
  CHECK(e.from == 10);
  CHECK(e.to == 7);
  CHECK(e.line == 4);
  CHECK(e.measurement.params() == lsjit::SE2d::from_xy_theta(1, 0.5, 0.25).params());
  Eigen::Matrix3d omega;
  omega << 4, 0.5, 0, 0.5, 3, 0.25, 0, 0.25, 2;
  CHECK(e.information == omega);
  check_upper_factor<3>(e.sqrt_information, omega);

  CHECK(g.fixed == std::vector<int64_t>{10});
  CHECK(g.held_constant() == std::vector<int64_t>{10});
  CHECK(g.num_vertices() == 2);
  CHECK(g.num_edges() == 1);
  CHECK(g.index_of(7) == 1);
  CHECK(g.index_of(3) == -1);
  CHECK(g.vertex_index().at(10) == 0);
}

TEST_CASE("io: g2o holds the lowest vertex id constant when there are no FIX lines") {
  const PoseGraph g = lsjit::io::parse_g2o("VERTEX_SE2 5 0 0 0\nVERTEX_SE2 -2 0 0 0\n", "t.g2o");
  CHECK(g.fixed.empty());
  CHECK(g.held_constant() == std::vector<int64_t>{-2});
}

TEST_CASE("io: g2o reads SE3:QUAT vertices and edges and normalizes their quaternions") {
  const PoseGraph g = lsjit::io::parse_g2o(kSe3Text, "t.g2o");
  CHECK(g.dimension == 3);
  REQUIRE(g.poses3.size() == 2);
  CHECK(g.poses2.empty());
  CHECK(g.poses3[1].translation() == Eigen::Vector3d(1, 2, 3));
  CHECK(g.poses3[1].rotation().params() == Eigen::Vector4d(0, 0, 0, 1));  // (0 0 0 2) / 2

  REQUIRE(g.edges3.size() == 1);
  const PoseGraph::Edge3& e = g.edges3[0];
  const Eigen::Vector4d q(0.1, 0.2, 0.3, 0.9);
  CHECK((e.measurement.rotation().params() - q / q.norm()).norm() <= 4e-16);
  CHECK(std::abs(e.measurement.rotation().params().squaredNorm() - 1) <= 8 * 2.3e-16);
  CHECK(e.measurement.translation() == Eigen::Vector3d(1, 2, 3));
  Eigen::Matrix<double, 6, 6> omega = Eigen::Matrix<double, 6, 6>::Zero();
  omega.diagonal() << 10, 20, 30, 40, 50, 60;
  omega(0, 1) = omega(1, 0) = 1;
  omega(1, 2) = omega(2, 1) = 2;
  omega(3, 4) = omega(4, 3) = 3;
  omega(4, 5) = omega(5, 4) = 4;
  CHECK(e.information == omega);
  check_upper_factor<6>(e.sqrt_information, omega);
}

TEST_CASE("io: g2o wraps angles into (-pi, pi), pi included") {
  using lsjit::io::wrap_angle;
  CHECK(wrap_angle(0.5) == 0.5);
  CHECK(wrap_angle(kPi) == kPi);
  CHECK(wrap_angle(-kPi) == kPi);
  CHECK(wrap_angle(-3.0) == -3.0);
  CHECK(wrap_angle(3 * kPi) == doctest::Approx(kPi));
  CHECK(wrap_angle(3 * kPi) <= kPi);
  CHECK(wrap_angle(6.282233) == doctest::Approx(6.282233 - 2 * kPi).epsilon(1e-15));
  CHECK(wrap_angle(-7.0) == doctest::Approx(-7.0 + 2 * kPi).epsilon(1e-15));
  for (double t = -40; t < 40; t += 0.37) {
    const double w = wrap_angle(t);
    CHECK(w > -kPi);
    CHECK(w <= kPi);
    CHECK(std::abs(std::remainder(w - t, 2 * kPi)) < 1e-13);  // the same angle
  }
}

TEST_CASE("io: g2o writes vertices, edges and FIX lines with the upper triangle row by row") {
  const std::string text =
      "VERTEX_SE2 0 0 0 0\n"
      "VERTEX_SE2 1 1 -0.5 0.5\n"
      "EDGE_SE2 0 1 1 0 -0.25 1 0.5 0 2 0 3\n"
      "FIX 0\n";
  CHECK(lsjit::io::format_g2o(lsjit::io::parse_g2o(text, "t.g2o")) == text);
  const std::string text3 =
      "VERTEX_SE3:QUAT 3 1 2 3 0 0 0 1\n"
      "VERTEX_SE3:QUAT 4 0 0 0 0.5 0.5 0.5 0.5\n"
      "EDGE_SE3:QUAT 3 4 0.5 0 0 0 0 1 0 1 0 0 0 0 0 2 0 0 0 0 3 0 0 0 4 0 0 5 0 6\n";
  CHECK(lsjit::io::format_g2o(lsjit::io::parse_g2o(text3, "t.g2o")) == text3);
}

TEST_CASE("io: g2o write then read gives back exactly the graph that was read") {
  // Random angles: for a few percent of them cos and sin of atan2(sin θ, cos θ) differ from
  // cos θ and sin θ in the last bit, which the writer must avoid.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::string text2, text3;
  const int n = 400;
  for (int k = 0; k < n; ++k) {
    text2 += "VERTEX_SE2 " + std::to_string(k) + " " + number(10 * u(rng)) + " " +
             number(10 * u(rng)) + " " + number(10 * u(rng)) + "\n";
    text3 += "VERTEX_SE3:QUAT " + std::to_string(k);
    for (int c = 0; c < 7; ++c) text3 += " " + number(u(rng));
    text3 += "\n";
  }
  for (int k = 0; k + 1 < n; ++k) {
    const Eigen::Matrix3d a = Eigen::Matrix3d::NullaryExpr([&] { return u(rng); });
    const Eigen::Matrix3d omega = a * a.transpose() + Eigen::Matrix3d::Identity();
    text2 += "EDGE_SE2 " + std::to_string(k) + " " + std::to_string(k + 1);
    for (int c = 0; c < 3; ++c) text2 += " " + number(4 * u(rng));
    for (int r = 0; r < 3; ++r)
      for (int c = r; c < 3; ++c) text2 += " " + number(omega(r, c));
    text2 += "\n";
    using M6 = Eigen::Matrix<double, 6, 6>;
    const M6 b = M6::NullaryExpr([&] { return u(rng); });
    const M6 omega6 = b * b.transpose() + M6::Identity();
    text3 += "EDGE_SE3:QUAT " + std::to_string(k + 1) + " " + std::to_string(k);
    for (int c = 0; c < 7; ++c) text3 += " " + number(u(rng));
    for (int r = 0; r < 6; ++r)
      for (int c = r; c < 6; ++c) text3 += " " + number(omega6(r, c));
    text3 += "\n";
  }
  text2 += "FIX 3\nFIX 1\n";
  for (const std::string& text : {text2, text3}) {
    const PoseGraph first = lsjit::io::parse_g2o(text, "random.g2o");
    const std::string written = lsjit::io::format_g2o(first);
    const PoseGraph second = lsjit::io::parse_g2o(written, "written.g2o");
    lsjit::testing::check_same_graph(first, second);
    CHECK(lsjit::io::format_g2o(second) == written);
  }
}

TEST_CASE("io: g2o files are written atomically and read back") {
  const fs::path dir = g2o_dir("atomic");
  const fs::path file = dir / "graph.g2o";
  const PoseGraph a = lsjit::io::parse_g2o(kSe2Text, "a.g2o");
  const PoseGraph b = lsjit::io::parse_g2o(kSe3Text, "b.g2o");
  lsjit::io::write_g2o(file, a);
  lsjit::testing::check_same_graph(lsjit::io::read_g2o(file), a);
  lsjit::io::write_g2o(file, b);  // replaces the file
  lsjit::testing::check_same_graph(lsjit::io::read_g2o(file), b);
  size_t entries = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    CHECK(entry.path().filename() == "graph.g2o");  // no temporary file is left behind
    ++entries;
  }
  CHECK(entries == 1);

  const fs::path missing = dir / "no_such_dir" / "graph.g2o";
  std::string message;
  try {
    lsjit::io::write_g2o(missing, a);
  } catch (const lsjit::Error& e) {
    message = e.what();
  }
  CHECK(message == missing.string() + ": cannot write: No such file or directory");
  CHECK(!fs::exists(missing));
}

TEST_CASE("io: g2o read of a missing file or a directory names it") {
  const fs::path missing = g2o_dir("missing") / "absent.g2o";
  std::string message;
  try {
    lsjit::io::read_g2o(missing);
  } catch (const lsjit::Error& e) {
    message = e.what();
  }
  CHECK(message == missing.string() + ": cannot read: No such file or directory");
  message.clear();
  try {
    lsjit::io::read_g2o(missing.parent_path());
  } catch (const lsjit::Error& e) {
    message = e.what();
  }
  CHECK(message == missing.parent_path().string() + ": cannot read: is a directory");
}

TEST_CASE("io: g2o writer refuses graphs the reader would not return") {
  const auto write_error = [](const PoseGraph& g) -> std::string {
    try {
      lsjit::io::format_g2o(g);
    } catch (const lsjit::Error& e) {
      return e.what();
    }
    return "(written)";
  };
  const PoseGraph good = lsjit::io::parse_g2o(kSe2Text, "t.g2o");
  CHECK(write_error(good) == "(written)");
  CHECK(write_error(PoseGraph{}) == "cannot write pose graph: dimension is 0: expected 2 or 3");
  PoseGraph g = good;
  g.poses2.pop_back();
  CHECK(
      write_error(g) ==
      "cannot write pose graph: 2 vertex ids but 1 poses of dimension 2: expected one pose per id");
  g = good;
  g.vertex_ids[1] = 10;
  CHECK(write_error(g) == "cannot write pose graph: vertex ids are not unique");
  g = good;
  g.edges2[0].to = 99;
  CHECK(write_error(g) ==
        "cannot write pose graph: edge 0 (10 -> 99) names vertex 99, which is not in vertex_ids");
  g = good;
  g.edges2[0].information(2, 2) = -1;
  CHECK(write_error(g) ==
        "cannot write pose graph: edge 0 (10 -> 7) has an information matrix that is not "
        "symmetric positive definite");
  g = good;
  g.edges2[0].information(0, 1) = 0.4;  // no longer symmetric
  CHECK(write_error(g).find("not symmetric positive definite") != std::string::npos);
  g = good;
  g.fixed = {3};
  CHECK(write_error(g) == "cannot write pose graph: fixed vertex 3 is not in vertex_ids");
  g = good;
  g.poses2[0] = lsjit::SE2d::from_xy_theta(std::nan(""), 0, 0);
  CHECK(write_error(g) == "cannot write pose graph: vertex 10 has a non-finite pose");
  g = good;
  g.poses3.push_back(lsjit::SE3d());
  CHECK(write_error(g) == "cannot write pose graph: a graph of dimension 2 has SE3 poses or edges");
}

TEST_CASE("io: g2o errors name the file, the line, what was wrong and what was expected") {
  const std::string v0 = "VERTEX_SE2 0 0 0 0\n", v1 = "VERTEX_SE2 1 0 0 0\n";
  const std::string q0 = "VERTEX_SE3:QUAT 0 0 0 0 0 0 0 1\n",
                    q1 = "VERTEX_SE3:QUAT 1 0 0 0 0 0 0 1\n";
  const std::string info6 = " 1 0 0 0 0 0 1 0 0 0 0 1 0 0 0 1 0 0 1 0 1\n";
  const struct {
    std::string text, message;
  } cases[] = {
      {v0 + "VERTEX_XY 1 2 3\n",
       "t.g2o:2: unknown tag 'VERTEX_XY': expected VERTEX_SE2, EDGE_SE2, VERTEX_SE3:QUAT, "
       "EDGE_SE3:QUAT or FIX"},
      {v0 + v1 + "EDGE_SE2 0 1 1 0 0 1 0 0 1\n",
       "t.g2o:3: EDGE_SE2 expects 11 numbers after the tag (i j dx dy dtheta and the 6 "
       "upper-triangle entries of the information matrix), found 9"},
      {"VERTEX_SE2 0 0 0 0 0\n",
       "t.g2o:1: VERTEX_SE2 expects 4 numbers after the tag (id x y theta), found 5"},
      {"VERTEX_SE3:QUAT 0 0 0 0 0 0 1\n",
       "t.g2o:1: VERTEX_SE3:QUAT expects 8 numbers after the tag (id x y z qx qy qz qw), found 7"},
      {q0 + q1 + "EDGE_SE3:QUAT 0 1 0 0 0 0 0 0 1 1 0 0 0 0 0 1 0 0 0 0 1 0 0 0 1 0 0 1 0\n",
       "t.g2o:3: EDGE_SE3:QUAT expects 30 numbers after the tag (i j dx dy dz qx qy qz qw and "
       "the 21 upper-triangle entries of the information matrix), found 29"},
      {"VERTEX_SE2 0 1.2.3 0 0\n", "t.g2o:1: VERTEX_SE2 x is '1.2.3': expected a number"},
      {"VERTEX_SE2 0 0 nan 0\n", "t.g2o:1: VERTEX_SE2 y is 'nan': expected a finite number"},
      {"VERTEX_SE2 0 0 0 -inf\n", "t.g2o:1: VERTEX_SE2 theta is '-inf': expected a finite number"},
      {"VERTEX_SE2 0 1e999 0 0\n",
       "t.g2o:1: VERTEX_SE2 x is '1e999': expected a number within the range of a double"},
      {"VERTEX_SE2 1.5 0 0 0\n", "t.g2o:1: VERTEX_SE2 id is '1.5': expected an integer"},
      {v0 + v1 + "EDGE_SE2 0 1 1 0 0 1 0 0 1 x 1\n",
       "t.g2o:3: EDGE_SE2 information(1,2) is 'x': expected a number"},
      {q0 + q1 + "EDGE_SE3:QUAT 0 one 0 0 0 0 0 0 1" + info6,
       "t.g2o:3: EDGE_SE3:QUAT j is 'one': expected an integer"},
      {"VERTEX_SE2 3 0 0 0\n# again:\nVERTEX_SE2 3 1 1 1\n",
       "t.g2o:3: VERTEX_SE2 3: the vertex id is already defined at line 1: expected unique ids"},
      {v0 + "EDGE_SE2 0 7 1 0 0 1 0 0 1 0 1\n" + v1,
       "t.g2o:2: EDGE_SE2 0 -> 7: vertex 7 is not defined (no VERTEX_SE2 7 in the file)"},
      {q0 + "EDGE_SE3:QUAT 5 0 0 0 0 0 0 0 1" + info6,
       "t.g2o:2: EDGE_SE3:QUAT 5 -> 0: vertex 5 is not defined (no VERTEX_SE3:QUAT 5 in the "
       "file)"},
      {v0 + "FIX 0 5\n", "t.g2o:2: FIX 5: vertex 5 is not defined (no VERTEX_SE2 5 in the file)"},
      {v0 + "FIX\n", "t.g2o:2: FIX expects one or more vertex ids after the tag, found none"},
      {v0 + "FIX zero\n", "t.g2o:2: FIX vertex id is 'zero': expected an integer"},
      {v0 + q1,
       "t.g2o:2: VERTEX_SE3:QUAT in a file of SE2 elements (line 1 is VERTEX_SE2): expected "
       "either SE2 or SE3:QUAT vertices and edges, not both"},
      {q0 + q1 + "EDGE_SE2 0 1 1 0 0 1 0 0 1 0 1\n",
       "t.g2o:3: EDGE_SE2 in a file of SE3 elements (line 1 is VERTEX_SE3:QUAT): expected "
       "either SE2 or SE3:QUAT vertices and edges, not both"},
      {"", "t.g2o:1: no vertices: expected VERTEX_SE2 or VERTEX_SE3:QUAT lines"},
      {"# nothing but a comment\n\n\n",
       "t.g2o:3: no vertices: expected VERTEX_SE2 or VERTEX_SE3:QUAT lines"},
      {"FIX 0\n", "t.g2o:1: no vertices: expected VERTEX_SE2 or VERTEX_SE3:QUAT lines"},
      // The message ends with the way forward: the repair modes that would give a factor.
      {v0 + v1 + "EDGE_SE2 0 1 1 0 0 1 0 0 1 0 -1\n",
       "t.g2o:3: EDGE_SE2 0 -> 1: the information matrix is not positive definite (it has no "
       "Cholesky factor), so the edge's residual is undefined; `--repair-information "
       "nearest-pd` repairs it (API: G2oReadOptions::repair_information); block-diagonal does "
       "not: zeroing the translation-rotation coupling leaves diagonal blocks that are not "
       "positive definite"},
      {v0 + v1 + "\nEDGE_SE2 1 0 1 0 0 1 2 0 1 0 1\n",  // positive diagonal, indefinite
       "t.g2o:4: EDGE_SE2 1 -> 0: the information matrix is not positive definite (it has no "
       "Cholesky factor), so the edge's residual is undefined; `--repair-information "
       "nearest-pd` repairs it (API: G2oReadOptions::repair_information); block-diagonal does "
       "not: zeroing the translation-rotation coupling leaves diagonal blocks that are not "
       "positive definite"},
      {v0 + v1 + "EDGE_SE2 0 1 1 0 0 1 0 2 1 0 1\n",  // indefinite through the x-θ coupling
       "t.g2o:3: EDGE_SE2 0 -> 1: the information matrix is not positive definite (it has no "
       "Cholesky factor), so the edge's residual is undefined; `--repair-information "
       "block-diagonal|nearest-pd` repairs it (API: G2oReadOptions::repair_information)"},
      {q0 + q1 + "EDGE_SE3:QUAT 0 1 0 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
       "t.g2o:3: EDGE_SE3:QUAT 0 -> 1: the information matrix is not positive definite (it has "
       "no Cholesky factor), so the edge's residual is undefined; no --repair-information mode "
       "repairs it: block-diagonal (zeroing the translation-rotation coupling leaves diagonal "
       "blocks that are not positive definite), nearest-pd (the largest eigenvalue is 0: "
       "expected a positive, finite one)"},
      {"VERTEX_SE3:QUAT 4 1 2 3 0 0 0 0\n",
       "t.g2o:1: VERTEX_SE3:QUAT 4: the quaternion (qx qy qz qw) is zero: expected a rotation "
       "(it is normalized after reading)"},
      {q0 + q1 + "EDGE_SE3:QUAT 0 1 0 0 0 0 0 0 0" + info6,
       "t.g2o:3: EDGE_SE3:QUAT 0 -> 1: the quaternion (qx qy qz qw) is zero: expected a "
       "rotation (it is normalized after reading)"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    CHECK(g2o_error(c.text) == c.message);
  }
}

// SE-Sync ships several data sets as edges alone; GTSAM and SE-Sync initialize them. Before,
// the reader stopped at "no vertices".
TEST_CASE("io: g2o without VERTEX lines takes its vertices from the edges, as placeholders") {
  const PoseGraph g = lsjit::io::parse_g2o(
      "EDGE_SE2 4 2 1 0 0 1 0 0 1 0 1\n"
      "EDGE_SE2 2 9 1 0 0 1 0 0 1 0 1\n"
      "FIX 4\n",
      "edges.g2o");
  CHECK(g.vertices_from_edges);
  CHECK(g.dimension == 2);
  CHECK(g.vertex_ids == std::vector<int64_t>{2, 4, 9});
  REQUIRE(g.poses2.size() == 3);
  for (const auto& p : g.poses2) CHECK(p.log().norm() == 0.0);
  CHECK(g.held_constant() == std::vector<int64_t>{4});
  // A file with VERTEX lines still names each undefined vertex (tests above), and one with
  // no edges either is still refused.
  CHECK(g2o_error("FIX 0\n") == "t.g2o:1: no vertices: expected VERTEX_SE2 or VERTEX_SE3:QUAT lines");
  const PoseGraph read = lsjit::io::parse_g2o("VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 1 0 0\nEDGE_SE2 0 1 1 0 0 1 0 0 1 0 1\n", "v.g2o");
  CHECK_FALSE(read.vertices_from_edges);
}
