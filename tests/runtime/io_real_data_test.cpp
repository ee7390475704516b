// The public benchmark files in ../shared/data (README.md there lists them): the readers
// must accept each one with the documented counts, normalize what docs/architecture.md
// ("Conventions") says they normalize, and write it back exactly. Skipped, with a message,
// where the data is absent.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <numbers>
#include <optional>
#include <string>

#include "../support/io_checks.h"
#include "lsjit/runtime/io/bal.h"
#include "lsjit/runtime/io/g2o.h"

namespace {

namespace fs = std::filesystem;
using lsjit::io::PoseGraph;

constexpr double kEps = std::numeric_limits<double>::epsilon();

std::optional<fs::path> data_file(const std::string& name) {
  const fs::path path = fs::path(LSJIT_SHARED_DATA_DIR) / name;
  if (fs::exists(path)) return path;
  MESSAGE("skipped: " << path.string() << " is not present");
  return std::nullopt;
}

template <int N>
void check_factor(const Eigen::Matrix<double, N, N>& u, const Eigen::Matrix<double, N, N>& omega,
                  size_t* bad) {
  bool ok = (u.diagonal().array() > 0).all() && omega == omega.transpose();
  for (int r = 0; r < N; ++r)
    for (int c = 0; c < r; ++c) ok = ok && u(r, c) == 0.0;
  ok = ok && (u.transpose() * u - omega).norm() <= 1e-12 * omega.norm();
  *bad += !ok;
}

// The angles a written SE2 file holds, as the reader would see them.
void check_written_angles(const PoseGraph& g) {
  const std::string text = lsjit::io::format_g2o(g);
  size_t outside = 0, lines = 0, begin = 0;
  while (begin < text.size()) {
    const size_t end = text.find('\n', begin);
    const std::string line = text.substr(begin, end - begin);
    begin = end + 1;
    const bool vertex = line.rfind("VERTEX_SE2 ", 0) == 0, edge = line.rfind("EDGE_SE2 ", 0) == 0;
    if (!vertex && !edge) continue;
    // The angle is the 4th value after the tag of a vertex and the 5th of an edge.
    size_t pos = 0;
    for (int k = 0; k < (vertex ? 4 : 5); ++k) pos = line.find(' ', pos) + 1;
    const double theta = std::stod(line.substr(pos, line.find(' ', pos) - pos));
    outside += !(theta > -std::numbers::pi && theta <= std::numbers::pi);
    ++lines;
  }
  CHECK(lines == g.num_vertices() + g.num_edges());
  CHECK(outside == 0);
}

void check_pose_graph(const std::string& name, int dimension, size_t vertices, size_t edges) {
  CAPTURE(name);
  const auto path = data_file("pose_graph/" + name);
  if (!path) return;
  const PoseGraph g = lsjit::io::read_g2o(*path);
  CHECK(g.dimension == dimension);
  CHECK(g.num_vertices() == vertices);
  CHECK(g.num_edges() == edges);
  size_t not_unit = 0, bad_factor = 0;
  if (dimension == 2) {
    const auto unit = [&](const lsjit::SE2d& p) {
      not_unit += std::abs(p.rotation().params().squaredNorm() - 1) > 4 * kEps;
    };
    for (const auto& p : g.poses2) unit(p);
    for (const auto& e : g.edges2) {
      unit(e.measurement);
      check_factor<3>(e.sqrt_information, e.information, &bad_factor);
    }
    check_written_angles(g);
  } else {
    const auto unit = [&](const lsjit::SE3d& p) {
      not_unit += std::abs(p.rotation().params().squaredNorm() - 1) > 8 * kEps;
    };
    for (const auto& p : g.poses3) unit(p);
    for (const auto& e : g.edges3) {
      unit(e.measurement);
      check_factor<6>(e.sqrt_information, e.information, &bad_factor);
    }
  }
  CHECK(not_unit == 0);
  CHECK(bad_factor == 0);
  lsjit::testing::check_same_graph(lsjit::io::parse_g2o(lsjit::io::format_g2o(g), "written"), g);
}

void check_bal(const std::string& name, size_t cameras, size_t points, size_t observations) {
  CAPTURE(name);
  const auto path = data_file("bal/" + name);
  if (!path) return;
  const lsjit::io::BalProblem p = lsjit::io::read_bal(*path);
  CHECK(p.cameras.size() == cameras);
  CHECK(p.points.size() == points);
  CHECK(p.observations.size() == observations);
  lsjit::testing::check_same_bal(lsjit::io::parse_bal(lsjit::io::format_bal(p), "written"), p);
}

}  // namespace

TEST_CASE("io: real SE2 pose graphs read with their documented counts") {
  check_pose_graph("ring.g2o", 2, 434, 459);
  check_pose_graph("intel.g2o", 2, 1728, 2512);
  check_pose_graph("M3500.g2o", 2, 3500, 5453);
}

TEST_CASE("io: ring.g2o angles beyond pi are wrapped") {
  const auto path = data_file("pose_graph/ring.g2o");
  if (!path) return;
  // Line 3 of the file is "VERTEX_SE2 2 1.937515 -0.000470 6.282233".
  const PoseGraph g = lsjit::io::read_g2o(*path);
  REQUIRE(g.vertex_ids[2] == 2);
  const double wrapped = 6.282233 - 2 * std::numbers::pi;
  CHECK(g.poses2[2].params() ==
        lsjit::SE2d::from_xy_theta(1.937515, -0.000470, lsjit::io::wrap_angle(6.282233)).params());
  CHECK(g.poses2[2].rotation().angle() == doctest::Approx(wrapped).epsilon(1e-12));
}

TEST_CASE("io: real SE3:QUAT pose graphs read with their documented counts") {
  check_pose_graph("tinyGrid3D.g2o", 3, 9, 11);
  check_pose_graph("smallGrid3D.g2o", 3, 125, 297);
  check_pose_graph("sphere2500.g2o", 3, 2500, 4949);
  check_pose_graph("parking-garage.g2o", 3, 1661, 6275);
}

TEST_CASE("io: real BAL problems read with their documented counts") {
  check_bal("dubrovnik-3-7-pre.txt", 3, 7, 19);
  check_bal("problem-49-7776-pre.txt", 49, 7776, 31843);
}
