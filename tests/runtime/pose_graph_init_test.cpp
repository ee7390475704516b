// Chordal initialization of pose graphs (runtime/pose_graph_init.h): exact on noise-free
// graphs from any start, anchors kept bit for bit, every component anchored, and a start
// from which LM does at least as well as from the file's poses.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "../support/memory_cache.h"
#include "lsjit/common/error.h"
#include "lsjit/runtime/io/synthetic.h"
#include "lsjit/runtime/pose_graph_init.h"
#include "lsjit/runtime/pose_graph_problem.h"

using namespace lsjit;

namespace {

// A bad start for vertex k: rotated by up to ~3 radians and moved by up to ~10 steps, the
// same for every run (no generator).
SE2d perturbed(const SE2d& pose, size_t k) {
  const double s = static_cast<double>(k);
  return pose * SE2d::exp(Eigen::Vector3d(10 * std::sin(1.3 * s), 10 * std::cos(0.7 * s), 3 * std::sin(2.1 * s)));
}
SE3d perturbed(const SE3d& pose, size_t k) {
  const double s = static_cast<double>(k);
  Eigen::Matrix<double, 6, 1> xi;
  xi << 10 * std::sin(1.3 * s), 10 * std::cos(0.7 * s), 5 * std::sin(0.3 * s),  //
      1.7 * std::sin(2.1 * s), 1.7 * std::cos(1.1 * s), 1.7 * std::sin(0.9 * s);
  return pose * SE3d::exp(xi);
}

// Largest translation distance and rotation angle between the graph's poses and `truth`.
template <class Pose>
std::pair<double, double> max_error(const std::vector<Pose>& poses, const std::vector<Pose>& truth) {
  double translation = 0, rotation = 0;
  for (size_t k = 0; k < poses.size(); ++k) {
    translation = std::max(translation, (poses[k].translation() - truth[k].translation()).norm());
    rotation = std::max(rotation, (poses[k].rotation().inverse() * truth[k].rotation()).log().norm());
  }
  return {translation, rotation};
}

io::GeneratedPoseGraph noise_free(int dim) {
  io::PoseGraphSpec spec;
  spec.dimension = dim;
  spec.poses = 200;
  spec.loop_closures = 50;
  spec.translation_sigma = 0;
  spec.rotation_sigma = 0;
  spec.seed = 7;
  return io::generate_pose_graph(spec);
}

SolveResult solve(const io::PoseGraph& graph) {
  PoseGraphProblem p = make_pose_graph_problem(graph);
  return p.problem.analyze(lsjit::testing::analyze_with()).solve(p.initial);
}

}  // namespace

TEST_CASE("chordal initialization recovers a noise-free SE2 graph from a bad start") {
  io::GeneratedPoseGraph g = noise_free(2);
  for (size_t k = 1; k < g.graph.poses2.size(); ++k) g.graph.poses2[k] = perturbed(g.graph.poses2[k], k);
  REQUIRE(max_error(g.graph.poses2, g.truth2).first > 1);  // the start is bad
  REQUIRE(max_error(g.graph.poses2, g.truth2).second > 1);
  REQUIRE(g.graph.poses2[0].params() == g.truth2[0].params());  // the anchor is the truth
  initialize_chordal(g.graph);
  const auto [translation, rotation] = max_error(g.graph.poses2, g.truth2);
  CHECK(translation < 1e-9);
  CHECK(rotation < 1e-9);
}

TEST_CASE("chordal initialization recovers a noise-free SE3 graph from a bad start") {
  io::GeneratedPoseGraph g = noise_free(3);
  for (size_t k = 1; k < g.graph.poses3.size(); ++k) g.graph.poses3[k] = perturbed(g.graph.poses3[k], k);
  REQUIRE(max_error(g.graph.poses3, g.truth3).first > 1);
  REQUIRE(max_error(g.graph.poses3, g.truth3).second > 1);
  REQUIRE(g.graph.poses3[0].params() == g.truth3[0].params());
  initialize_chordal(g.graph);
  const auto [translation, rotation] = max_error(g.graph.poses3, g.truth3);
  CHECK(translation < 1e-9);
  CHECK(rotation < 1e-9);
  double worst_norm = 0;
  for (const SE3d& pose : g.graph.poses3)
    worst_norm = std::max(worst_norm, std::abs(pose.rotation().params().norm() - 1));
  CHECK(worst_norm < 1e-12);
}

