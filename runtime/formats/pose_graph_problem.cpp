#include "lsjit/runtime/pose_graph_problem.h"

#include <string>

#include "lsjit/common/error.h"
#include "lsjit/runtime/standard_costs.h"

namespace lsjit {
namespace {

template <class Var, class Edge, class Pose>
void add_edges(Problem& problem, const std::vector<Edge>& edges, const auto& cost, const Loss& loss) {
  if (edges.empty()) return;
  std::vector<int64_t> from, to;
  std::vector<Pose> z;
  std::vector<std::remove_cvref_t<decltype(edges[0].sqrt_information)>> U;
  for (const Edge& e : edges) {
    from.push_back(e.from);
    to.push_back(e.to);
    z.push_back(e.measurement);
    U.push_back(e.sqrt_information);
  }
  if (loss.kind == Loss::Kind::Trivial)
    problem.add(cost, Var::batch(std::move(from)), Var::batch(std::move(to)), z, U);
  else
    problem.add(cost, loss, Var::batch(std::move(from)), Var::batch(std::move(to)), z, U);
}

}  // namespace

PoseGraphProblem make_pose_graph_problem(const io::PoseGraph& graph, const Loss& loss) {
  if (graph.vertices_from_edges)
    throw Error("lsjit::make_pose_graph_problem: the graph's file has no VERTEX lines, so its " +
                std::to_string(graph.num_vertices()) +
                " poses are placeholders, not an estimate: initialize them first (lsjit::initialize_chordal(graph), "
                "as lsjit solve does)");
  PoseGraphProblem p;
  set_pose_values(p.initial, graph);
  if (graph.dimension == 2) {
    add_edges<SE2Var, io::PoseGraph::Edge2, SE2d>(p.problem, graph.edges2, standard_costs::se2_between_cost(), loss);
    for (int64_t id : graph.held_constant()) p.problem.set_constant(SE2Var(id));
  } else {
    add_edges<SE3Var, io::PoseGraph::Edge3, SE3d>(p.problem, graph.edges3, standard_costs::se3_between_cost(), loss);
    for (int64_t id : graph.held_constant()) p.problem.set_constant(SE3Var(id));
  }
  return p;
}

void set_pose_values(Values& values, const io::PoseGraph& graph) {
  for (size_t k = 0; k < graph.vertex_ids.size(); ++k) {
    if (graph.dimension == 2) values.set(SE2Var(graph.vertex_ids[k]), graph.poses2[k]);
    else values.set(SE3Var(graph.vertex_ids[k]), graph.poses3[k]);
  }
}

void update_poses(io::PoseGraph& graph, const Values& values) {
  for (size_t k = 0; k < graph.vertex_ids.size(); ++k) {
    if (graph.dimension == 2) graph.poses2[k] = values.get(SE2Var(graph.vertex_ids[k]));
    else graph.poses3[k] = values.get(SE3Var(graph.vertex_ids[k]));
  }
}

SolverOptions pose_graph_solver_options() {
  SolverOptions options;
  options.initial_trust_region_radius = kPoseGraphInitialTrustRegionRadius;
  return options;
}

}  // namespace lsjit
