// IncrementalSolver: each update against a batch Gauss–Newton step from the same
// linearization point (with thresholds that relinearize and re-solve everything), removal
// against never adding, kernels that never trace or compile again, replays of generated
// pose graphs against the batch optimum, and bad input that changes nothing.
#include <doctest/doctest.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <limits>
#include <vector>

#include "lsjit/common/error.h"
#include "lsjit/runtime/incremental_solver.h"
#include "lsjit/runtime/io/synthetic.h"
#include "lsjit/runtime/pose_graph_problem.h"
#include "lsjit/runtime/standard_costs.h"
#include "../support/memory_cache.h"

namespace incremental_solver_test {

using namespace lsjit;

// The edges of pose k in a replay: those whose larger end is k, in file order.
std::vector<std::vector<size_t>> edges_by_pose(const io::PoseGraph& graph) {
  std::vector<std::vector<size_t>> by(graph.num_vertices());
  const size_t edges = graph.dimension == 2 ? graph.edges2.size() : graph.edges3.size();
  for (size_t e = 0; e < edges; ++e) {
    const int64_t from = graph.dimension == 2 ? graph.edges2[e].from : graph.edges3[e].from;
    const int64_t to = graph.dimension == 2 ? graph.edges2[e].to : graph.edges3[e].to;
    by[static_cast<size_t>(std::max(from, to))].push_back(e);
  }
  return by;
}

// Adds edge e of the graph to `p` (with `loss` on loop closures, edges between non-neighbours).
void add_edge(Problem& p, const io::PoseGraph& graph, size_t e, const Loss& closure_loss) {
  if (graph.dimension == 2) {
    const auto& edge = graph.edges2[e];
    const Loss loss = std::abs(edge.to - edge.from) == 1 ? TrivialLoss() : closure_loss;
    p.add(standard_costs::se2_between_cost(), loss, SE2Var(edge.from), SE2Var(edge.to), edge.measurement,
          edge.sqrt_information);
  } else {
    const auto& edge = graph.edges3[e];
    const Loss loss = std::abs(edge.to - edge.from) == 1 ? TrivialLoss() : closure_loss;
    p.add(standard_costs::se3_between_cost(), loss, SE3Var(edge.from), SE3Var(edge.to), edge.measurement,
          edge.sqrt_information);
  }
}

void set_vertex(Values& v, const io::PoseGraph& graph, size_t k) {
  if (graph.dimension == 2) v.set(SE2Var(graph.vertex_ids[k]), graph.poses2[k]);
  else v.set(SE3Var(graph.vertex_ids[k]), graph.poses3[k]);
}

// One update per pose of the graph, vertex 0 constant.
struct Replay {
  const io::PoseGraph& graph;
  std::vector<std::vector<size_t>> by_pose = edges_by_pose(graph);
  Loss closure_loss = TrivialLoss();

