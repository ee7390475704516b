// Pose graphs solved end to end: the shared benchmark files reach Ceres 2.1's final costs
// (same conventions: docs/architecture.md, "Conventions"), and a generated graph is pulled
// back towards its truth.
#include <doctest/doctest.h>

#include <filesystem>

#include "../support/memory_cache.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/runtime/io/synthetic.h"
#include "lsjit/runtime/pose_graph_problem.h"

using namespace lsjit;

namespace {

SolveResult solve_file(const std::filesystem::path& path, const SolverOptions& options = {}) {
  PoseGraphProblem p = make_pose_graph_problem(io::read_g2o(path));
  return p.problem.analyze(lsjit::testing::analyze_with()).solve(p.initial, options);
}

}  // namespace

TEST_CASE("shared pose graphs reach Ceres' final costs within 1e-6 relative") {
  const std::filesystem::path dir = std::filesystem::path(LSJIT_SHARED_DATA_DIR) / "pose_graph";
  const std::pair<const char*, double> expected[] = {
      {"ring.g2o", 5.5815553},         {"intel.g2o", 22.208920},
      {"M3500.g2o", 68.956479},        {"tinyGrid3D.g2o", 9.2596838},
      {"smallGrid3D.g2o", 512.69914},  {"sphere2500.g2o", 677.00865},
      {"parking-garage.g2o", 0.63419359}};
  for (const auto& [file, cost] : expected) {
    CAPTURE(file);
    if (!std::filesystem::exists(dir / file)) {
      MESSAGE("skipped: " << (dir / file).string() << " is absent");
      continue;
    }
    const SolveResult r = solve_file(dir / file);
    CAPTURE(r.summary.report());
    CHECK(converged(r.summary.termination));
    CHECK(r.summary.final_cost == doctest::Approx(cost).epsilon(1e-6));
    CHECK(r.summary.constant_variables == 1);
    // The pose-graph default (a first radius of 1e8, nearly Gauss–Newton) reaches the same
    // cost, in no more iterations than Ceres' 1e4.
    const SolveResult pg = solve_file(dir / file, pose_graph_solver_options());
    CAPTURE(pg.summary.report());
    CHECK(converged(pg.summary.termination));
    CHECK(pg.summary.final_cost == doctest::Approx(cost).epsilon(1e-6));
    CHECK(pg.summary.iterations <= r.summary.iterations);
    CHECK(pg.summary.per_iteration.front().trust_region_radius == kPoseGraphInitialTrustRegionRadius);
    // Mixed precision, forced on and off: the same cost. Automatic (the default) factors in
    // float on sphere2500, whose factor is large, and in double on the small graphs.
    for (MixedPrecision m : {MixedPrecision::Always, MixedPrecision::Never}) {
      SolverOptions o = pose_graph_solver_options();
      o.mixed_precision = m;
      const SolveResult forced = solve_file(dir / file, o);
      CAPTURE(forced.summary.report());
      CHECK(converged(forced.summary.termination));
      CHECK(forced.summary.final_cost == doctest::Approx(cost).epsilon(1e-6));
      if (m == MixedPrecision::Never) CHECK(forced.summary.mixed_precision_solves == 0);
      // (Only the supernodal Cholesky has a float path; Auto gives tinyGrid3D dense_cholesky.)
      if (m == MixedPrecision::Always && forced.summary.linear_solver == "sparse_cholesky")
        CHECK(forced.summary.mixed_precision_solves + forced.summary.mixed_precision_fallbacks > 0);
    }
    if (std::string(file) == "sphere2500.g2o") CHECK(pg.summary.mixed_precision_solves == pg.summary.iterations);
    if (std::string(file) == "M3500.g2o" || std::string(file) == "intel.g2o")
      CHECK(pg.summary.mixed_precision_solves + pg.summary.mixed_precision_fallbacks == 0);
  }
}

TEST_CASE("a generated pose graph is solved towards its ground truth, the held vertex fixed") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    io::PoseGraphSpec spec;
    spec.dimension = dim;
    spec.poses = 300;
    spec.loop_closures = 60;
    spec.seed = 42;
    const io::GeneratedPoseGraph g = io::generate_pose_graph(spec);
    PoseGraphProblem p = make_pose_graph_problem(g.graph);
    const SolveResult r = p.problem.analyze(lsjit::testing::analyze_with()).solve(p.initial);
    CAPTURE(r.summary.report());
    REQUIRE(converged(r.summary.termination));
    // The initial estimate drifts (composed noisy odometry); the solution is close to the
    // truth, with errors of the order of the measurement noise (σ = 0.02).
    io::PoseGraph solved = g.graph;
    update_poses(solved, r.values);
    double before = 0, after = 0;
    for (size_t k = 0; k < solved.vertex_ids.size(); ++k) {
      if (dim == 2) {
        before = std::max(before, (g.graph.poses2[k].translation() - g.truth2[k].translation()).norm());
        after = std::max(after, (solved.poses2[k].translation() - g.truth2[k].translation()).norm());
      } else {
        before = std::max(before, (g.graph.poses3[k].translation() - g.truth3[k].translation()).norm());
        after = std::max(after, (solved.poses3[k].translation() - g.truth3[k].translation()).norm());
      }
    }
    CHECK(after < 0.5 * before);
    CHECK(after < 0.5);
    const int64_t held = g.graph.held_constant().front();
    const size_t k = static_cast<size_t>(g.graph.index_of(held));
    if (dim == 2) CHECK(solved.poses2[k].params() == g.graph.poses2[k].params());
    else CHECK(solved.poses3[k].params() == g.graph.poses3[k].params());
  }
}
