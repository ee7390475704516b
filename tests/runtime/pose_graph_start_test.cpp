// Where a pose graph's solve starts (runtime/pose_graph_start.h): File keeps the poses,
// Chordal is initialize_chordal's, Auto the lower-cost of the two and says why, and a
// graph without VERTEX lines starts chordally. Also the generator's drift option
// (io::PoseGraphSpec::drift_sigma), which makes the file's start bad on purpose.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "../support/memory_cache.h"
#include "lsjit/common/error.h"
#include "lsjit/runtime/io/synthetic.h"
#include "lsjit/runtime/pose_graph_init.h"
#include "lsjit/runtime/pose_graph_start.h"

namespace pose_graph_start_test {

using namespace lsjit;

io::PoseGraphSpec drifting(int dim, double drift) {
  io::PoseGraphSpec spec;
  spec.dimension = dim;
  spec.poses = 300;
  spec.loop_closures = 60;
  spec.seed = 11;
  spec.drift_sigma = drift;
  return spec;
}

// The graph, its problem and its analysis, as lsjit solve builds them.
struct Setup {
  io::PoseGraph graph;
  PoseGraphProblem problem;
  AnalyzedProblem analyzed;
  explicit Setup(io::PoseGraph g)
      : graph(std::move(g)),
        problem(make_pose_graph_problem(graph)),
        analyzed(problem.problem.analyze(lsjit::testing::analyze_with())) {}
};

template <class Pose>
bool same_poses(const std::vector<Pose>& a, const std::vector<Pose>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (a[k].params() != b[k].params()) return false;
  return true;
}

bool same_poses(const io::PoseGraph& a, const io::PoseGraph& b) {
  return a.dimension == 2 ? same_poses(a.poses2, b.poses2) : same_poses(a.poses3, b.poses3);
}

template <class Edge>
bool same_edges(const std::vector<Edge>& a, const std::vector<Edge>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (a[k].from != b[k].from || a[k].to != b[k].to || a[k].measurement.params() != b[k].measurement.params() ||
        a[k].information != b[k].information)
      return false;
  return true;
}

bool same_edges(const io::PoseGraph& a, const io::PoseGraph& b) {
  return same_edges(a.edges2, b.edges2) && same_edges(a.edges3, b.edges3);
}

TEST_CASE("pose graph start names round trip, and others are refused") {
  for (PoseGraphStart s : {PoseGraphStart::Auto, PoseGraphStart::File, PoseGraphStart::Chordal})
    CHECK(pose_graph_start_from_name(pose_graph_start_name(s)) == s);
  CHECK_FALSE(pose_graph_start_from_name("odometry").has_value());
  CHECK_FALSE(pose_graph_start_from_name("").has_value());
}

TEST_CASE("File keeps the poses and Chordal is initialize_chordal of them, in the graph and in the values") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const io::PoseGraph read = io::generate_pose_graph(drifting(dim, 0.02)).graph;
    Setup file(read);
    const PoseGraphStartChoice kept = start_pose_graph(file.graph, file.problem, file.analyzed, PoseGraphStart::File);
    CHECK(kept.used == "file");
    CHECK(kept.reason.empty());
    CHECK(same_poses(file.graph, read));
    CHECK(file.analyzed.cost(file.problem.initial) == file.analyzed.cost(make_pose_graph_problem(read).initial));

    Setup chordal(read);
    const PoseGraphStartChoice c = start_pose_graph(chordal.graph, chordal.problem, chordal.analyzed,
                                                    PoseGraphStart::Chordal);
    CHECK(c.used == "chordal");
    CHECK(c.reason.empty());
    CHECK(c.seconds > 0);
    io::PoseGraph expected = read;
    initialize_chordal(expected);
    CHECK(same_poses(chordal.graph, expected));
    CHECK(chordal.analyzed.cost(chordal.problem.initial) ==
          chordal.analyzed.cost(make_pose_graph_problem(expected).initial));
  }
}

TEST_CASE("Auto starts chordally where the file drifts, and ends no higher than either start") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const io::PoseGraph read = io::generate_pose_graph(drifting(dim, 0.05)).graph;
    Setup automatic(read);
    const PoseGraphStartChoice choice = start_pose_graph(automatic.graph, automatic.problem, automatic.analyzed,
                                                         PoseGraphStart::Auto);
    CAPTURE(choice.reason);
    CHECK(choice.used == "chordal");
    CHECK(choice.reason.rfind("auto: initial cost ", 0) == 0);
    CHECK(choice.reason.find(" from the file") != std::string::npos);
    const SolveResult from_auto = automatic.analyzed.solve(automatic.problem.initial, pose_graph_solver_options());

    Setup file(read);
    start_pose_graph(file.graph, file.problem, file.analyzed, PoseGraphStart::File);
    const SolveResult from_file = file.analyzed.solve(file.problem.initial, pose_graph_solver_options());
    CHECK(from_auto.summary.initial_cost < from_file.summary.initial_cost);
    CHECK(from_auto.summary.final_cost <= from_file.summary.final_cost * (1 + 1e-9));
  }
}

