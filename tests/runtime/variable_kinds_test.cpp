// lsjit::Kind: variable types of one layout told apart by name. Before kinds, a velocity
// and a landmark were both VecVar<3>: the same ID meant one variable, and neither could be
// Schur-eliminated apart from the other.
#include <doctest/doctest.h>

#include <string>

#include "lsjit/lsjit.h"
#include "../support/memory_cache.h"

namespace variable_kinds_test {
using namespace lsjit;

using Position = Kind<VecVar<3>, "position">;
using Velocity = Kind<VecVar<3>, "velocity">;
using Landmark = Kind<VecVar<3>, "landmark">;
using Body = Kind<SE3Var, "body">;

// A custom type written out in full, as docs/variables.md describes, that takes a kind's
// name with another layout: the two must not share rows.
struct FlatLandmark : VecVar<2> {
  using VecVar<2>::VecVar;
  static constexpr std::string_view kName = "landmark";
  static VarBatch<FlatLandmark> batch(std::vector<int64_t> ids) { return {std::move(ids)}; }
};

namespace {

auto kinds_prior = cost("kinds_prior", [](const auto& v, auto x, const auto& z) { return (v[x] - z).eval(); });
auto kinds_observe = cost("kinds_observe", [](const auto& v, Position p, Landmark l, const auto& z) {
  return (v[l] - v[p] - z).eval();
});
auto kinds_motion = cost("kinds_motion", [](const auto& v, Position p0, Position p1, Velocity u, const auto& dt) {
  return (v[p1] - v[p0] - dt * v[u]).eval();
});

constexpr int kSteps = 4, kLandmarks = 6;

Eigen::Vector3d true_position(int k) { return {1.0 * k, 0.5 * k * k, -0.25 * k}; }
Eigen::Vector3d true_velocity(int k) { return true_position(k + 1) - true_position(k); }
Eigen::Vector3d true_landmark(int j) { return {2.0 + j, -1.0 + 0.3 * j, 4.0 - j}; }

// Positions 0..kSteps, velocities 0..kSteps-1 and landmarks 0..kLandmarks-1: all three
// kinds use ID 0, and the problem is linear, so the solve must reach the truth exactly.
struct KindsProblem {
  Problem problem;
  Values initial;
  KindsProblem() {
    problem.add(kinds_prior, Position(0), Eigen::Vector3d(true_position(0)));
    problem.add(kinds_prior, Velocity(0), Eigen::Vector3d(true_velocity(0)));
    for (int k = 0; k < kSteps; ++k) problem.add(kinds_motion, Position(k), Position(k + 1), Velocity(k), 1.0);
    for (int k = 0; k <= kSteps; ++k)
      for (int j = 0; j < kLandmarks; ++j)
        problem.add(kinds_observe, Position(k), Landmark(j), Eigen::Vector3d(true_landmark(j) - true_position(k)));
    for (int k = 0; k <= kSteps; ++k) initial.set(Position(k), Eigen::Vector3d::Zero());
    for (int k = 0; k < kSteps; ++k) initial.set(Velocity(k), Eigen::Vector3d::Zero());
    for (int j = 0; j < kLandmarks; ++j) initial.set(Landmark(j), Eigen::Vector3d::Zero());
  }
};

SolveResult solve_with(const KindsProblem& kp, const std::string& eliminate, LinearSolver solver) {
  AnalyzeOptions a;
  a.cache = &lsjit::testing::memory_cache();
  a.schur_elimination = eliminate;
  SolverOptions o;
  o.linear_solver = solver;
  return kp.problem.analyze(a).solve(kp.initial, o);
}

void check_truth(const Values& v) {
  for (int k = 0; k <= kSteps; ++k) CHECK((v.get(Position(k)) - true_position(k)).norm() < 1e-9);
  for (int k = 0; k < kSteps; ++k) CHECK((v.get(Velocity(k)) - true_velocity(k)).norm() < 1e-9);
  for (int j = 0; j < kLandmarks; ++j) CHECK((v.get(Landmark(j)) - true_landmark(j)).norm() < 1e-9);
}

}  // namespace

TEST_CASE("kinds: two kinds of one size have separate IDs, counts and names") {
  static_assert(Landmark::kName == "landmark" && Landmark::kAmbient == 3 && Landmark::kTangent == 3);
  static_assert(VecVar<15>::kName == "Vec15" && VecVar<32>::kName == "Vec32" && VecVar<7>::kName == "Vec7");
  const KindsProblem kp;
  const SolveResult r = solve_with(kp, "auto", LinearSolver::Auto);
  REQUIRE(r.summary.usable());
  CHECK(r.summary.variables == (kSteps + 1) + kSteps + kLandmarks);
  check_truth(r.values);
  // Velocity 0 and landmark 0 are two variables with two values.
  CHECK((r.values.get(Velocity(0)) - r.values.get(Landmark(0))).norm() > 1);
  CHECK_FALSE(r.values.has(VecVar<3>(0)));

  REQUIRE(r.summary.variable_types.size() == 3);
  for (const auto& t : r.summary.variable_types) {
    CAPTURE(t.name);
    CHECK(t.tangent == 3);
    CHECK(t.variables == (t.name == "landmark" ? kLandmarks : t.name == "velocity" ? kSteps : kSteps + 1));
  }
  CHECK(r.summary.report().find("landmark 6 (eliminated)") != std::string::npos);
  CHECK(r.summary.report().find("velocity 4") != std::string::npos);
  CHECK(r.summary.json().find("{\"name\": \"landmark\", \"tangent\": 3, \"variables\": 6, \"constant\": 0, "
                              "\"eliminated\": true}") != std::string::npos);
}

TEST_CASE("kinds: the Schur solvers eliminate one kind apart from another of its size") {
  const KindsProblem kp;
  // Auto eliminates the kind with the most free variables that no cost uses twice.
  const SolveResult automatic = solve_with(kp, "auto", LinearSolver::Auto);
  CHECK(automatic.summary.linear_solver_reason.find("landmark") != std::string::npos);
  for (const char* eliminated : {"landmark", "velocity"}) {
    for (LinearSolver solver : {LinearSolver::DenseSchur, LinearSolver::SparseSchur}) {
      CAPTURE(eliminated);
      CAPTURE(linear_solver_name(solver));
      const SolveResult r = solve_with(kp, eliminated, solver);
      REQUIRE(r.summary.usable());
      check_truth(r.values);
      for (const auto& t : r.summary.variable_types) CHECK(t.eliminated == (t.name == eliminated));
    }
  }
  // Positions appear twice in the motion cost, so they cannot be eliminated: the message
  // names the kind.
  CHECK_THROWS_WITH(solve_with(kp, "position", LinearSolver::DenseSchur),
                    doctest::Contains("a cost has two position variables"));
}

TEST_CASE("kinds: errors name the kind") {
  Values v;
  v.set(Landmark(3), Eigen::Vector3d::Zero());
  CHECK_THROWS_WITH(v.get(Landmark(99)), "lsjit::Values: no value for landmark variable 99");
  CHECK_THROWS_WITH(v.get(Velocity(3)), "lsjit::Values: no value for velocity variable 3");

  KindsProblem kp;
  Values missing = kp.initial;
  kp.problem.add(kinds_prior, Velocity(42), Eigen::Vector3d::Zero());
  const SolveResult r = kp.problem.analyze(lsjit::testing::analyze_with()).solve(missing, {});
  CHECK_FALSE(r.summary.usable());
  CHECK(r.summary.message.find("no initial value for velocity variable 42") != std::string::npos);
}

TEST_CASE("kinds: a Lie group kind keeps its group's checks") {
  Values v;
  Eigen::Matrix<double, 7, 1> zero_rotation = Eigen::Matrix<double, 7, 1>::Zero();
  CHECK_THROWS_WITH(v.set(Body(0), SE3d::from_params(zero_rotation)), doctest::Contains("quaternion"));
  v.set(Body(0), SE3d::identity());
  CHECK(v.has(Body(0)));
  CHECK_FALSE(v.has(SE3Var(0)));
}

TEST_CASE("kinds: two types under one name with different layouts are refused, not merged") {
  Values v;
  v.set(Landmark(0), Eigen::Vector3d::Zero());
  CHECK_THROWS_WITH(v.set(FlatLandmark(1), Eigen::Vector2d::Zero()),
                    doctest::Contains("two variable types are named 'landmark'"));

  Problem p;
  p.add(kinds_prior, Landmark(0), Eigen::Vector3d::Zero());
  p.add(cost("kinds_flat_prior", [](const auto& vals, FlatLandmark x) { return vals[x]; }), FlatLandmark(1));
  CHECK_THROWS_WITH(p.analyze(lsjit::testing::analyze_with()),
                    doctest::Contains("two variable types are named 'landmark'"));

  // Values of the other layout under the problem's kind name: refused before any copy.
  Problem q;
  q.add(kinds_prior, Landmark(0), Eigen::Vector3d::Zero());
  Values flat;
  flat.set(FlatLandmark(0), Eigen::Vector2d::Zero());
  const SolveResult r = q.analyze(lsjit::testing::analyze_with()).solve(flat, {});
  CHECK_FALSE(r.summary.usable());
  CHECK(r.summary.message.find("two variable types are named 'landmark'") != std::string::npos);
}

}  // namespace variable_kinds_test
