// The data of the --plot picture from a pose graph and a SolveResult (solve_plot.h).
#include "solve_plot.h"

#include <cmath>
#include <filesystem>
#include <tuple>

#include "lsjit/common/error.h"
#include "lsjit/runtime/formats/text.h"
#include "lsjit/runtime/pose_graph_problem.h"

namespace lsjit::cli {
namespace {

// The vertices' positions on the plane of coordinates (a, b): 0 x, 1 y, 2 z (3D only).
std::vector<Point2> positions(const io::PoseGraph& g, int a = 0, int b = 1) {
  std::vector<Point2> p;
  if (g.dimension == 3)
    for (const SE3d& x : g.poses3) p.push_back({x.translation()(a), x.translation()(b)});
  else
    for (const SE2d& x : g.poses2) p.push_back({x.translation()(a), x.translation()(b)});
  return p;
}

// 12345 -> "12,345", for counts in the subtitle.
std::string grouped(size_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// The after panel's heading, and the cost per iteration, of both pictures.
std::string after_heading(const SolveResult& result) {
  return result.summary.usable() ? "after: " + std::to_string(result.summary.iterations) + " iterations, " +
                                       std::string(termination_name(result.summary.termination))
                                 : "after: solve failed, initial estimate shown";
}
std::vector<double> costs_per_iteration(const SolveResult& result) {
  std::vector<double> costs;
  for (const IterationSummary& it : result.summary.per_iteration) costs.push_back(it.cost);
  return costs;
}

}  // namespace

SolvePlot make_solve_plot(const std::string& name, const io::PoseGraph& before, const SolveResult& result) {
  SolvePlot plot;
  plot.title = "lsjit solve " + std::filesystem::path(name).filename().string();
  std::vector<std::pair<int64_t, int64_t>> edges;
  if (before.dimension == 3)
    for (const auto& e : before.edges3) edges.emplace_back(e.from, e.to);
  else
    for (const auto& e : before.edges2) edges.emplace_back(e.from, e.to);
  plot.topology = classify_edges(before.vertex_ids, edges);
  plot.subtitle = std::string(before.dimension == 3 ? "SE3" : "SE2") + " pose graph, " +
                  grouped(before.num_vertices()) + " poses, " + grouped(before.num_edges()) + " edges (" +
                  grouped(plot.topology.loop_closures.size()) + " loop closures)" +
                  (before.dimension == 3 ? "; 3D poses projected on the x-y, x-z and y-z planes" : "");
  io::PoseGraph after = before;
  if (result.summary.usable()) update_poses(after, result.values);
  plot.before = positions(before);
  plot.after = positions(after);
  if (before.dimension == 3)
    for (const auto& [name, a, b] : {std::tuple{"x-z", 0, 2}, std::tuple{"y-z", 1, 2}})
      plot.more_views.push_back({name, std::string(1, name[0]), std::string(1, name[2]), positions(before, a, b),
                                 positions(after, a, b)});
  plot.after_label = after_heading(result);
  plot.costs = costs_per_iteration(result);
  return plot;
}

namespace {
// Through the writer of every output (text.h): whole or not at all, regular files only.
void write_svg(const std::string& svg_path, const std::string& svg) { io::detail::write_file_atomically(svg_path, svg); }

std::vector<double> reprojection_errors(const AnalyzedProblem& analyzed, const Values& values) {
  std::vector<double> errors;
  for (const InstanceEvaluation& e : analyzed.evaluate_instances(values, analyzed.all_instances(), false))
    errors.push_back(std::sqrt(e.squared_norm));
  return errors;
}
}  // namespace

void write_solve_plot(const std::string& svg_path, const std::string& name, const io::PoseGraph& before,
                      const SolveResult& result) {
  write_svg(svg_path, solve_plot_svg(make_solve_plot(name, before, result)));
}

BundlePlot make_bundle_plot(const std::string& name, const io::BalProblem& bal, const AnalyzedProblem& analyzed,
                            const Values& initial, const SolveResult& result) {
  BundlePlot plot;
  plot.title = "lsjit solve " + std::filesystem::path(name).filename().string();
  plot.subtitle = "bundle adjustment, " + grouped(bal.cameras.size()) + " cameras, " +
                  grouped(bal.points.size()) + " points, " + grouped(bal.observations.size()) +
                  " observations; error = |predicted - observed| per observation";
  plot.errors_before = reprojection_errors(analyzed, initial);
  plot.errors_after = result.summary.usable() ? reprojection_errors(analyzed, result.values) : plot.errors_before;
  plot.after_label = after_heading(result);
  plot.costs = costs_per_iteration(result);
  return plot;
}

void write_bundle_plot(const std::string& svg_path, const std::string& name, const io::BalProblem& bal,
                       const AnalyzedProblem& analyzed, const Values& initial, const SolveResult& result) {
  write_svg(svg_path, bundle_plot_svg(make_bundle_plot(name, bal, analyzed, initial, result)));
}

}  // namespace lsjit::cli
