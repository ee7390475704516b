// The minimizer's named steps (runtime/solve/levenberg_marquardt.h), each against the
// rule it implements: Nielsen's damping update with the very-successful floor, the
// shrinking of the region after rejected steps, and every way a solve ends.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <string>

#include "../support/rosenbrock.h"
#include "lsjit/lsjit.h"
#include "lsjit/runtime/solve/levenberg_marquardt.h"

// A named namespace keeps the using-directive out of the files a unity build puts after
// this one (tests/CMakeLists.txt).
namespace levenberg_marquardt_test {
using namespace lsjit;

namespace {

// Rosenbrock from the standard start: a curved valley where LM rejects steps at a large
// initial radius and accepts them with every kind of ratio on the way down.
Problem lm_rosenbrock() {
  Problem problem;
  problem.add(lsjit::testing::rosenbrock_cost("lm_rosenbrock"), VecVar<2>(0));
  return problem;
}

Values lm_start() {
  Values initial;
  initial.set(VecVar<2>(0), Eigen::Vector2d(-1.2, 1.0));
  return initial;
}

SolverOptions lm_options() {
  SolverOptions o;
  o.linear_solver = LinearSolver::DenseCholesky;
  o.function_tolerance = o.gradient_tolerance = o.parameter_tolerance = 1e-15;
  o.max_iterations = 200;
  return o;
}

SolveSummary lm_solve(const SolverOptions& options) {
  return lm_rosenbrock().analyze().solve(lm_start(), options).summary;
}

}  // namespace

TEST_CASE("radius_growth: Nielsen's factor 1 / max(1/3, 1 - (2 rho - 1)^3), floored above rho = 3/4") {
  using detail::LevenbergMarquardt;
  CHECK(LevenbergMarquardt::radius_growth(0.5, 1.0) == doctest::Approx(1.0));
  CHECK(LevenbergMarquardt::radius_growth(1.0, 1.0) == doctest::Approx(3.0));
  CHECK(LevenbergMarquardt::radius_growth(0.8, 1.0) == doctest::Approx(1.0 / (1.0 - 0.216)));
  CHECK(LevenbergMarquardt::radius_growth(0.3, 1.0) == doctest::Approx(1.0 / 1.064));
  CHECK(LevenbergMarquardt::radius_growth(0.8, 2.0) == 2.0);   // the floor applies above 3/4
  CHECK(LevenbergMarquardt::radius_growth(0.7, 2.0) < 2.0);    // and not below it
  CHECK(LevenbergMarquardt::radius_growth(0.95, 2.0) > 2.0);   // Nielsen's own factor beats it
}

TEST_CASE("every iteration's radius follows from the last by the damping rules") {
  SolverOptions o = lm_options();
  o.initial_trust_region_radius = 1e6;  // large enough that the first steps are rejected
  const SolveSummary s = lm_solve(o);
  REQUIRE(s.usable());
  REQUIRE(s.per_iteration.size() > 3);
  // A solve that ends inside a step (at the function or parameter tolerance) reports that
  // iteration with the radius it had.
  const bool ended_in_step =
      s.termination == Termination::FunctionTolerance || s.termination == Termination::ParameterTolerance;
  const size_t checked = s.per_iteration.size() - (ended_in_step ? 1 : 0);
  int accepted = 0, rejected = 0;
  double decrease_factor = 2.0;
  for (size_t i = 1; i < checked; ++i) {
    const IterationSummary& before = s.per_iteration[i - 1];
    const IterationSummary& it = s.per_iteration[i];
    CAPTURE(i);
    if (it.step_accepted) {
      ++accepted;
      const double growth = detail::LevenbergMarquardt::radius_growth(it.relative_decrease,
                                                                       o.very_successful_radius_growth);
      CHECK(it.trust_region_radius == std::min(o.max_trust_region_radius, before.trust_region_radius * growth));
      CHECK(it.cost < before.cost);
      CHECK(it.cost_change == doctest::Approx(before.cost - it.cost));
      decrease_factor = 2.0;
    } else {
      ++rejected;
      CHECK(it.trust_region_radius == before.trust_region_radius / decrease_factor);
      CHECK(it.cost == before.cost);  // the state stays where it was
      decrease_factor *= 2.0;
    }
  }
  CHECK(accepted > 0);
  CHECK(rejected > 0);
  CHECK(s.successful_steps + s.unsuccessful_steps == s.iterations);
}

namespace {

// How a solve from the standard start ends under options changed from lm_options().
struct LmEnding {
  const char* what;
  void (*change)(SolverOptions&);
  Termination termination;
  int iterations;  // -1: any
};

const LmEnding kLmEndings[] = {
    {"max_iterations", [](SolverOptions& o) { o.max_iterations = 3; }, Termination::MaxIterations, 3},
    {"no iterations at all", [](SolverOptions& o) { o.max_iterations = 0; }, Termination::MaxIterations, 0},
    {"gradient tolerance at the start", [](SolverOptions& o) { o.gradient_tolerance = 1e300; },
     Termination::GradientTolerance, 0},
    // Every step is shorter than 1e3 (|x| + 1e3).
    {"parameter tolerance", [](SolverOptions& o) { o.parameter_tolerance = 1e3; }, Termination::ParameterTolerance, 1},
    // Any decrease is within cost x 1; the first steps increase it.
    {"function tolerance", [](SolverOptions& o) { o.function_tolerance = 1.0; }, Termination::FunctionTolerance, -1},
    {"the callback", [](SolverOptions& o) { o.callback = [](const IterationSummary& it) { return it.iteration < 2; }; },
     Termination::UserStopped, 2},
    // Nearly Gauss-Newton, the first step goes to (1, -3.84), a cost 100x higher; the
    // rejection halves 1e6 below the minimum.
    {"a region below its minimum",
     [](SolverOptions& o) {
       o.initial_trust_region_radius = 1e6;
       o.min_trust_region_radius = 6e5;
     },
     Termination::TrustRegionTooSmall, 1},
    {"Gauss-Newton's first rejected step", [](SolverOptions& o) { o.gauss_newton = true; }, Termination::NoDecrease, 1},
};

}  // namespace

TEST_CASE("the solve ends at each of its limits with the termination that names it") {
  for (const LmEnding& ending : kLmEndings) {
    CAPTURE(ending.what);
    SolverOptions o = lm_options();
    ending.change(o);
    const SolveSummary s = lm_solve(o);
    CAPTURE(s.message);
    CHECK(s.termination == ending.termination);
    if (ending.iterations >= 0) CHECK(s.iterations == ending.iterations);
    CHECK(s.final_cost <= s.initial_cost);
    CHECK(s.per_iteration.size() == static_cast<size_t>(s.iterations) + 1);
  }
  SolverOptions o = lm_options();
  o.function_tolerance = 1.0;
  CHECK(lm_solve(o).successful_steps == 1);  // the function tolerance takes its decrease
  o = lm_options();
  o.initial_trust_region_radius = 1e6;
  o.min_trust_region_radius = 6e5;
  CHECK(lm_solve(o).message.find("last rejection: the step does not decrease the cost enough") != std::string::npos);
}

TEST_CASE("a non-finite start fails before any step, naming what is not finite") {
  auto bad = cost("lm_log_of_negative", [](const auto& v, VecVar<1> x) {
    return std::array<Sym, 1>{log(v[x](0))};
  });
  Problem problem;
  problem.add(bad, VecVar<1>(0));
  Values initial;
  initial.set(VecVar<1>(0), Eigen::Matrix<double, 1, 1>(-1.0));
  const SolveSummary s = problem.analyze().solve(initial, lm_options()).summary;
  CHECK(s.termination == Termination::Failure);
  CHECK(s.message.find("not finite") != std::string::npos);
  CHECK(s.iterations == 0);
}

TEST_CASE("brief_report is one line with the termination, iterations and costs") {
  const SolveSummary s = lm_solve(lm_options());
  const std::string line = s.brief_report();
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.find(std::string(termination_name(s.termination))) != std::string::npos);
  CHECK(line.find("iterations: " + std::to_string(s.iterations)) != std::string::npos);
}

}  // namespace levenberg_marquardt_test
