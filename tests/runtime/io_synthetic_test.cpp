// Synthetic problems (runtime/io/synthetic.h): determinism, counts, consistency with the
// ground truth, the documented noise, and exact round trips through the file formats.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <set>
#include <string>
#include <type_traits>
#include <utility>

#include <Eigen/Eigenvalues>

#include "../support/io_checks.h"
#include "lsjit/runtime/io/synthetic.h"

namespace {

using lsjit::SE2d;
using lsjit::SE3d;
using lsjit::io::BalSpec;
using lsjit::io::GeneratedBal;
using lsjit::io::GeneratedPoseGraph;
using lsjit::io::PoseGraph;
using lsjit::io::PoseGraphSpec;

PoseGraphSpec pose_spec(int dimension, int64_t poses, int64_t closures, double sigma = 0.02,
                        uint64_t seed = 1) {
  PoseGraphSpec s;
  s.dimension = dimension;
  s.poses = poses;
  s.loop_closures = closures;
  s.translation_sigma = s.rotation_sigma = sigma;
  s.seed = seed;
  return s;
}

BalSpec bal_spec(int32_t cameras, int32_t points, int32_t per_point, uint64_t seed = 1) {
  BalSpec s;
  s.cameras = cameras;
  s.points = points;
  s.observations_per_point = per_point;
  s.seed = seed;
  return s;
}

std::string text(const GeneratedPoseGraph& g) { return lsjit::io::format_g2o(g.graph); }
std::string text(const GeneratedBal& g) { return lsjit::io::format_bal(g.initial); }

// The edges of either dimension as (from, to) pairs.
std::vector<std::pair<int64_t, int64_t>> edge_pairs(const PoseGraph& g) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (const auto& e : g.edges2) pairs.emplace_back(e.from, e.to);
  for (const auto& e : g.edges3) pairs.emplace_back(e.from, e.to);
  return pairs;
}

Eigen::Vector3d translation(const GeneratedPoseGraph& g, size_t k) {
  if (g.graph.dimension == 2)
    return Eigen::Vector3d(g.truth2[k].translation()(0), g.truth2[k].translation()(1), 0);
  return g.truth3[k].translation();
}

template <class T>
double sample_std(const std::vector<T>& v) {
  double sum2 = 0;
  for (const T& x : v) sum2 += x * x;
  return std::sqrt(sum2 / static_cast<double>(v.size()));
}

}  // namespace

TEST_CASE("io: synthetic pose graphs are deterministic in the seed") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const std::string a = text(lsjit::io::generate_pose_graph(pose_spec(dim, 300, 40)));
    CHECK(a == text(lsjit::io::generate_pose_graph(pose_spec(dim, 300, 40))));
    CHECK(a != text(lsjit::io::generate_pose_graph(pose_spec(dim, 300, 40, 0.02, 2))));
  }
}

TEST_CASE("io: synthetic pose graphs have the requested poses, odometry and loop closures") {
  const struct {
    int64_t poses, closures;
  } sizes[] = {{1, 0}, {2, 0}, {4, 3}, {5, 6}, {9, 20}, {300, 40}, {2000, 300}};
  for (int dim : {2, 3})
    for (const auto& size : sizes) {
      CAPTURE(dim);
      CAPTURE(size.poses);
      const GeneratedPoseGraph g =
          lsjit::io::generate_pose_graph(pose_spec(dim, size.poses, size.closures));
      CHECK(g.graph.dimension == dim);
      REQUIRE(g.graph.vertex_ids.size() == static_cast<size_t>(size.poses));
      for (int64_t i = 0; i < size.poses; ++i) CHECK(g.graph.vertex_ids[i] == i);
      CHECK((dim == 2 ? g.truth2.size() : g.truth3.size()) == static_cast<size_t>(size.poses));
      CHECK(g.graph.fixed.empty());
      const auto pairs = edge_pairs(g.graph);
      REQUIRE(pairs.size() == static_cast<size_t>(size.poses - 1 + size.closures));
      for (int64_t i = 0; i + 1 < size.poses; ++i) CHECK(pairs[i] == std::make_pair(i, i + 1));
      const std::vector closures(pairs.begin() + (size.poses - 1), pairs.end());
      CHECK(std::set(closures.begin(), closures.end()).size() == closures.size());  // distinct
      CHECK(std::is_sorted(closures.begin(), closures.end()));
      // The walk: unit steps between grid points inside the documented box.
      const double side = std::max(2.0, std::ceil(std::pow(size.poses / 4.0, 1.0 / dim)));
      for (int64_t i = 0; i < size.poses; ++i) {
        const Eigen::Vector3d t = translation(g, i);
        CHECK(t.minCoeff() >= 0);
        CHECK(t.maxCoeff() <= side - 1);
        if (i > 0) CHECK((t - translation(g, i - 1)).norm() == doctest::Approx(1.0));
      }
      for (const auto& [i, j] : closures) {
        CHECK(j > i + 1);
        CHECK(j < size.poses);
        // Plenty of poses per cell: the closures are between neighbouring cells.
        if (size.poses >= 300)
          CHECK((translation(g, i) - translation(g, j)).lpNorm<Eigen::Infinity>() <= 1.0 + 1e-12);
      }
    }
}

