// Problem::add_runtime and runtime/variable_types.h: the type-erased entry the Python
// bindings use. A cost added at run time must be the same problem as one added through
// Problem::add, and bad requests must add nothing.
#include <doctest/doctest.h>

#include <vector>

#include "lsjit/lsjit.h"
#include "lsjit/runtime/variable_types.h"

namespace add_runtime_test {

using namespace lsjit;

// r = x - z for a VecVar<2> x and a Vec2 z, as a C++ cost and as a run-time one.
auto prior = cost("prior2", [](const auto& v, VecVar<2> x, const auto& z) { return (v[x] - z).eval(); });

RuntimeCost runtime_prior() {
  RuntimeCost c;
  c.name = "prior2";
  c.identity = "runtime prior2";
  c.var_types = {builtin_variable_type("Vec2")};
  c.data_stride = 2;
  c.trace = [] { return trace(prior, VecVar<2>(0), Eigen::Vector2d::Zero().eval()); };
  return c;
}

TEST_CASE("add_runtime: the same problem as add, grouped by identity") {
  const std::vector<int64_t> ids{3, 4, 5};
  const std::vector<double> data{1, 2, 3, 4, 5, 6};
  Problem runtime;
  runtime.add_runtime(runtime_prior(), {std::span<const int64_t>(ids.data(), 2)},
                      {{std::span<const double>(data.data(), 4), 2, 1, false}}, 2);
  runtime.add_runtime(runtime_prior(), {std::span<const int64_t>(ids.data() + 2, 1)},
                      {{std::span<const double>(data.data() + 4, 2), 2, 1, false}}, 1);
  CHECK(runtime.num_groups() == 1);
  CHECK(runtime.num_instances() == 3);
  runtime.set_constant("Vec2", 4);

  Problem typed;
  for (int k = 0; k < 3; ++k) typed.add(prior, VecVar<2>(ids[k]), Eigen::Vector2d(data[2 * k], data[2 * k + 1]));
  typed.set_constant(VecVar<2>(4));

  Values start;
  for (int64_t id : ids) start.set(VecVar<2>(id), Eigen::Vector2d(0.5, -1));
  const SolveResult a = runtime.analyze().solve(start), b = typed.analyze().solve(start);
  CHECK(a.summary.final_cost == b.summary.final_cost);
  CHECK(a.summary.constant_variables == 1);
  for (int64_t id : ids) CHECK(a.values.get(VecVar<2>(id)) == b.values.get(VecVar<2>(id)));
}

TEST_CASE("add_runtime: bad requests throw and add nothing") {
  Problem p;
  const std::vector<int64_t> ids{1, 2};
  const std::vector<double> data{1, 2, 3, 4};
  const RuntimeDataSlot two{std::span<const double>(data), 2, 1, false};
  CHECK_THROWS_WITH_AS(p.add_runtime(runtime_prior(), {std::span<const int64_t>(ids)}, {two}, 0),
                       doctest::Contains("no instances"), Error);
  const std::vector<int64_t> three{1, 2, 3};
  CHECK_THROWS_WITH_AS(p.add_runtime(runtime_prior(), {std::span<const int64_t>(three)}, {two}, 2),
                       doctest::Contains("has 3 IDs, expected 2"), Error);
  CHECK_THROWS_WITH_AS(p.add_runtime(runtime_prior(), {std::span<const int64_t>(ids)},
                                     {{std::span<const double>(data.data(), 3), 2, 1, false}}, 2),
                       doctest::Contains("has 3 values, expected 2 instances of 2"), Error);
  CHECK_THROWS_WITH_AS(p.add_runtime(runtime_prior(), {std::span<const int64_t>(ids.data(), 1)},
                                     {{std::span<const double>(data.data(), 3), 3, 1, false}}, 1),
                       doctest::Contains("hold 3 values per instance, the cost 2"), Error);
  CHECK_THROWS_WITH_AS(p.add_runtime(runtime_prior(), {}, {two}, 2),
                       doctest::Contains("expected 1 variable arguments"), Error);
  CHECK(p.num_instances() == 0);
  CHECK(p.num_groups() == 0);
}

TEST_CASE("add_runtime: shared IDs and data, and row-major matrices transposed") {
  auto weighted = cost("weighted2", [](const auto& v, VecVar<2> x, const auto& W) { return (W * v[x]).eval(); });
  RuntimeCost c;
  c.name = "weighted2";
  c.identity = "runtime weighted2";
  c.var_types = {builtin_variable_type("Vec2")};
  c.data_stride = 4;
  c.trace = [weighted] { return trace(weighted, VecVar<2>(0), Eigen::Matrix2d::Zero().eval()); };
  const std::vector<int64_t> id{7};
  const std::vector<double> row_major{1, 2, 3, 4};  // W = [[1, 2], [3, 4]], shared by both instances
  Problem p;
  p.add_runtime(c, {std::span<const int64_t>(id)}, {{std::span<const double>(row_major), 2, 2, true}}, 2);
  Values x;
  x.set(VecVar<2>(7), Eigen::Vector2d(1, 1));
  const AnalyzedProblem a = p.analyze();
  const auto e = a.evaluate_instances(x, a.all_instances(), false);
  REQUIRE(e.size() == 2);
  for (const auto& i : e) CHECK(i.residuals == Eigen::Vector2d(3, 7));
}

TEST_CASE("variable types by name: built-ins and run-time kinds") {
  CHECK(builtin_variable_type("SE3") == variable_type<SE3Var>());
  CHECK(builtin_variable_type("Vec32") == variable_type<VecVar<32>>());
  CHECK(builtin_variable_type("Vec33") == nullptr);
  CHECK(builtin_variable_type("landmark") == nullptr);
  const VariableType* landmark = kind_variable_type("landmark_rt", *builtin_variable_type("Vec3"));
  CHECK(landmark->name == "landmark_rt");
  CHECK(landmark->layout == "Vec3");
  CHECK(landmark->ambient == 3);
  CHECK(kind_variable_type("landmark_rt", *builtin_variable_type("Vec3")) == landmark);
  CHECK_THROWS_WITH_AS(kind_variable_type("landmark_rt", *builtin_variable_type("SE3")),
                       doctest::Contains("was made with base Vec3"), Error);
  CHECK_THROWS_WITH_AS(kind_variable_type("SE3", *builtin_variable_type("Vec3")), doctest::Contains("built-in"), Error);
  CHECK_THROWS_WITH_AS(kind_variable_type("2bad", *builtin_variable_type("Vec3")),
                       doctest::Contains("not an identifier"), Error);
  CHECK_THROWS_WITH_AS(kind_variable_type("nested", *landmark), doctest::Contains("built-in base"), Error);
}

}  // namespace add_runtime_test
