// Pose-graph optimization (SLAM back end) with lsjit: the built-in g2o pipeline.
//
//   lsjit_example_pose_graph               generates a 3D pose graph with a known truth
//   lsjit_example_pose_graph FILE.g2o      reads a g2o file (SE2 or SE3:QUAT) instead
//
// A pose graph has one unknown pose per vertex and one relative-pose measurement per edge;
// solving it finds the poses that agree best with all measurements. lsjit ships the
// standard g2o residuals (docs/architecture.md, "Conventions": Ceres' pose_graph_3d error,
// weighted by the upper Cholesky factor of the information), so reading a file and solving
// it takes a few lines. curve_fitting.cpp shows how to write a cost of your own.
//
// The program exits nonzero when the solve does not converge or (for a generated graph)
// when the solution is not closer to the truth than the initial estimate.
#include <lsjit/lsjit.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <optional>
#include <vector>

namespace {

// The largest distance between corresponding positions of two sets of poses.
double worst_translation_error(const lsjit::io::PoseGraph& graph, const std::vector<lsjit::SE3d>& truth) {
  double worst = 0;
  for (size_t k = 0; k < truth.size(); ++k)
    worst = std::max(worst, (graph.poses3[k].translation() - truth[k].translation()).norm());
  return worst;
}

int run(int argc, char** argv) {
  // 1. The graph. A file gives measurements and an initial estimate; the generator also
  //    gives the true poses it measured. This spec is how data/pose_graph_se3_500.g2o was
  //    made (`lsjit generate pose-graph --dim 3 --poses 500 --loop-closures 120 --noise 0.02
  //    --seed 2026`), so both inputs are the same problem.
  lsjit::io::PoseGraph graph;
  std::optional<std::vector<lsjit::SE3d>> truth;
  if (argc > 1) {
    graph = lsjit::io::read_g2o(argv[1]);  // throws lsjit::Error "FILE:LINE: ..." if malformed
  } else {
    lsjit::io::PoseGraphSpec spec;
    spec.dimension = 3;
    spec.poses = 500;
    spec.loop_closures = 120;  // edges between poses that revisit a place
    spec.translation_sigma = 0.02;
    spec.rotation_sigma = 0.02;
    spec.seed = 2026;
    lsjit::io::GeneratedPoseGraph generated = lsjit::io::generate_pose_graph(spec);
    graph = std::move(generated.graph);
    truth = std::move(generated.truth3);
  }
  std::cout << graph.num_vertices() << " poses, " << graph.num_edges() << " edges\n";

  // 2. The least-squares problem: one se3_between (or se2_between) instance per edge, its
  //    residual whitened by the upper Cholesky factor of the edge's information matrix;
  //    the initial values are the file's vertices; the lowest vertex (or the FIX ones) is
  //    held constant, fixing the gauge. The edges go in as one batch: one kernel serves all.
  lsjit::PoseGraphProblem p = lsjit::make_pose_graph_problem(graph);

  // 3. analyze() traces the cost once, differentiates it symbolically, compiles the
  //    residual and normal-equation kernels with LLVM and lays out the sparse linear
  //    system. Kernels are cached on disk (LSJIT_CACHE_DIR, by default ~/.cache/lsjit), so
  //    a second run of this program compiles nothing.
  lsjit::AnalyzedProblem analyzed = p.problem.analyze();

  // 4. Levenberg–Marquardt with the sparse Cholesky factorization (lsjit's own supernodal
  //    one), a line per iteration. Every option is a runtime input: changing one never
  //    recompiles.
  lsjit::SolverOptions options;
  options.linear_solver = lsjit::LinearSolver::SparseCholesky;
  options.num_threads = 0;  // every hardware thread; the result is the same for any count
  options.verbose = true;
  const lsjit::SolveResult result = analyzed.solve(p.initial, options);
  std::cout << result.summary.report();

  // 5. The solution, as g2o vertices (write_g2o would save it).
  lsjit::io::PoseGraph solved = graph;
  lsjit::update_poses(solved, result.values);

  // 6. Is it right? It must have converged and lowered the cost ½Σ‖r‖².
  bool ok = lsjit::converged(result.summary.termination) &&
            result.summary.final_cost < result.summary.initial_cost;
  if (truth) {
    // Knowing the truth, two more checks. The optimum fits the noisy measurements at least
    // as well as the truth does (the truth is one candidate solution) ...
    lsjit::Values true_values;
    for (size_t k = 0; k < truth->size(); ++k)
      true_values.set(lsjit::SE3Var(graph.vertex_ids[k]), (*truth)[k]);
    const double truth_cost = analyzed.cost(true_values);
    // ... and, the measurements being good, it is much nearer the truth than the
    // drifting odometry it started from.
    const double before = worst_translation_error(graph, *truth);
    const double after = worst_translation_error(solved, *truth);
    std::printf("cost at the truth %.6g, at the solution %.6g\n", truth_cost, result.summary.final_cost);
    std::printf("worst position error: initial %.4g, solution %.4g\n", before, after);
    ok = ok && result.summary.final_cost <= truth_cost && after < 0.5 * before;
  }
  if (!ok) {
    std::cerr << "pose_graph: the solve did not reach a good solution\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // lsjit::Error: a bad file, for instance
    std::cerr << "pose_graph: " << e.what() << "\n";
    return 1;
  }
}