TEST_CASE("io: synthetic pose graphs without noise measure the truth exactly") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const GeneratedPoseGraph g = lsjit::io::generate_pose_graph(pose_spec(dim, 500, 80, 0.0));
    const PoseGraph& graph = g.graph;
    double worst_edge = 0, worst_pose = 0;
    if (dim == 2) {
      for (const auto& e : graph.edges2) {
        const SE2d relative = g.truth2[e.from].inverse() * g.truth2[e.to];
        worst_edge = std::max(worst_edge, (e.measurement.params() - relative.params()).norm());
        CHECK(e.information == Eigen::Matrix3d::Identity());
        CHECK(e.sqrt_information == Eigen::Matrix3d::Identity());
      }
      for (size_t k = 0; k < g.truth2.size(); ++k)
        worst_pose = std::max(worst_pose, (graph.poses2[k].params() - g.truth2[k].params()).norm());
    } else {
      for (const auto& e : graph.edges3) {
        const SE3d relative = g.truth3[e.from].inverse() * g.truth3[e.to];
        worst_edge = std::max(worst_edge, e.measurement.local(relative).norm());
        CHECK(e.information == Eigen::Matrix<double, 6, 6>::Identity());
      }
      for (size_t k = 0; k < g.truth3.size(); ++k)
        worst_pose = std::max(worst_pose, graph.poses3[k].local(g.truth3[k]).norm());
    }
    CHECK(worst_edge <= 1e-12);
    CHECK(worst_pose <= 1e-9);  // rounding accumulated over 500 compositions
  }
}

TEST_CASE("io: synthetic pose graph noise has the documented distribution and weights") {
  const double st = 0.1, sr = 0.05;
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    PoseGraphSpec spec = pose_spec(dim, 3000, 1000);
    spec.translation_sigma = st;
    spec.rotation_sigma = sr;
    const GeneratedPoseGraph g = lsjit::io::generate_pose_graph(spec);
    // The residual components of docs/architecture.md, "Conventions", at the truth, U = I.
    std::vector<double> et, er;
    double worst_chain = 0;
    if (dim == 2) {
      for (const auto& e : g.graph.edges2) {
        const SE2d truth = g.truth2[e.from].inverse() * g.truth2[e.to];
        for (int c = 0; c < 2; ++c)
          et.push_back(e.measurement.translation()(c) - truth.translation()(c));
        er.push_back(
            lsjit::io::wrap_angle(e.measurement.rotation().angle() - truth.rotation().angle()));
        CHECK(e.information == Eigen::Vector3d(1 / (st * st), 1 / (st * st), 1 / (sr * sr))
                                   .asDiagonal()
                                   .toDenseMatrix());
        CHECK(e.sqrt_information ==
              Eigen::Vector3d(1 / st, 1 / st, 1 / sr).asDiagonal().toDenseMatrix());
      }
      // The initial estimate composes the measured odometry.
      for (size_t i = 0; i + 1 < g.truth2.size(); ++i)
        worst_chain = std::max(
            worst_chain,
            g.graph.poses2[i + 1].local(g.graph.poses2[i] * g.graph.edges2[i].measurement).norm());
      CHECK(g.graph.poses2[0].params() == SE2d().params());
    } else {
      for (const auto& e : g.graph.edges3) {
        const SE3d truth = g.truth3[e.from].inverse() * g.truth3[e.to];
        for (int c = 0; c < 3; ++c)
          et.push_back(e.measurement.translation()(c) - truth.translation()(c));
        const Eigen::Quaterniond dq =
            e.measurement.rotation().quaternion() * truth.rotation().quaternion().conjugate();
        for (int c = 0; c < 3; ++c) er.push_back(2 * dq.vec()(c));
        for (int c = 0; c < 6; ++c)
          CHECK(e.information(c, c) == (c < 3 ? 1 / (st * st) : 1 / (sr * sr)));
      }
      for (size_t i = 0; i + 1 < g.truth3.size(); ++i)
        worst_chain = std::max(
            worst_chain,
            g.graph.poses3[i + 1].local(g.graph.poses3[i] * g.graph.edges3[i].measurement).norm());
    }
    CHECK(worst_chain <= 1e-12);
    // Thousands of samples: the sample deviation is within a few percent of σ.
    CHECK(sample_std(et) == doctest::Approx(st).epsilon(0.05));
    CHECK(sample_std(er) == doctest::Approx(sr).epsilon(0.05));
  }
}