  // Pose k starts at estimate(k − 1) ∘ z of its odometry edge (GTSAM's ISAM2 examples),
  // else at the graph's vertex.
  UpdateSummary step(IncrementalSolver& solver, size_t k) const {
    Problem p;
    Values v;
    set_vertex(v, graph, k);
    for (size_t e : by_pose[k]) {
      add_edge(p, graph, e, closure_loss);
      if (k < 2) continue;
      if (graph.dimension == 2 && graph.edges2[e].from == static_cast<int64_t>(k - 1) && graph.edges2[e].to == static_cast<int64_t>(k))
        v.set(SE2Var(k), solver.estimate().get(SE2Var(k - 1)) * graph.edges2[e].measurement);
      if (graph.dimension == 3 && graph.edges3[e].from == static_cast<int64_t>(k - 1) && graph.edges3[e].to == static_cast<int64_t>(k))
        v.set(SE3Var(k), solver.estimate().get(SE3Var(k - 1)) * graph.edges3[e].measurement);
    }
    if (k == 0) {
      // The first pose alone has no edge: hold it with a prior-free constant, as the batch
      // solve does, and give it a cost on the next pose's update.
      return {};
    }
    if (k == 1) {
      set_vertex(v, graph, 0);
      if (graph.dimension == 2) p.set_constant(SE2Var(graph.vertex_ids[0]));
      else p.set_constant(SE3Var(graph.vertex_ids[0]));
    }
    return solver.update(std::move(p), v);
  }
};

// The batch problem of every edge of the first `poses` poses.
Problem batch_problem(const Replay& r, size_t poses) {
  Problem p;
  for (size_t k = 0; k < poses; ++k)
    for (size_t e : r.by_pose[k]) add_edge(p, r.graph, e, r.closure_loss);
  if (r.graph.dimension == 2) p.set_constant(SE2Var(r.graph.vertex_ids[0]));
  else p.set_constant(SE3Var(r.graph.vertex_ids[0]));
  return p;
}

// max over variables of |estimate − (θ ⊕ batch GN step at θ)|, per parameter.
double gauss_newton_gap(const IncrementalSolver& solver, const Problem& batch) {
  const AnalyzedProblem analyzed = batch.analyze(testing::analyze_with());
  const Values& theta = solver.linearization_point();
  const auto e = analyzed.evaluate(theta, true);
  const Eigen::VectorXd step = e.gauss_newton.llt().solve(-e.gradient);
  double gap = 0;
  for (const auto& fv : analyzed.free_variables()) {
    const VariableType& type = fv.type == "SE2" ? *variable_type<SE2Var>() : *variable_type<SE3Var>();
    std::vector<double> expected(type.ambient);
    type.retract(theta.params(fv.type, fv.id), step.data() + fv.offset, expected.data());
    const double* got = solver.estimate().params(fv.type, fv.id);
    for (int a = 0; a < type.ambient; ++a) gap = std::max(gap, std::abs(got[a] - expected[a]));
  }
  return gap;
}

// The default thresholds, with the tests' memory-only kernel cache.
IncrementalOptions defaults() {
  IncrementalOptions o;
  o.analyze = testing::analyze_with();
  return o;
}

IncrementalOptions exact() {
  IncrementalOptions o = defaults();
  o.relinearize_threshold = 0;
  o.relinearize_skip = 1;
  o.wildfire_threshold = 0;
  return o;
}

TEST_CASE("IncrementalSolver: with everything relinearized and re-solved, each update is the batch Gauss-Newton step") {
  for (int dimension : {2, 3}) {
    io::PoseGraphSpec spec;
    spec.dimension = dimension;
    spec.poses = 60;
    spec.loop_closures = 15;
    spec.seed = 4;
    const io::GeneratedPoseGraph g = io::generate_pose_graph(spec);
    Replay replay{g.graph};
    replay.closure_loss = HuberLoss(1.0);
    IncrementalSolver solver(exact());
    for (size_t k = 0; k < g.graph.vertex_ids.size(); ++k) {
      replay.step(solver, k);
      if (k >= 1) CHECK(gauss_newton_gap(solver, batch_problem(replay, k + 1)) < 1e-9);
    }
  }
}

TEST_CASE("IncrementalSolver: a new instance of a known cost traces and compiles nothing") {
  io::PoseGraphSpec spec;
  spec.poses = 200;
  spec.loop_closures = 30;
  const io::GeneratedPoseGraph g = io::generate_pose_graph(spec);
  const Replay replay{g.graph};
  IncrementalSolver solver(defaults());
  replay.step(solver, 0);
  replay.step(solver, 1);
  const int64_t traces = solver.traces();
  CHECK(traces == 1);
  for (size_t k = 2; k < 200; ++k) {
    const UpdateSummary s = replay.step(solver, k);
    CHECK(s.traces == 0);
    CHECK(s.compiles == 0);
  }
  CHECK(solver.traces() == traces);
  CHECK(solver.num_costs() == static_cast<int64_t>(g.graph.edges2.size()));
}

TEST_CASE("IncrementalSolver: removing a cost is the same as never adding it") {
  io::PoseGraphSpec spec;
  spec.poses = 40;
  spec.loop_closures = 10;
  spec.seed = 8;
  const io::GeneratedPoseGraph g = io::generate_pose_graph(spec);
  const Replay replay{g.graph};
  IncrementalSolver solver(exact());
  for (size_t k = 0; k < 40; ++k) replay.step(solver, k);
  // A wrong loop closure, then its removal.
  Problem wrong;
  const SE2d z = SE2d::from_xy_theta(5, -2, 0.3);
  wrong.add(standard_costs::se2_between_cost(), SE2Var(3), SE2Var(30), z, Eigen::Matrix3d::Identity().eval());
  solver.update(std::move(wrong), Values{});
  const std::vector<CostHandle> added = solver.last_added();
  REQUIRE(added.size() == 1);
  solver.update(Problem{}, Values{}, added);
  CHECK(solver.num_costs() == static_cast<int64_t>(g.graph.edges2.size()));
  CHECK(gauss_newton_gap(solver, batch_problem(replay, 40)) < 1e-9);
}

TEST_CASE("IncrementalSolver: replays of generated graphs end at the batch optimum") {
  for (int dimension : {2, 3}) {
    io::PoseGraphSpec spec;
    spec.dimension = dimension;
    spec.poses = 400;
    spec.loop_closures = 60;
    spec.seed = 12;
    const io::GeneratedPoseGraph g = io::generate_pose_graph(spec);
    const Replay replay{g.graph};
    IncrementalSolver solver(defaults());
    for (size_t k = 0; k < g.graph.vertex_ids.size(); ++k) replay.step(solver, k);
    PoseGraphProblem batch = make_pose_graph_problem(g.graph);
    const AnalyzedProblem analyzed = batch.problem.analyze(testing::analyze_with());
    SolverOptions so = pose_graph_solver_options();
    so.function_tolerance = 1e-12;
    so.max_iterations = 100;
    const double optimum = analyzed.solve(batch.initial, so).summary.final_cost;
    const double incremental = solver.cost();
    INFO("dimension " << dimension << ": incremental " << incremental << ", batch " << optimum);
    CHECK(incremental <= optimum * (1 + 1e-3));
    CHECK(incremental >= optimum * (1 - 1e-9));
  }
}

TEST_CASE("IncrementalSolver: bad input is an error that changes nothing") {
  io::PoseGraphSpec spec;
  spec.poses = 20;
  spec.loop_closures = 4;
  const io::GeneratedPoseGraph g = io::generate_pose_graph(spec);
  const Replay replay{g.graph};
  IncrementalSolver solver(defaults());
  for (size_t k = 0; k < 20; ++k) replay.step(solver, k);
  const double cost = solver.cost();
  const int64_t costs = solver.num_costs(), variables = solver.num_variables();
  const SE2d z = SE2d::from_xy_theta(1, 0, 0.1);
  const Eigen::Matrix3d U = Eigen::Matrix3d::Identity();
  auto rejected = [&](Problem p, const Values& v, std::vector<CostHandle> removed, const std::string& expected) {
    try {
      solver.update(std::move(p), v, removed);
      FAIL("accepted: " << expected);
    } catch (const Error& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(expected) != std::string::npos);
    }
    CHECK(solver.num_costs() == costs);
    CHECK(solver.num_variables() == variables);
    CHECK(solver.cost() == cost);
  };
  {  // an unknown variable
    Problem p;
    p.add(standard_costs::se2_between_cost(), SE2Var(19), SE2Var(99), z, U);
    rejected(std::move(p), {}, {}, "SE2 variable 99, which neither exists nor is in new_values");
  }
  {  // a new value for an existing variable
    Problem p;
    p.add(standard_costs::se2_between_cost(), SE2Var(19), SE2Var(20), z, U);
    Values v;
    v.set(SE2Var(20), z);
    v.set(SE2Var(5), z);
    rejected(std::move(p), v, {}, "SE2 variable 5 already exists");
  }
  {  // NaN
    Problem p;
    p.add(standard_costs::se2_between_cost(), SE2Var(19), SE2Var(20), z, U);
    Values v;
    v.set(SE2Var(20), SE2d::from_xy_theta(std::numeric_limits<double>::quiet_NaN(), 0, 0.1));
    rejected(std::move(p), v, {}, "not finite");
  }
  {  // a new variable without a cost
    Values v;
    v.set(SE2Var(50), z);
    rejected(Problem{}, v, {}, "no cost uses it");
  }
  {  // a handle that names nothing, and one twice
    rejected(Problem{}, {}, {CostHandle{7, 0}}, "names no live cost");
    rejected(Problem{}, {}, {CostHandle{0, 3}, CostHandle{0, 3}}, "listed twice");
  }
  {  // removing the only cost of a variable
    rejected(Problem{}, {}, {solver.last_added()}, "without a cost");
  }
  {  // a cost that is not finite at its values: log of a negative number
    auto log_cost = lsjit::cost("incremental_log_of_negative", [](const auto& v, VecVar<1> x, SE2Var pose) {
      return std::array<Sym, 2>{log(v[x](0)), v[pose].translation()(0)};
    });
    Problem p;
    p.add(log_cost, VecVar<1>(0), SE2Var(3));
    Values v;
    v.set(VecVar<1>(0), Eigen::Matrix<double, 1, 1>(-1.0));
    rejected(std::move(p), v, {}, "cost 'incremental_log_of_negative' on Vec1 variable 0, SE2 variable 3 has a non-finite");
  }
  {  // set_constant on an existing variable
    Problem p;
    p.add(standard_costs::se2_between_cost(), SE2Var(2), SE2Var(9), z, U);
    p.set_constant(SE2Var(2));
    rejected(std::move(p), {}, {}, "only a variable added by this update");
  }
}

}  // namespace incremental_solver_test
