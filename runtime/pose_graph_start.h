// Where a pose graph's solve starts: the file's poses, the chordal initialization
// (pose_graph_init.h), or whichever of the two is better (Auto, the default of `lsjit
// solve`).
//
// Why Auto: Levenberg-Marquardt ends in the minimum near its start. A file's poses are
// usually composed odometry; on graphs with large drift LM stops from them in a far worse
// minimum than from the chordal start (2x and 20x higher final costs on two public 3D
// graphs, 77 iterations instead of 3 on one), while on graphs whose poses are already
// good the chordal start changes little but costs two sparse factorizations with their
// analysis, as much as the whole solve on a graph of a few thousand poses.
//
// So Auto first evaluates the cost ½Σ‖r‖² at the file's poses. If it is at most m/2 (m
// residuals: what ½χ² is expected to be at the true poses when the information matrices
// match the noise), the file's start is already within the noise, and Auto keeps it
// without computing the chordal one. Otherwise it computes the chordal start, evaluates it
// too, and keeps the lower. Both tests are proxies for the basin, not proofs of a lower
// final cost: a graph whose information matrices understate its noise by far could have
// a drifted start within "the noise". docs/benchmarks.md checks Auto against both starts
// on the shared graphs and on generated graphs with large drift.
//
// A graph read from a file without VERTEX lines (PoseGraph::vertices_from_edges) has no
// poses of its own: every choice starts it chordally, and says so.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "lsjit/runtime/analyzed_problem.h"
#include "lsjit/runtime/io/g2o.h"
#include "lsjit/runtime/pose_graph_problem.h"

namespace lsjit {

enum class PoseGraphStart {
  Auto,     // the lower initial cost of File and Chordal
  File,     // the graph's poses as read
  Chordal,  // initialize_chordal (pose_graph_init.h)
};

// "auto", "file", "chordal"; nullopt for any other name. Inline, so that flag parsing
// (tools/lsjit/solve_flags.cpp, and the fuzz target built from it) needs nothing else.
inline std::optional<PoseGraphStart> pose_graph_start_from_name(std::string_view name) {
  if (name == "auto") return PoseGraphStart::Auto;
  if (name == "file") return PoseGraphStart::File;
  if (name == "chordal") return PoseGraphStart::Chordal;
  return std::nullopt;
}
inline std::string_view pose_graph_start_name(PoseGraphStart start) {
  switch (start) {
    case PoseGraphStart::Auto: return "auto";
    case PoseGraphStart::File: return "file";
    case PoseGraphStart::Chordal: return "chordal";
  }
  return "?";
}

// What start_pose_graph chose, for SolveSummary::record_initialization.
struct PoseGraphStartChoice {
  std::string used;    // "file" or "chordal"
  std::string reason;  // why, for Auto and for a file without VERTEX lines; "" otherwise
  double seconds = 0;  // the chordal initialization and Auto's comparison
};

// The order of a solve from a graph:
//   std::optional<PoseGraphStartChoice> choice = chordal_if_no_vertices(graph);
//   PoseGraphProblem p = make_pose_graph_problem(graph);
//   const AnalyzedProblem analyzed = p.problem.analyze();
//   if (!choice) choice = start_pose_graph(graph, p, analyzed, PoseGraphStart::Auto);
//   SolveResult r = analyzed.solve(p.initial, pose_graph_solver_options());
//   r.summary.record_initialization(choice->used, choice->seconds, choice->reason);

// For a graph read without VERTEX lines: initializes it chordally (it has no poses to
// build a problem from) and returns that choice, with the reason "the file has no VERTEX
// lines"; for any other graph returns nullopt and leaves it as it is.
std::optional<PoseGraphStartChoice> chordal_if_no_vertices(io::PoseGraph& graph);

// Makes the graph's poses, and problem.initial, the start `start` asks for.
//   problem:  make_pose_graph_problem(graph, ...) of this graph.
//   analyzed: problem.problem analyzed (Auto evaluates both starts with it).
// Throws lsjit::Error when Chordal is asked for and initialize_chordal fails (the graph
// and the problem are then unchanged); Auto then keeps the file's poses and names the
// failure in its reason.
PoseGraphStartChoice start_pose_graph(io::PoseGraph& graph, PoseGraphProblem& problem,
                                      const AnalyzedProblem& analyzed, PoseGraphStart start);

}  // namespace lsjit