TEST_CASE("io: synthetic pose graphs round-trip exactly through g2o text and files") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const GeneratedPoseGraph g = lsjit::io::generate_pose_graph(pose_spec(dim, 400, 60, 0.05));
    lsjit::testing::check_same_graph(lsjit::io::parse_g2o(text(g), "generated.g2o"), g.graph);
  }
}

TEST_CASE("io: synthetic pose graph specs out of range are errors saying what was expected") {
  const auto error = [](const PoseGraphSpec& s) -> std::string {
    try {
      lsjit::io::generate_pose_graph(s);
    } catch (const lsjit::Error& e) {
      return e.what();
    }
    return "(generated)";
  };
  CHECK(error(pose_spec(4, 10, 0)) == "pose graph dimension is 4: expected 2 or 3");
  CHECK(error(pose_spec(2, 0, 0)) == "pose graph with 0 poses: expected at least 1");
  CHECK(error(pose_spec(2, 10, 37)) ==
        "37 loop closures requested: expected 0 to 36 for 10 poses (at most one per pair of "
        "non-consecutive poses)");
  CHECK(error(pose_spec(2, 10, 36)) == "(generated)");
  CHECK(error(pose_spec(3, 10, -1)).find("-1 loop closures requested") == 0);
  CHECK(error(pose_spec(2, 10, 0, -0.5)) ==
        "translation noise sigma is -0.5: expected a finite, non-negative standard deviation");
  PoseGraphSpec s = pose_spec(2, 10, 0);
  s.rotation_sigma = NAN;
  CHECK(error(s).find("rotation noise sigma is") == 0);
}

TEST_CASE("io: synthetic indefinite edges: how many were asked, coupled, the rest of the graph as without") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const GeneratedPoseGraph plain = lsjit::io::generate_pose_graph(pose_spec(dim, 120, 30));
    PoseGraphSpec spec = pose_spec(dim, 120, 30);
    spec.indefinite_edges = 9;
    const GeneratedPoseGraph g = lsjit::io::generate_pose_graph(spec);
    REQUIRE(g.indefinite_edges.size() == 9);
    CHECK(std::is_sorted(g.indefinite_edges.begin(), g.indefinite_edges.end()));
    CHECK(std::adjacent_find(g.indefinite_edges.begin(), g.indefinite_edges.end()) == g.indefinite_edges.end());
    CHECK(g.indefinite_edges.back() < g.graph.num_edges());
    CHECK(plain.indefinite_edges.empty());
    // Deterministic in the seed, like the rest of the graph.
    const GeneratedPoseGraph again = lsjit::io::generate_pose_graph(spec);
    CHECK(again.indefinite_edges == g.indefinite_edges);
    const lsjit::io::G2oWriteOptions indefinite{.allow_indefinite_information = true};
    CHECK(lsjit::io::format_g2o(again.graph, indefinite) == lsjit::io::format_g2o(g.graph, indefinite));

    CHECK(g.graph.vertex_ids == plain.graph.vertex_ids);
    const auto check_edges = [&](const auto& edges, const auto& plain_edges, const auto& poses,
                                 const auto& plain_poses) {
      constexpr int n = std::decay_t<decltype(edges[0].information)>::RowsAtCompileTime;
      constexpr int t = n == 3 ? 2 : 3;
      for (size_t k = 0; k < poses.size(); ++k) CHECK(poses[k].params() == plain_poses[k].params());
      for (size_t k = 0; k < edges.size(); ++k) {
        CAPTURE(k);
        const auto &e = edges[k], &p = plain_edges[k];
        CHECK(e.measurement.params() == p.measurement.params());
        const bool chosen = std::binary_search(g.indefinite_edges.begin(), g.indefinite_edges.end(), k);
        if (!chosen) {
          CHECK(e.information == p.information);
          CHECK(e.sqrt_information == p.sqrt_information);
          continue;
        }
        // The plain edge's diagonal Ω plus a symmetric coupling: indefinite, no factor.
        CHECK(e.information == e.information.transpose());
        CHECK(e.information.template topLeftCorner<t, t>() == p.information.template topLeftCorner<t, t>());
        CHECK(e.information.template bottomRightCorner<n - t, n - t>() ==
              p.information.template bottomRightCorner<n - t, n - t>());
        CHECK(!e.information.template topRightCorner<t, n - t>().isZero(0));
        CHECK(!lsjit::io::upper_cholesky(e.information));
        CHECK(e.sqrt_information.array().isNaN().all());
        // With w_t = w_r = w (one sigma) the rank-one coupling s·w·u·vᵀ gives Ω the
        // eigenvalues w(1 ± s), s in [2, 4]: the smallest is in [-3w, -w].
        const double w = p.information(n - 1, n - 1);
        REQUIRE(p.information(0, 0) == w);
        const double smallest =
            Eigen::SelfAdjointEigenSolver<std::decay_t<decltype(e.information)>>(e.information).eigenvalues()(0);
        CHECK(smallest <= -w * (1 - 1e-12));
        CHECK(smallest >= -3 * w * (1 + 1e-12));
      }
    };
    if (dim == 2) check_edges(g.graph.edges2, plain.graph.edges2, g.graph.poses2, plain.graph.poses2);
    else check_edges(g.graph.edges3, plain.graph.edges3, g.graph.poses3, plain.graph.poses3);

    spec.indefinite_edges = static_cast<int64_t>(g.graph.num_edges());  // all of them
    CHECK(lsjit::io::generate_pose_graph(spec).indefinite_edges.size() == g.graph.num_edges());
  }
}