TEST_CASE("chordal initialization weights translations by their information, in the edge's frame") {
  // Two parallel edges 0 -> 1 that agree on the rotation and disagree on the translation:
  // a is sure of its x, b of its y, in the frame of vertex 0, which is turned by 90°. The
  // translation is the information-weighted mean in that frame; weighting in the world
  // frame instead would give (-2, 3), ignoring the information (-3, 2).
  io::PoseGraph g;
  g.dimension = 2;
  g.vertex_ids = {0, 1};
  g.poses2 = {SE2d::from_xy_theta(0, 0, M_PI / 2), SE2d::from_xy_theta(5, 5, -2)};
  for (auto [t, info] : {std::pair{Eigen::Vector2d(1, 2), Eigen::Vector3d(1e6, 1, 1)},
                         std::pair{Eigen::Vector2d(3, 4), Eigen::Vector3d(1, 1e6, 1)}}) {
    io::PoseGraph::Edge2 e;
    e.from = 0;
    e.to = 1;
    e.measurement = SE2d::from_xy_theta(t.x(), t.y(), 0.3);
    e.information = info.asDiagonal();
    g.edges2.push_back(e);
  }
  initialize_chordal(g);
  const Eigen::Vector2d in_frame_0((1e6 * 1 + 3) / (1e6 + 1), (2 + 1e6 * 4) / (1e6 + 1));
  CHECK((g.poses2[1].translation() - g.poses2[0].rotation().act(in_frame_0)).norm() < 1e-12);
  CHECK(std::abs(io::wrap_angle(g.poses2[1].rotation().angle() - (M_PI / 2 + 0.3))) < 1e-12);
}

TEST_CASE("chordal initialization weights rotations by their information") {
  // Two parallel edges that disagree on the rotation by 0.5 rad: the result is near the
  // one with 1e6 times the information, whichever that is.
  for (bool first_is_sure : {true, false}) {
    CAPTURE(first_is_sure);
    io::GeneratedPoseGraph g = noise_free(3);
    g.graph.edges3.resize(1);  // 0 -> 1
    io::PoseGraph::Edge3 other = g.graph.edges3[0];
    other.measurement = SE3d(other.measurement.rotation() * SO3d::exp(Eigen::Vector3d(0.3, 0.4, 0)),
                             other.measurement.translation());
    g.graph.edges3.push_back(other);
    g.graph.edges3[first_is_sure ? 0 : 1].information.bottomRightCorner<3, 3>() *= 1e6;
    initialize_chordal(g.graph);
    const SE3d expected = g.graph.poses3[0] * g.graph.edges3[first_is_sure ? 0 : 1].measurement;
    const double angle = (g.graph.poses3[1].rotation().inverse() * expected.rotation()).log().norm();
    CHECK(angle < 1e-5);
  }
}

TEST_CASE("chordal initialization keeps the FIX vertices and anchors each other component at its lowest id") {
  // Component {0, 1, 2} holds both FIX vertices 0 and 2; component {10, 11, 12} has none,
  // so 10 is its anchor; 20 has no edges. Vertices are listed out of id order.
  io::PoseGraph g;
  g.dimension = 2;
  g.vertex_ids = {12, 2, 0, 20, 11, 1, 10};
  for (size_t k = 0; k < g.vertex_ids.size(); ++k) g.poses2.push_back(perturbed(SE2d::identity(), k + 1));
  const SE2d step = SE2d::from_xy_theta(1.0, 0.5, 0.4);
  for (auto [from, to] : {std::pair<int64_t, int64_t>{0, 1}, {1, 2}, {10, 11}, {11, 12}, {12, 10}}) {
    io::PoseGraph::Edge2 e;
    e.from = from;
    e.to = to;
    e.measurement = to == 10 ? (step * step).inverse() : step;  // the loop 10 -> 11 -> 12 -> 10 closes
    g.edges2.push_back(e);
  }
  g.fixed = {2, 0};
  const io::PoseGraph before = g;
  initialize_chordal(g);
  auto pose = [&](const io::PoseGraph& graph, int64_t id) { return graph.poses2[graph.index_of(id)]; };
  for (int64_t kept : {0, 2, 10, 20}) {
    CAPTURE(kept);
    CHECK(pose(g, kept).params() == pose(before, kept).params());
  }
  // 11 and 12 follow from their anchor exactly (the measurements are consistent).
  CHECK((pose(g, 11).local(pose(g, 10) * step)).norm() < 1e-12);
  CHECK((pose(g, 12).local(pose(g, 10) * step * step)).norm() < 1e-12);
  // 1 is between two fixed, mutually inconsistent vertices: a compromise, not either one.
  CHECK(pose(g, 1).params() != pose(before, 1).params());
  CHECK(std::isfinite(pose(g, 1).translation().norm()));
}

