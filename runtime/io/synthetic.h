// Synthetic pose graphs and BAL problems with a known ground truth, for tests, benchmarks
// and `lsjit generate`.
//
// Determinism: everything is drawn from one std::mt19937_64 seeded with `seed`, in a fixed
// order, through this file's own uniform and Box-Muller normal samplers (the
// std::*_distribution classes differ between standard libraries). The same spec gives the
// same result, and so the same file, bit for bit, wherever the C math library (log, cos,
// sin, sqrt) gives the same values.
//
// Invalid specs (a count or dimension out of range, a negative or non-finite sigma) throw
// lsjit::Error saying what was expected; nothing else throws.
#pragma once

#include <cstdint>
#include <vector>

#include "lsjit/runtime/io/bal.h"
#include "lsjit/runtime/io/g2o.h"

namespace lsjit::io {

// A Manhattan-world trajectory, like g2o's create_manhattan: a random walk of unit steps on
// the integer grid inside a box of side max(2, ceil((poses/4)^(1/dimension))) cells, so
// that it keeps revisiting places. Each step goes straight with probability 0.6 and turns
// by 90° otherwise (left or right; in 3D also up or down, rotating the body frame about
// the turn's axis), turning instead of leaving the box. Pose 0 is the identity.
//
// Edges, in this order: the poses - 1 odometry edges (i, i + 1), then `loop_closures`
// edges (i, j), j > i + 1, ordered by (i, j), drawn uniformly from the pairs at Chebyshev
// grid distance <= r for the smallest r that has enough pairs (r = 1 unless the graph is
// tiny).
//
// Noise, matching the residuals of docs/architecture.md, "Conventions", so that 1/σ² is
// the right weight: the measured translation is the true one plus N(0, σ_t²) per axis;
// the measured rotation is the true angle plus N(0, σ_r²) (SE2), or Exp(n)·q_true with
// n ~ N(0, σ_r² I) (SE3). information = diag(1/σ_t², ..., 1/σ_r², ...) with weight 1 for a zero σ (exact
// measurements: any weight has the same optimum); sqrt_information is its square root.
//
// The graph's poses (the initial estimate) compose the measured odometry from pose 0, so
// they drift as a real odometry estimate does; with zero noise they equal the truth up to
// rounding. No FIX lines: the solver holds the lowest vertex (0) constant. SE2 rotations
// are those of an angle and SE3 quaternions are unit, so write_g2o and read_g2o give back
// exactly the generated graph.
//
// Drift (drift_sigma > 0), for testing starts (pose_graph_start.h): the initial estimate
// composes each odometry measurement after an extra rotation error, z·R(n) with
// n ~ N(0, drift_sigma²) (SE2: an angle; SE3: Exp(n), n ~ N(0, drift_sigma² I)), as a
// front end with a poor gyro would. The measurements are unchanged, so the optimum is the
// same and only the start drifts further. Drawn after everything else (the indefinite
// edges included), so the rest of the graph is the same as without it.
//
// Indefinite edges (indefinite_edges > 0), for the reader's repair modes (g2o.h,
// InformationRepair): after everything above is drawn (so the rest of the graph is the same
// as without them), that many edges are chosen uniformly without replacement, and each gets
// a translation-rotation coupling C = s·√(w_t·w_r)·u·vᵀ, s uniform in [2, 4], u and v
// uniform unit vectors (u of the translation, v of the rotation part; SE2: v = 1), written
// symmetrically into the off-diagonal blocks of its diagonal Ω = diag(W_t, W_r). Its Schur
// complement W_r - CᵀW_t⁻¹C has the eigenvalue w_r(1 - s²) <= -3·w_r, so Ω is indefinite,
// and zeroing the coupling (block-diagonal repair) gives back the diagonal Ω exactly. Such
// an edge has no Cholesky factor: its sqrt_information is NaN, so that a solve that uses it
// fails instead of silently dropping the edge. The graph is written with
// G2oWriteOptions::allow_indefinite_information and read with a repair mode.
struct PoseGraphSpec {
  int dimension = 2;                // 2 (SE2) or 3 (SE3)
  int64_t poses = 100;              // >= 1; vertex ids 0 .. poses - 1
  int64_t loop_closures = 20;       // <= (poses - 1)(poses - 2) / 2
  double translation_sigma = 0.02;  // σ_t, in grid steps (a step has length 1)
  double rotation_sigma = 0.02;     // σ_r, radians
  uint64_t seed = 1;
  int64_t indefinite_edges = 0;     // 0 .. number of edges (poses - 1 + loop_closures)
  double drift_sigma = 0;           // radians per odometry step, of the initial estimate only
};

struct GeneratedPoseGraph {
  PoseGraph graph;           // noisy measurements, drifting initial estimate
  std::vector<SE2d> truth2;  // dimension 2: the true pose of graph.vertex_ids[k]
  std::vector<SE3d> truth3;  // dimension 3
  // Positions in graph.edges2/edges3 of the edges with an indefinite Ω, ascending.
  std::vector<size_t> indefinite_edges;
};

GeneratedPoseGraph generate_pose_graph(const PoseGraphSpec& spec);

// An upper bound on the heap bytes generate_pose_graph(spec) and then write_g2o of its
// graph hold at once (every array is reserved to its final size, and the writer streams),
// for refusing a spec up front that cannot fit in memory. The spec's counts are not
// checked here; the result is a double so that no count can overflow it.
double generated_pose_graph_bytes(const PoseGraphSpec& spec);

// Cameras on a ring of radius 10 around the y axis (evenly spread in angle with some
// jitter, heights in [-1, 1]), each looking at the origin with its y axis near world up,
// and points uniform in the cube [-2, 2]³. Every point is in front of every camera
// (P.z <= 2√3 - 10 < 0 in the BAL convention, bal.h). Intrinsics: f in [450, 550], k1 in
// [-0.05, 0.05], k2 in [-0.01, 0.01].
//
// Each point is seen by observations_per_point distinct cameras chosen uniformly;
// observations are grouped by point (as in the BAL files), cameras ascending, and equal
// the projection of the truth plus N(0, pixel_sigma²) per coordinate.
//
// The initial problem has the same observations and perturbed unknowns: N(0, σ²) added to
// each angle-axis component (camera_rotation_sigma), translation component
// (camera_translation_sigma) and point coordinate (point_sigma); f, k1 and k2 are kept.
struct BalSpec {
  int32_t cameras = 16;                // >= 1
  int32_t points = 1000;               // >= 0
  int32_t observations_per_point = 4;  // 1 .. cameras
  double pixel_sigma = 1.0;
  double camera_rotation_sigma = 0.01;    // radians
  double camera_translation_sigma = 0.1;  // scene units (the ring has radius 10)
  double point_sigma = 0.1;
  uint64_t seed = 1;
};

struct GeneratedBal {
  BalProblem truth;    // true cameras and points, with the (noisy) observations
  BalProblem initial;  // the same observations, perturbed cameras and points
};

GeneratedBal generate_bal(const BalSpec& spec);
// The same bound for generate_bal(spec) and then write_bal of its initial problem.
double generated_bal_bytes(const BalSpec& spec);

}  // namespace lsjit::io