TEST_CASE("io: synthetic indefinite edge counts out of range are errors") {
  PoseGraphSpec s = pose_spec(3, 10, 5);
  s.indefinite_edges = 15;
  try {
    lsjit::io::generate_pose_graph(s);
    FAIL("15 indefinite edges of 14 were generated");
  } catch (const lsjit::Error& e) {
    CHECK(std::string(e.what()) == "15 indefinite edges requested: expected 0 to 14 (the graph's 14 edges)");
  }
  s.indefinite_edges = -1;
  CHECK_THROWS_AS(lsjit::io::generate_pose_graph(s), lsjit::Error);
}

TEST_CASE("io: synthetic BAL problems are deterministic in the seed") {
  const std::string a = text(lsjit::io::generate_bal(bal_spec(10, 200, 4)));
  CHECK(a == text(lsjit::io::generate_bal(bal_spec(10, 200, 4))));
  CHECK(a != text(lsjit::io::generate_bal(bal_spec(10, 200, 4, 7))));
}

TEST_CASE("io: synthetic BAL problems: counts, distinct cameras per point, points in front") {
  for (const BalSpec& spec :
       {bal_spec(1, 5, 1), bal_spec(3, 50, 3), bal_spec(16, 1000, 4), bal_spec(40, 300, 7)}) {
    CAPTURE(spec.cameras);
    const GeneratedBal g = lsjit::io::generate_bal(spec);
    for (const lsjit::io::BalProblem* p : {&g.truth, &g.initial}) {
      CHECK(p->cameras.size() == static_cast<size_t>(spec.cameras));
      CHECK(p->points.size() == static_cast<size_t>(spec.points));
      REQUIRE(p->observations.size() ==
              static_cast<size_t>(spec.points * spec.observations_per_point));
    }
    size_t in_front = 0;
    for (int32_t point = 0; point < spec.points; ++point) {
      std::vector<int32_t> cameras;
      for (int32_t k = 0; k < spec.observations_per_point; ++k) {
        const auto& o = g.truth.observations[point * spec.observations_per_point + k];
        CHECK(o.point == point);  // grouped by point
        cameras.push_back(o.camera);
        const auto& i = g.initial.observations[point * spec.observations_per_point + k];
        CHECK((i.camera == o.camera && i.point == o.point && i.xy == o.xy));
        in_front += lsjit::testing::reference_camera_point(g.truth.cameras[o.camera],
                                                           g.truth.points[point])(2) < 0;
      }
      CHECK(std::is_sorted(cameras.begin(), cameras.end()));
      CHECK(std::adjacent_find(cameras.begin(), cameras.end()) == cameras.end());  // distinct
      CHECK(cameras.front() >= 0);
      CHECK(cameras.back() < spec.cameras);
    }
    CHECK(in_front == g.truth.observations.size());
  }
}