TEST_CASE("chordal initialization rejects empty and malformed graphs and then leaves the graph unchanged") {
  io::PoseGraph empty;
  empty.dimension = 3;
  CHECK_THROWS_WITH_AS(initialize_chordal(empty), "chordal initialization: the pose graph has no vertices",
                       lsjit::Error);
  io::GeneratedPoseGraph g = noise_free(3);
  io::PoseGraph dangling = g.graph;
  dangling.edges3[3].to = 999;
  CHECK_THROWS_WITH_AS(initialize_chordal(dangling),
                       "chordal initialization: edge 3 (3 -> 999) names a vertex that is not in the graph",
                       lsjit::Error);
  io::PoseGraph bad_information = g.graph;
  for (size_t k = 1; k < bad_information.poses3.size(); ++k)
    bad_information.poses3[k] = perturbed(bad_information.poses3[k], k);
  bad_information.edges3[5].information(4, 4) = -1;
  const io::PoseGraph before = bad_information;
  CHECK_THROWS_WITH_AS(initialize_chordal(bad_information),
                       "chordal initialization: edge 5 (5 -> 6): the rotation block of its information is not "
                       "positive definite",
                       lsjit::Error);
  bool unchanged = true;
  for (size_t k = 0; k < before.poses3.size(); ++k)
    unchanged = unchanged && bad_information.poses3[k].params() == before.poses3[k].params();
  CHECK(unchanged);
  io::PoseGraph flat = g.graph;
  flat.dimension = 4;
  CHECK_THROWS_AS(initialize_chordal(flat), lsjit::Error);
}

TEST_CASE("LM from the chordal start reaches at least the file start's cost in no more iterations") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    io::PoseGraphSpec spec;
    spec.dimension = dim;
    spec.poses = 400;
    spec.loop_closures = 80;
    spec.translation_sigma = 0.05;
    spec.rotation_sigma = 0.05;  // enough odometry drift that the start matters
    spec.seed = 11;
    const io::GeneratedPoseGraph g = io::generate_pose_graph(spec);
    io::PoseGraph chordal = g.graph;
    initialize_chordal(chordal);
    const SolveResult from_file = solve(g.graph), from_chordal = solve(chordal);
    CAPTURE(from_file.summary.report());
    CAPTURE(from_chordal.summary.report());
    REQUIRE(converged(from_file.summary.termination));
    REQUIRE(converged(from_chordal.summary.termination));
    CHECK(from_chordal.summary.initial_cost < from_file.summary.initial_cost);
    CHECK(from_chordal.summary.final_cost <= from_file.summary.final_cost * (1 + 1e-6));
    CHECK(from_chordal.summary.iterations <= from_file.summary.iterations);
  }
}

TEST_CASE("chordal initialization turns a graph read without VERTEX lines into one a problem can start from") {
  io::PoseGraph g = io::parse_g2o(
      "EDGE_SE2 0 1 1 0 0 1 0 0 1 0 1\n"
      "EDGE_SE2 1 2 0 1 1.5707963267948966 1 0 0 1 0 1\n",
      "edges.g2o");
  REQUIRE(g.vertices_from_edges);
  CHECK_THROWS_WITH(make_pose_graph_problem(g), doctest::Contains("initialize_chordal"));
  initialize_chordal(g);
  CHECK_FALSE(g.vertices_from_edges);
  CHECK((g.poses2[2].translation() - Eigen::Vector2d(1, 1)).norm() < 1e-12);  // along the edges from pose 0
  CHECK(make_pose_graph_problem(g).problem.num_instances() == 2);
}
