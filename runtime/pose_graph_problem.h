// A g2o pose graph as a least-squares problem, with DESIGN.md's conventions: one
// se2_between or se3_between instance per edge (standard_costs.h; residual U·e with U the
// upper Cholesky factor of the edge's information), the vertices as initial values of
// SE2Var / SE3Var with the vertex id as variable id, and the graph's held_constant()
// vertices (its FIX lines, else the lowest id) held constant.
#pragma once

#include "lsjit/runtime/io/g2o.h"
#include "lsjit/runtime/problem.h"

namespace lsjit {

struct PoseGraphProblem {
  Problem problem;
  Values initial;
};

// Edges are added as one batch per graph, so the problem has one cost group.
// With a loss, every edge is robustified by it (e.g. against wrong loop closures).
PoseGraphProblem make_pose_graph_problem(const io::PoseGraph& graph, const Loss& loss = TrivialLoss());

// Copies the poses in `values` into the graph's vertices (the edges are unchanged).
// Throws lsjit::Error if a vertex has no value.
void update_poses(io::PoseGraph& graph, const Values& values);

}  // namespace lsjit