TEST_CASE("io: synthetic BAL observations are the projections of the truth plus pixel noise") {
  BalSpec spec = bal_spec(12, 800, 5);
  spec.pixel_sigma = 0;
  spec.camera_rotation_sigma = spec.camera_translation_sigma = spec.point_sigma = 0;
  const GeneratedBal exact = lsjit::io::generate_bal(spec);
  double worst = 0;
  for (const auto& o : exact.truth.observations)
    worst = std::max(worst, (o.xy - lsjit::testing::reference_project(exact.truth.cameras[o.camera],
                                                                      exact.truth.points[o.point]))
                                .norm());
  CHECK(worst <= 1e-9);
  lsjit::testing::check_same_bal(exact.initial, exact.truth);  // nothing perturbed

  spec.pixel_sigma = 2.0;
  spec.camera_rotation_sigma = 0.01;
  spec.camera_translation_sigma = 0.2;
  spec.point_sigma = 0.3;
  const GeneratedBal noisy = lsjit::io::generate_bal(spec);
  std::vector<double> pixel, rotation, translation, point;
  for (const auto& o : noisy.truth.observations) {
    const Eigen::Vector2d e =
        o.xy - lsjit::testing::reference_project(noisy.truth.cameras[o.camera],
                                                 noisy.truth.points[o.point]);
    pixel.insert(pixel.end(), {e(0), e(1)});
  }
  for (size_t k = 0; k < noisy.truth.cameras.size(); ++k) {
    const lsjit::io::BalCamera d = noisy.initial.cameras[k] - noisy.truth.cameras[k];
    rotation.insert(rotation.end(), {d(0), d(1), d(2)});
    translation.insert(translation.end(), {d(3), d(4), d(5)});
    CHECK(d.tail<3>() == Eigen::Vector3d::Zero());  // f, k1, k2 are kept
  }
  for (size_t k = 0; k < noisy.truth.points.size(); ++k) {
    const Eigen::Vector3d d = noisy.initial.points[k] - noisy.truth.points[k];
    point.insert(point.end(), {d(0), d(1), d(2)});
  }
  CHECK(sample_std(pixel) == doctest::Approx(2.0).epsilon(0.05));
  CHECK(sample_std(point) == doctest::Approx(0.3).epsilon(0.05));
  // Only 36 samples each: a loose check that the scale is the one asked for.
  CHECK(sample_std(rotation) == doctest::Approx(0.01).epsilon(0.5));
  CHECK(sample_std(translation) == doctest::Approx(0.2).epsilon(0.5));
}

TEST_CASE("io: synthetic BAL problems round-trip exactly through BAL text") {
  const GeneratedBal g = lsjit::io::generate_bal(bal_spec(8, 100, 3));
  lsjit::testing::check_same_bal(lsjit::io::parse_bal(lsjit::io::format_bal(g.initial), "i.bal"),
                                 g.initial);
  lsjit::testing::check_same_bal(lsjit::io::parse_bal(lsjit::io::format_bal(g.truth), "t.bal"),
                                 g.truth);
}

TEST_CASE("io: synthetic BAL specs out of range are errors saying what was expected") {
  const auto error = [](const BalSpec& s) -> std::string {
    try {
      lsjit::io::generate_bal(s);
    } catch (const lsjit::Error& e) {
      return e.what();
    }
    return "(generated)";
  };
  CHECK(error(bal_spec(0, 10, 1)) == "BAL problem with 0 cameras: expected at least 1");
  CHECK(error(bal_spec(3, -1, 1)) == "BAL problem with -1 points: expected at least 0");
  CHECK(error(bal_spec(3, 10, 4)) ==
        "4 observations per point: expected 1 to 3 (each point is seen by that many distinct "
        "cameras)");
  CHECK(error(bal_spec(3, 10, 0)).find("0 observations per point: expected 1 to 3") == 0);
  CHECK(error(bal_spec(3, 0, 3)) == "(generated)");
  BalSpec s = bal_spec(3, 10, 2);
  s.pixel_sigma = INFINITY;
  CHECK(error(s) == "pixel noise sigma is inf: expected a finite, non-negative standard deviation");
}
