#include "lsjit/runtime/pose_graph_start.h"

#include <cmath>
#include <cstdio>
#include <vector>

#include "lsjit/common/clock.h"
#include "lsjit/common/error.h"
#include "lsjit/runtime/pose_graph_init.h"

namespace lsjit {
namespace {

std::string cost_text(double cost) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", cost);
  return buf;
}

PoseGraphStartChoice start_chordal(io::PoseGraph& graph, PoseGraphProblem& problem) {
  const auto start = Clock::now();
  initialize_chordal(graph);  // leaves the graph unchanged when it throws
  set_pose_values(problem.initial, graph);
  return {"chordal", "", seconds_since(start)};
}

// The number of residuals: 3 per SE2 edge, 6 per SE3 edge.
double residuals(const io::PoseGraph& graph) {
  return 3.0 * static_cast<double>(graph.edges2.size()) + 6.0 * static_cast<double>(graph.edges3.size());
}

// The file's poses when their cost is already within the noise, else the lower-cost start
// of the two; a non-finite cost loses to a finite one.
PoseGraphStartChoice start_auto(io::PoseGraph& graph, PoseGraphProblem& problem, const AnalyzedProblem& analyzed) {
  const auto start = Clock::now();
  const double file_cost = analyzed.cost(problem.initial);
  if (const double noise = 0.5 * residuals(graph); file_cost <= noise)
    return {"file",
            "auto: initial cost " + cost_text(file_cost) + " from the file, within the noise (" + cost_text(noise) +
                ", half the residual count)",
            seconds_since(start)};
  // The file's poses are kept aside rather than the whole graph copied: the edges are most
  // of a graph's memory (77 MB at 10^5 poses), and initialize_chordal changes poses only.
  const std::vector<SE2d> file_poses2 = graph.poses2;
  const std::vector<SE3d> file_poses3 = graph.poses3;
  try {
    initialize_chordal(graph);  // leaves the graph unchanged when it throws
  } catch (const Error& e) {
    return {"file", std::string("auto: the chordal initialization failed (") + e.what() + ")", seconds_since(start)};
  }
  Values chordal_values = problem.initial;
  set_pose_values(chordal_values, graph);
  const double chordal_cost = analyzed.cost(chordal_values);
  const bool use_chordal = std::isfinite(chordal_cost) && !(file_cost <= chordal_cost);
  const std::string costs = "initial cost " + cost_text(use_chordal ? chordal_cost : file_cost) + " against " +
                            cost_text(use_chordal ? file_cost : chordal_cost) + (use_chordal ? " from the file" : " chordal");
  if (use_chordal) {
    problem.initial = std::move(chordal_values);
  } else {
    graph.poses2 = file_poses2;
    graph.poses3 = file_poses3;
  }
  return {use_chordal ? "chordal" : "file", "auto: " + costs, seconds_since(start)};
}

}  // namespace

std::optional<PoseGraphStartChoice> chordal_if_no_vertices(io::PoseGraph& graph) {
  if (!graph.vertices_from_edges) return std::nullopt;
  const auto start = Clock::now();
  initialize_chordal(graph);
  return PoseGraphStartChoice{"chordal", "the file has no VERTEX lines", seconds_since(start)};
}

PoseGraphStartChoice start_pose_graph(io::PoseGraph& graph, PoseGraphProblem& problem,
                                      const AnalyzedProblem& analyzed, PoseGraphStart start) {
  switch (start) {
    case PoseGraphStart::File: return {"file", "", 0};
    case PoseGraphStart::Chordal: return start_chordal(graph, problem);
    case PoseGraphStart::Auto: return start_auto(graph, problem, analyzed);
  }
  throw Error("lsjit::start_pose_graph: unknown PoseGraphStart");
}

}  // namespace lsjit