// The file's poses are the optimum itself: no start can cost less.
io::PoseGraph at_optimum(io::PoseGraph graph) {
  Setup solved(std::move(graph));
  const SolveResult optimum = solved.analyzed.solve(solved.problem.initial, pose_graph_solver_options());
  REQUIRE(optimum.summary.usable());
  update_poses(solved.graph, optimum.values);
  return solved.graph;
}

// Every edge's information times `factor`: the same optimum at `factor` times the cost.
void scale_information(io::PoseGraph& graph, double factor) {
  for (auto& e : graph.edges2) e.information *= factor, e.sqrt_information *= std::sqrt(factor);
  for (auto& e : graph.edges3) e.information *= factor, e.sqrt_information *= std::sqrt(factor);
}

// Auto on a graph whose poses are its optimum keeps them, for a reason that says `why`.
void check_auto_keeps(const io::PoseGraph& optimum, const std::string& why) {
  Setup automatic(optimum);
  const PoseGraphStartChoice choice =
      start_pose_graph(automatic.graph, automatic.problem, automatic.analyzed, PoseGraphStart::Auto);
  CAPTURE(choice.reason);
  CHECK(choice.used == "file");
  CHECK(choice.reason.rfind("auto: initial cost ", 0) == 0);
  CHECK(choice.reason.find(why) != std::string::npos);
  CHECK(same_poses(automatic.graph, optimum));
}

TEST_CASE("Auto keeps the file's poses within the noise without computing the chordal start") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    check_auto_keeps(at_optimum(io::generate_pose_graph(drifting(dim, 0)).graph), "from the file, within the noise (");
  }
}

TEST_CASE("Auto keeps the file's poses above the noise when the chordal start costs more") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    // Information 10^4 times what the noise warrants: the optimum's cost is far above m/2,
    // so Auto compares, and nothing costs less than the optimum.
    io::PoseGraph graph = io::generate_pose_graph(drifting(dim, 0)).graph;
    scale_information(graph, 1e4);
    check_auto_keeps(at_optimum(std::move(graph)), " chordal");
  }
}

TEST_CASE("a graph without VERTEX lines starts chordally, and one with them is left alone") {
  io::PoseGraph with_vertices = io::generate_pose_graph(drifting(3, 0)).graph;
  const io::PoseGraph before = with_vertices;
  CHECK_FALSE(chordal_if_no_vertices(with_vertices).has_value());
  CHECK(same_poses(with_vertices, before));

  io::PoseGraph edges_only = before;
  edges_only.vertices_from_edges = true;
  CHECK_THROWS_AS(make_pose_graph_problem(edges_only), Error);
  const std::optional<PoseGraphStartChoice> choice = chordal_if_no_vertices(edges_only);
  REQUIRE(choice.has_value());
  CHECK(choice->used == "chordal");
  CHECK(choice->reason == "the file has no VERTEX lines");
  CHECK_FALSE(edges_only.vertices_from_edges);
  io::PoseGraph expected = before;
  initialize_chordal(expected);
  CHECK(same_poses(edges_only, expected));
}

TEST_CASE("the generator's drift moves the start only, after everything else is drawn") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const io::GeneratedPoseGraph plain = io::generate_pose_graph(drifting(dim, 0));
    const io::GeneratedPoseGraph drifted = io::generate_pose_graph(drifting(dim, 0.05));
    // Same edges and truth, bit for bit: the optimum is the same.
    CHECK(same_edges(plain.graph, drifted.graph));
    CHECK(same_poses(plain.truth2, drifted.truth2));
    CHECK(same_poses(plain.truth3, drifted.truth3));
    // The start: pose 0 is the same, the rest drift further from the truth.
    CHECK_FALSE(same_poses(plain.graph, drifted.graph));
    const auto end_error = [&](const io::GeneratedPoseGraph& g) {
      return dim == 2 ? (g.graph.poses2.back().translation() - g.truth2.back().translation()).norm()
                      : (g.graph.poses3.back().translation() - g.truth3.back().translation()).norm();
    };
    CHECK(end_error(drifted) > end_error(plain));
    if (dim == 2) CHECK(drifted.graph.poses2[0].params() == plain.graph.poses2[0].params());
    else CHECK(drifted.graph.poses3[0].params() == plain.graph.poses3[0].params());
  }
  io::PoseGraphSpec bad = drifting(2, -0.1);
  CHECK_THROWS_AS(io::generate_pose_graph(bad), Error);
}

}  // namespace pose_graph_start_test
