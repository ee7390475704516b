// lsjit replay: a g2o pose graph fed to the IncrementalSolver one pose at a time, as GTSAM's
// ISAM2 examples (and tools/bench/gtsam's isam2 driver) feed ISAM2, so the two compare.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "flags.h"
#include "lsjit/common/clock.h"
#include "lsjit/common/error.h"
#include "lsjit/common/json.h"
#include "lsjit/common/percentile.h"
#include "lsjit/runtime/formats/text.h"
#include "lsjit/runtime/incremental_solver.h"
#include "lsjit/runtime/io/g2o.h"
#include "lsjit/runtime/pose_graph_problem.h"
#include "lsjit/runtime/standard_costs.h"
#include "plot_svg.h"

namespace lsjit::cli {
namespace {

constexpr const char* kReplayUsage = R"(usage: lsjit replay FILE.g2o [--json] [--plot FILE.svg] [--compare-batch]
                    [--relinearize-threshold X] [--relinearize-skip N] [--wildfire X]

Adds the graph's poses to lsjit's incremental solver in ascending id order, each with its
edges to earlier poses (those whose larger id it is, in file order), and updates after each
pose, as GTSAM's ISAM2 examples do. The first pose (and any FIX vertex) is held constant;
each other pose starts at the estimate of the previous pose composed with their odometry
edge, else at the file's vertex. Prints the time per update (median, 99th percentile,
maximum), the total time (reading, updates, final estimate) and the final cost beside a
batch solve of the same file (lsjit solve's).

--json                      one JSON object instead of the text
--compare-batch             also re-solve everything added so far as a batch (analyze and
                            solve from the estimate) after 1/4, 1/2 and all of the poses,
                            against the median update around that step (not in the totals)
--plot FILE.svg             time per update against the step
--relinearize-threshold X   IncrementalOptions::relinearize_threshold (default 0.03)
--relinearize-skip N        IncrementalOptions::relinearize_skip (default 5)
--wildfire X                IncrementalOptions::wildfire_threshold (default 1e-4)
                            (GTSAM's ISAM2 defaults: 0.1, 10 and 1e-3)
)";

struct ReplayFlags {
  std::string file, plot_file;
  bool json = false;
  bool compare_batch = false;
  IncrementalOptions options;
};

// A batch re-solve at one step of the replay, against the updates around it.
struct Checkpoint {
  size_t step = 0;
  double batch_s = 0;            // analyze + solve of every pose so far, from the estimate
  double update_median_s = 0;    // the median update over steps [step - 50, step + 50]
};

struct ReplayResult {
  size_t poses = 0, edges = 0;
  std::vector<double> update_s;
  double read_s = 0, total_s = 0;
  double final_cost = 0, batch_final_cost = 0, batch_s = 0;
  int batch_iterations = 0;
  int64_t compiles = 0, traces = 0, full_refactors = 0, relinearized = 0;
  double linearize_s = 0, factor_s = 0, solve_s = 0;  // summed over the updates
  std::vector<int64_t> reeliminated, backsubstituted, changed, front_entries;  // per update
  std::vector<Checkpoint> checkpoints;  // --compare-batch
};

// One pose's update: its edges and start, in SE2 or SE3.
template <class Var, class Pose>
UpdateSummary add_pose(IncrementalSolver& solver, const io::PoseGraph& graph, const std::vector<size_t>& edges,
                       size_t k, int64_t previous, bool constant) {
  const int64_t id = graph.vertex_ids[k];
  Problem costs;
  Values start;
  Pose pose;
  if constexpr (std::is_same_v<Var, SE2Var>) pose = graph.poses2[k];
  else pose = graph.poses3[k];
  for (size_t e : edges) {
    const auto& edge = [&]() -> const auto& {
      if constexpr (std::is_same_v<Var, SE2Var>) return graph.edges2[e];
      else return graph.edges3[e];
    }();
    if constexpr (std::is_same_v<Var, SE2Var>)
      costs.add(standard_costs::se2_between_cost(), Var(edge.from), Var(edge.to), edge.measurement,
                edge.sqrt_information);
    else
      costs.add(standard_costs::se3_between_cost(), Var(edge.from), Var(edge.to), edge.measurement,
                edge.sqrt_information);
    if (constant) continue;
    if (edge.from == previous && edge.to == id) pose = solver.estimate().get(Var(previous)) * edge.measurement;
    else if (edge.to == previous && edge.from == id)
      pose = solver.estimate().get(Var(previous)) * edge.measurement.inverse();
  }
  start.set(Var(id), pose);
  if (constant) costs.set_constant(Var(id));
  return solver.update(std::move(costs), start);
}

// The poses added so far (the first `count` of `order`) and the edges among them, at the
// solver's estimate, solved as a batch (warm kernels: the batch cost type was looked up
// before): what re-solving from scratch at this step would cost.
double batch_resolve_s(const io::PoseGraph& graph, const std::vector<size_t>& order, size_t count,
                       const Values& estimate) {
  io::PoseGraph sub;
  sub.dimension = graph.dimension;
  sub.fixed = graph.fixed;
  std::set<int64_t> ids;
  for (size_t k = 0; k < count; ++k) {
    const size_t at = order[k];
    sub.vertex_ids.push_back(graph.vertex_ids[at]);
    ids.insert(graph.vertex_ids[at]);
    if (graph.dimension == 2) sub.poses2.push_back(graph.poses2[at]);
    else sub.poses3.push_back(graph.poses3[at]);
  }
  for (const auto& e : graph.edges2)
    if (ids.count(e.from) && ids.count(e.to)) sub.edges2.push_back(e);
  for (const auto& e : graph.edges3)
    if (ids.count(e.from) && ids.count(e.to)) sub.edges3.push_back(e);
  update_poses(sub, estimate);
  const auto start = Clock::now();
  PoseGraphProblem p = make_pose_graph_problem(sub);
  const SolveResult solved = p.problem.analyze().solve(p.initial, pose_graph_solver_options());
  (void)solved;
  return seconds_since(start);
}

// The replay itself: one update per pose, timed.
template <class Var, class Pose>
void replay(const io::PoseGraph& graph, const IncrementalOptions& options, bool compare_batch, ReplayResult& r) {
  std::vector<size_t> order(graph.vertex_ids.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return graph.vertex_ids[a] < graph.vertex_ids[b]; });
  std::map<int64_t, std::vector<size_t>> by_last;
  const size_t edges = graph.dimension == 2 ? graph.edges2.size() : graph.edges3.size();
  for (size_t e = 0; e < edges; ++e) {
    const int64_t from = graph.dimension == 2 ? graph.edges2[e].from : graph.edges3[e].from;
    const int64_t to = graph.dimension == 2 ? graph.edges2[e].to : graph.edges3[e].to;
    by_last[std::max(from, to)].push_back(e);
  }
  const std::vector<int64_t> fixed = graph.held_constant();
  IncrementalSolver solver(options);
  static const std::vector<size_t> kNone;
  int64_t previous = graph.vertex_ids[order.front()];
  for (size_t k : order) {
    const int64_t id = graph.vertex_ids[k];
    const auto found = by_last.find(id);
    const bool constant = std::find(fixed.begin(), fixed.end(), id) != fixed.end();
    const auto start = Clock::now();
    const UpdateSummary s =
        add_pose<Var, Pose>(solver, graph, found == by_last.end() ? kNone : found->second, k, previous, constant);
    r.update_s.push_back(seconds_since(start));
    r.full_refactors += s.full_refactor;
    r.relinearized += s.variables_relinearized;
    r.linearize_s += s.linearize_s;
    r.factor_s += s.factor_s;
    r.solve_s += s.solve_s;
    r.reeliminated.push_back(s.variables_reeliminated);
    r.backsubstituted.push_back(s.cliques_backsubstituted);
    r.changed.push_back(s.variables_changed);
    r.front_entries.push_back(s.front_entries);
    previous = id;
    const size_t step = r.update_s.size();
    if (compare_batch && order.size() >= 8 && (step == order.size() / 4 || step == order.size() / 2 || step == order.size()))
      r.checkpoints.push_back({step - 1,  // the faster of two: the first may load OpenBLAS, trace, analyze
                               std::min(batch_resolve_s(graph, order, step, solver.estimate()),
                                        batch_resolve_s(graph, order, step, solver.estimate())),
                               0});
  }
  for (Checkpoint& c : r.checkpoints) {
    const size_t lo = c.step >= 50 ? c.step - 50 : 0, hi = std::min(r.update_s.size(), c.step + 51);
    c.update_median_s = percentile(std::vector<double>(r.update_s.begin() + lo, r.update_s.begin() + hi), 0.5);
  }
  r.final_cost = solver.cost();
  r.compiles = solver.compiles();
  r.traces = solver.traces();
}

// The batch optimum: lsjit solve's pose-graph solve from the file's values.
void batch(const io::PoseGraph& graph, ReplayResult& r) {
  const auto start = Clock::now();
  PoseGraphProblem p = make_pose_graph_problem(graph);
  const SolveResult solved = p.problem.analyze().solve(p.initial, pose_graph_solver_options());
  r.batch_s = seconds_since(start);
  r.batch_final_cost = solved.summary.final_cost;
  r.batch_iterations = static_cast<int>(solved.summary.iterations);
}

std::string seconds(double s) {
  char text[32];
  if (s < 1e-3) std::snprintf(text, sizeof text, "%.1f us", s * 1e6);
  else if (s < 1) std::snprintf(text, sizeof text, "%.2f ms", s * 1e3);
  else std::snprintf(text, sizeof text, "%.3f s", s);
  return text;
}

double relative_gap(const ReplayResult& r) {
  return r.batch_final_cost > 0 ? (r.final_cost - r.batch_final_cost) / r.batch_final_cost : 0;
}

void print_text(const ReplayFlags& f, const ReplayResult& r, std::ostream& out) {
  out << "lsjit replay " << printable(f.file, std::string::npos) << ": " << r.poses << " poses, " << r.edges
      << " edges, " << r.update_s.size() << " updates\n";
  out << "time per update: median " << seconds(percentile(r.update_s, 0.5)) << ", p99 "
      << seconds(percentile(r.update_s, 0.99)) << ", max " << seconds(percentile(r.update_s, 1.0)) << "\n";
  out << "total " << seconds(r.total_s) << " (reading " << seconds(r.read_s) << "; in the updates: linearizing "
      << seconds(r.linearize_s) << ", factoring " << seconds(r.factor_s) << ", back substitution "
      << seconds(r.solve_s) << ")\n";
  char line[160];
  std::snprintf(line, sizeof line, "final cost %.10g; batch solve %.10g (%d iterations, %s): %+.2e relative\n",
                r.final_cost, r.batch_final_cost, r.batch_iterations, seconds(r.batch_s).c_str(), relative_gap(r));
  out << line;
  for (const Checkpoint& c : r.checkpoints)
    out << "at step " << c.step + 1 << ": a batch re-solve takes " << seconds(c.batch_s) << ", an update "
        << seconds(c.update_median_s) << " (median of the steps around it): "
        << static_cast<int64_t>(c.batch_s / std::max(c.update_median_s, 1e-9)) << "x\n";
  out << "compiles " << r.compiles << ", traces " << r.traces << ", variables relinearized " << r.relinearized
      << ", full refactors " << r.full_refactors << "\n";
}

void print_json(const ReplayResult& r, std::ostream& out) {
  auto median = [](const std::vector<int64_t>& v) { return percentile(std::vector<double>(v.begin(), v.end()), 0.5); };
  auto mean = [](const std::vector<int64_t>& v) {
    double sum = 0;
    for (int64_t x : v) sum += static_cast<double>(x);
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  out << "{\"poses\": " << r.poses << ", \"edges\": " << r.edges << ", \"updates\": " << r.update_s.size()
      << ", \"final_cost\": " << json_number(r.final_cost) << ", \"batch_final_cost\": "
      << json_number(r.batch_final_cost) << ", \"relative_gap\": " << json_number(relative_gap(r))
      << ", \"batch_s\": " << json_number(r.batch_s) << ", \"update_s_median\": "
      << json_number(percentile(r.update_s, 0.5)) << ", \"update_s_p99\": " << json_number(percentile(r.update_s, 0.99))
      << ", \"update_s_max\": " << json_number(percentile(r.update_s, 1.0)) << ", \"read_s\": "
      << json_number(r.read_s) << ", \"total_s\": " << json_number(r.total_s) << ", \"linearize_s\": " << json_number(r.linearize_s)
      << ", \"factor_s\": " << json_number(r.factor_s) << ", \"backsubstitute_s\": " << json_number(r.solve_s) << ", \"compiles\": " << r.compiles
      << ", \"traces\": " << r.traces << ", \"relinearized\": " << r.relinearized
      << ", \"full_refactors\": " << r.full_refactors << ", \"reeliminated_median\": "
      << json_number(median(r.reeliminated)) << ", \"reeliminated_mean\": " << json_number(mean(r.reeliminated))
      << ", \"backsubstituted_cliques_mean\": " << json_number(mean(r.backsubstituted))
      << ", \"changed_variables_mean\": " << json_number(mean(r.changed))
      << ", \"front_entries_mean\": " << json_number(mean(r.front_entries)) << ", \"batch_checkpoints\": [";
  for (size_t k = 0; k < r.checkpoints.size(); ++k)
    out << (k ? ", " : "") << "{\"step\": " << r.checkpoints[k].step + 1
        << ", \"batch_resolve_s\": " << json_number(r.checkpoints[k].batch_s)
        << ", \"update_s_median\": " << json_number(r.checkpoints[k].update_median_s) << "}";
  out << "]}\n";
}

// Time per update against the step, log scale.
std::string replay_plot_svg(const std::string& name, const std::vector<double>& update_s) {
  const double W = 800, H = 400, left = 70, right = 20, top = 40, bottom = 50;
  double lo = 1e300, hi = 0;
  for (double s : update_s)
    if (s > 0) lo = std::min(lo, s), hi = std::max(hi, s);
  if (hi <= 0) lo = 1e-6, hi = 1e-3;
  const double l0 = std::floor(std::log10(lo)), l1 = std::max(l0 + 1, std::ceil(std::log10(hi)));
  const double n = std::max<double>(1, static_cast<double>(update_s.size()) - 1);
  auto x = [&](double k) { return left + (W - left - right) * k / n; };
  auto y = [&](double s) { return top + (H - top - bottom) * (l1 - std::log10(s)) / (l1 - l0); };
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << W << " " << H << "\">\n<title>"
      << xml_escape("lsjit replay " + name) << "</title>\n<rect x=\"0\" y=\"0\" width=\"" << W << "\" height=\"" << H
      << "\" fill=\"white\"/>\n<text x=\"" << left << "\" y=\"24\" font-size=\"14\">"
      << xml_escape("lsjit replay " + name + ": time per update (s, log scale) against the step") << "</text>\n";
  for (double d = l0; d <= l1; ++d)
    svg << "<line x1=\"" << left << "\" x2=\"" << W - right << "\" y1=\"" << y(std::pow(10, d)) << "\" y2=\""
        << y(std::pow(10, d)) << "\" stroke=\"#ddd\"/>\n<text x=\"" << left - 6 << "\" y=\"" << y(std::pow(10, d)) + 4
        << "\" font-size=\"11\" text-anchor=\"end\">1e" << d << "</text>\n";
  for (double t : nice_ticks(0, n, 6))
    svg << "<text x=\"" << x(t) << "\" y=\"" << H - bottom + 16 << "\" font-size=\"11\" text-anchor=\"middle\">" << t
        << "</text>\n";
  svg << "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"0.8\" points=\"";
  for (size_t k = 0; k < update_s.size(); ++k)
    if (update_s[k] > 0) svg << x(static_cast<double>(k)) << "," << y(update_s[k]) << " ";
  svg << "\"/>\n</svg>\n";
  return svg.str();
}

bool parse_replay_flags(const Args& args, ReplayFlags& f, std::ostream& err) {
  CLI::App app;
  app.add_flag("--json", f.json);
  app.add_flag("--compare-batch", f.compare_batch);
  app.add_option("--plot", f.plot_file);
  app.add_option("--relinearize-threshold", f.options.relinearize_threshold)->check(number_in(0, 1e6));
  app.add_option("--relinearize-skip", f.options.relinearize_skip)->check(integer_in(1, 1000000));
  app.add_option("--wildfire", f.options.wildfire_threshold)->check(number_in(0, 1e6));
  std::vector<std::string> positional;
  if (std::optional<std::string> error = parse_flags(app, args, positional)) {
    err << "lsjit replay: " << *error;
    return false;
  }
  if (positional.size() != 1) {
    err << "lsjit replay: expected one FILE.g2o\n" << kReplayUsage;
    return false;
  }
  f.file = positional[0];
  return true;
}

}  // namespace

int replay_command(const Args& args, std::ostream& out, std::ostream& err) {
  if (!args.empty() && (args[0] == "help" || args[0] == "--help")) {
    out << kReplayUsage;
    return 0;
  }
  ReplayFlags f;
  if (!parse_replay_flags(args, f, err)) return 2;
  try {
    ReplayResult r;
    const auto start = Clock::now();
    const io::PoseGraph graph = io::read_g2o(f.file);
    r.read_s = seconds_since(start);
    if (graph.vertices_from_edges || graph.vertex_ids.empty())
      throw Error(printable(f.file, std::string::npos) + ": no VERTEX lines: lsjit replay starts poses from the "
                  "file's vertices where no odometry edge gives them");
    r.poses = graph.vertex_ids.size();
    r.edges = graph.dimension == 2 ? graph.edges2.size() : graph.edges3.size();
    if (graph.dimension == 2) replay<SE2Var, SE2d>(graph, f.options, f.compare_batch, r);
    else replay<SE3Var, SE3d>(graph, f.options, f.compare_batch, r);
    r.total_s = seconds_since(start);
    for (const Checkpoint& c : r.checkpoints) r.total_s -= c.batch_s;  // not part of the replay
    batch(graph, r);
    if (!f.plot_file.empty())
      io::detail::write_file_atomically(f.plot_file,
                                        replay_plot_svg(std::filesystem::path(f.file).filename().string(), r.update_s));
    if (f.json) print_json(r, out);
    else print_text(f, r, out);
    return 0;
  } catch (const Error& e) {
    err << "lsjit replay: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace lsjit::cli
