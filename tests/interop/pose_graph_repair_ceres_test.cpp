// A pose graph with indefinite information matrices, read with the block-diagonal repair
// (runtime/io/g2o.h), reaches the final cost Ceres reaches on the same repaired problem: the
// repair a Ceres-based harness makes by hand (zero the 3x3, or SE2's 2x1, coupling blocks,
// then factor), built here independently of lsjit's reader, and solved by the pose-graph
// benchmark's Ceres baseline (tools/bench/ceres_pose_graph.h).
#include <doctest/doctest.h>

#include <Eigen/Cholesky>
#include <string>

#include "../../tools/bench/ceres_pose_graph_input.h"
#include "../support/memory_cache.h"
#include "lsjit/runtime/io/synthetic.h"
#include "lsjit/runtime/pose_graph_problem.h"

namespace {

// The Ceres baseline's input for `g`, each edge's U the upper Cholesky factor of its Ω with
// the translation-rotation coupling zeroed (by Eigen, not by lsjit's reader).
lsjit::bench::CeresPoseGraphInput ceres_input(const lsjit::io::PoseGraph& g) {
  return lsjit::bench::ceres_pose_graph_input(g, [t = g.dimension == 2 ? 2 : 3](const auto& e) {
    auto omega = e.information;
    const int n = static_cast<int>(omega.rows());
    omega.topRightCorner(t, n - t).setZero();
    omega.bottomLeftCorner(n - t, t).setZero();
    const auto llt = omega.llt();
    REQUIRE(llt.info() == Eigen::Success);
    return decltype(omega)(llt.matrixU());
  });
}

}  // namespace

TEST_CASE("block-diagonal repair reaches Ceres' final cost on the same repaired problem within 1e-6") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    lsjit::io::PoseGraphSpec spec;
    spec.dimension = dim;
    spec.poses = 200;
    spec.loop_closures = 50;
    spec.seed = 17;
    spec.indefinite_edges = 25;
    const lsjit::io::GeneratedPoseGraph generated = lsjit::io::generate_pose_graph(spec);
    // Through the file format, as a user's file would come.
    const std::string text = lsjit::io::format_g2o(generated.graph, {.allow_indefinite_information = true});
    const lsjit::io::PoseGraph repaired = lsjit::io::parse_g2o(
        text, "indefinite.g2o", {.repair_information = lsjit::io::InformationRepair::BlockDiagonal});
    REQUIRE(repaired.num_repaired_edges() == 25);

    lsjit::PoseGraphProblem p = lsjit::make_pose_graph_problem(repaired);
    const lsjit::SolveResult lsjit_result = p.problem.analyze(lsjit::testing::analyze_with()).solve(p.initial);
    CAPTURE(lsjit_result.summary.report());
    REQUIRE(lsjit::converged(lsjit_result.summary.termination));

    // The generated graph carries the matrices as written (indefinite ones included).
    lsjit::bench::CeresPoseGraphInput in = ceres_input(generated.graph);
    const lsjit::bench::CeresPoseGraphResult ceres_result = lsjit::bench::solve_ceres_pose_graph(in);
    CAPTURE(ceres_result.termination);
    CHECK(ceres_result.termination == "CONVERGENCE");
    CHECK(lsjit_result.summary.initial_cost == doctest::Approx(ceres_result.initial_cost).epsilon(1e-10));
    CHECK(lsjit_result.summary.final_cost == doctest::Approx(ceres_result.final_cost).epsilon(1e-6));
  }
}
