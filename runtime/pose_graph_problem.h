// A g2o pose graph as a least-squares problem, with the conventions of docs/architecture.md, "Conventions": one
// se2_between or se3_between instance per edge (standard_costs.h; residual U·e with U the
// upper Cholesky factor of the edge's information), the vertices as initial values of
// SE2Var / SE3Var with the vertex id as variable id, and the graph's held_constant()
// vertices (its FIX lines, else the lowest id) held constant.
#pragma once

#include "lsjit/runtime/analyzed_problem.h"
#include "lsjit/runtime/io/g2o.h"
#include "lsjit/runtime/problem.h"
#include "lsjit/runtime/solver_options.h"

namespace lsjit {

struct PoseGraphProblem {
  Problem problem;
  Values initial;
};

// Edges are added as one batch per graph, so the problem has one cost group.
// With a loss, every edge is robustified by it (e.g. against wrong loop closures).
// Throws lsjit::Error for a graph whose poses are no estimate (PoseGraph::
// vertices_from_edges: read from a file without VERTEX lines and not yet initialized),
// naming initialize_chordal (pose_graph_init.h).
PoseGraphProblem make_pose_graph_problem(const io::PoseGraph& graph, const Loss& loss = TrivialLoss());

// Levenberg–Marquardt's first trust-region radius for pose graphs: 1e8, a damping of 1e-8
// times diag(H), where Ceres' general default is 1e4. A pose graph's initial estimate (its
// odometry, or a chordal initialization) lies where Gauss–Newton steps are good, which is why
// g2o and GTSAM start with damping about this small. Ceres' 1e4 damps those steps and then
// grows the radius at most 3x per accepted step, so its first iterations only undo the
// damping; 1e8 reaches the same final costs in fewer iterations (docs/benchmarks-history.md). A bad
// first step is rejected and the radius shrinks, so 1e8 is safe, only slower, where it is
// too large. Bundle adjustment from a perturbed start is such a case, which is why it is
// not the general default.
inline constexpr double kPoseGraphInitialTrustRegionRadius = 1e8;

// SolverOptions' defaults with initial_trust_region_radius = kPoseGraphInitialTrustRegionRadius:
// what `lsjit solve FILE.g2o` uses unless told otherwise.
SolverOptions pose_graph_solver_options();

// Copies the poses in `values` into the graph's vertices (the edges are unchanged).
// Throws lsjit::Error if a vertex has no value.
void update_poses(io::PoseGraph& graph, const Values& values);

// The other way: sets each vertex's pose variable (SE2Var or SE3Var of its id) in `values`
// to the graph's pose, as make_pose_graph_problem fills `initial`.
void set_pose_values(Values& values, const io::PoseGraph& graph);

}  // namespace lsjit
