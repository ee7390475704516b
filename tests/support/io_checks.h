// For the I/O tests: exact comparisons of what the g2o and BAL formats carry, the message a
// reader throws for a text, and an independent BAL camera model.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "lsjit/common/error.h"
#include "lsjit/runtime/io/bal.h"
#include "lsjit/runtime/io/g2o.h"
// (after g2o.h, which includes sym_eigen.h first)
#include <Eigen/Geometry>

namespace lsjit::testing {

// Every number and id equal (==, so bit-exact up to the sign of zero). Edge::line is where
// an edge came from, not part of the graph, so it is not compared.
inline void check_same_graph(const io::PoseGraph& a, const io::PoseGraph& b) {
  REQUIRE(a.dimension == b.dimension);
  CHECK(a.vertex_ids == b.vertex_ids);
  CHECK(a.fixed == b.fixed);
  REQUIRE(a.poses2.size() == b.poses2.size());
  REQUIRE(a.poses3.size() == b.poses3.size());
  REQUIRE(a.edges2.size() == b.edges2.size());
  REQUIRE(a.edges3.size() == b.edges3.size());
  size_t differing = 0;
  for (size_t k = 0; k < a.poses2.size(); ++k)
    differing += a.poses2[k].params() != b.poses2[k].params();
  for (size_t k = 0; k < a.poses3.size(); ++k)
    differing += a.poses3[k].params() != b.poses3[k].params();
  for (size_t k = 0; k < a.edges2.size(); ++k) {
    const auto &x = a.edges2[k], &y = b.edges2[k];
    differing += x.from != y.from || x.to != y.to ||
                 x.measurement.params() != y.measurement.params() ||
                 x.information != y.information || x.sqrt_information != y.sqrt_information;
  }
  for (size_t k = 0; k < a.edges3.size(); ++k) {
    const auto &x = a.edges3[k], &y = b.edges3[k];
    differing += x.from != y.from || x.to != y.to ||
                 x.measurement.params() != y.measurement.params() ||
                 x.information != y.information || x.sqrt_information != y.sqrt_information;
  }
  CHECK_MESSAGE(differing == 0, differing << " poses or edges differ");
}

inline void check_same_bal(const io::BalProblem& a, const io::BalProblem& b) {
  REQUIRE(a.observations.size() == b.observations.size());
  REQUIRE(a.cameras.size() == b.cameras.size());
  REQUIRE(a.points.size() == b.points.size());
  size_t differing = 0;
  for (size_t k = 0; k < a.observations.size(); ++k) {
    const auto &x = a.observations[k], &y = b.observations[k];
    differing += x.camera != y.camera || x.point != y.point || x.xy != y.xy;
  }
  for (size_t k = 0; k < a.cameras.size(); ++k) differing += a.cameras[k] != b.cameras[k];
  for (size_t k = 0; k < a.points.size(); ++k) differing += a.points[k] != b.points[k];
  CHECK_MESSAGE(differing == 0, differing << " observations, cameras or points differ");
}

// The message of the lsjit::Error that parsing `text` as `name` throws, or a marker when it
// parses; a reader that returned anything on error would show here as the marker.
inline std::string g2o_error(const std::string& text, const std::string& name = "t.g2o") {
  try {
    io::parse_g2o(text, name);
  } catch (const lsjit::Error& e) {
    return e.what();
  }
  return "(parsed without error)";
}

inline std::string bal_error(const std::string& text, const std::string& name = "t.bal") {
  try {
    io::parse_bal(text, name);
  } catch (const lsjit::Error& e) {
    return e.what();
  }
  return "(parsed without error)";
}

// P = R·X + t with R from Eigen's angle-axis (not Rodrigues' formula as runtime/io does).
inline Eigen::Vector3d reference_camera_point(const io::BalCamera& c, const Eigen::Vector3d& x) {
  const Eigen::Vector3d w = c.head<3>();
  const double angle = w.norm();
  const Eigen::Matrix3d r = angle > 0 ? Eigen::AngleAxisd(angle, w / angle).toRotationMatrix()
                                      : Eigen::Matrix3d::Identity();
  return r * x + c.segment<3>(3);
}

// The Snavely projection f·(1 + k1‖p‖² + k2‖p‖⁴)·p, p = -P.xy / P.z, spelled out again.
inline Eigen::Vector2d reference_project(const io::BalCamera& c, const Eigen::Vector3d& x) {
  const Eigen::Vector3d camera_point = reference_camera_point(c, x);
  const Eigen::Vector2d p = -camera_point.head<2>() / camera_point(2);
  const double r2 = p.squaredNorm();
  return c(6) * (1 + c(7) * r2 + c(8) * r2 * r2) * p;
}

}  // namespace lsjit::testing
