// Chordal initialization of a pose graph: rotations first, then translations, each a
// sparse linear least-squares problem (Carlone et al., "Initialization techniques for 3D
// SLAM", ICRA 2015; what GTSAM's InitializePose3 and SE-Sync's chordal initializer do).
//
// Why: Levenberg-Marquardt converges to whichever minimum is near its start. A file's
// initial poses are usually composed odometry, whose rotation error grows along the
// trajectory and bends long loops; the orientation is what makes pose graph optimization
// nonconvex. The chordal relaxation finds rotations consistent with all edges at once
// (loop closures included) by a linear solve, so LM starts near the optimum and typically
// needs fewer iterations. It is opt-in: on a graph whose file poses are already good it
// costs a few sparse factorizations and may change nothing.
//
// What initialize_chordal(graph) computes, for dimension D = 2 (SE2) or 3 (SE3):
//   1. Anchors: the graph's held_constant() vertices (its FIX ids, else the lowest id: the
//      vertices make_pose_graph_problem holds constant) keep their poses. A connected
//      component (through edges) without such a vertex is anchored at its lowest-id vertex,
//      at that vertex's current pose: the solve leaves its gauge free, so any anchor does,
//      and the rest of the component is still initialized consistently. A vertex without
//      edges is its own component and so keeps its pose.
//   2. Rotations: for every edge i -> j with measured rotation R_ij, R_j ≈ R_i R_ij over
//      unconstrained D x D matrices, minimizing Σ w_ij ‖R_j − R_i R_ij‖²_F with the anchors'
//      rotations fixed. The weight is w_ij = d / tr(Ω_rr⁻¹), Ω_rr the edge information's
//      rotation block (d = 1 for SE2, 3 for SE3): the precision of an isotropic rotation
//      noise with the same total variance, SE-Sync's κ up to a constant factor (a common
//      factor does not change the minimizer). Each result is then projected to the nearest
//      rotation (SVD, det fixed to +1).
//   3. Translations, with those rotations fixed: minimizing Σ ‖t_j − t_i − R_i t_ij‖²_W
//      with W = R_i Ω_tt R_iᵀ, Ω_tt the translation block of the edge's information (the
//      edge's translation error R_iᵀ(t_j − t_i) − t_ij, expressed in the world frame); the
//      coupling block Ω_tr between translation and rotation errors is ignored.
// Both linear systems have one D x D block per non-anchor vertex and the same pattern; they
// are solved by lsjit's supernodal sparse Cholesky, AMD-ordered (one symbolic analysis, one
// numeric factorization per right-hand side: D for the rotations, 1 for the translations).
// Self-loop edges (i -> i) relate a pose to itself and are skipped. Anchors keep their
// poses bit for bit; every other vertex gets a new pose (unit quaternion / unit complex).
// With noise-free measurements the result is the true graph up to rounding.
//
// Errors: lsjit::Error for a graph without vertices, one that is not well formed (a
// dimension other than 2 or 3, pose and id counts that differ, a duplicate vertex id, an
// edge or FIX id that names no vertex: what read_g2o never returns), an edge information
// whose rotation or translation block is not positive definite (naming the edge), and a
// linear system the Cholesky factorization rejects or whose solution is not finite (e.g.
// weights so disparate that the system is numerically singular). On an error the graph is
// unchanged.
#pragma once

#include "lsjit/runtime/io/g2o.h"

namespace lsjit {

// Replaces the poses of the graph's non-anchor vertices by the chordal initialization
// (see above), and clears PoseGraph::vertices_from_edges: a graph read from a file without
// VERTEX lines needs it (or another initialization) before a solve. Edges and FIX ids are
// unchanged.
void initialize_chordal(io::PoseGraph& graph);

}  // namespace lsjit
