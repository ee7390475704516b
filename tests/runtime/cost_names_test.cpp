// Cost::named: a user's cost names its arguments as the built-ins do (issue 19, item 16).
// The names reach the IR text, AnalyzedProblem::groups() and the gradient checker's report
// (gradient_checker_test.cpp); a bad naming is an error that names the cost.
#include <doctest/doctest.h>

#include <string>

#include "../support/memory_cache.h"
#include "lsjit/ir/printer.h"
#include "lsjit/lsjit.h"

using namespace lsjit;

namespace {

auto offset_cost() {
  return cost("names_offset", [](const auto& v, VecVar<2> a, ScalarVar b, const auto& target, const auto& w) {
    return Eigen::Matrix<Sym, 2, 1>(w * (v[a](0) + v[b] - target(0)), w * (v[a](1) - target(1)));
  });
}

}  // namespace

TEST_CASE("cost names: the names replace x0 x1 d0 d1 in the IR text and in groups()") {
  const auto named = offset_cost().named({"point", "shift"}, {"target", "weight"});
  const std::string text =
      ir::print(trace(named, VecVar<2>(0), ScalarVar(1), Eigen::Vector2d(1, 2), 3.0));
  CAPTURE(text);
  for (const char* name : {"point", "shift", "target", "weight"})
    CHECK_MESSAGE(text.find(name) != std::string::npos, name);
  CHECK(text.find("x0") == std::string::npos);
  CHECK(text.find("d1") == std::string::npos);

  Problem p;
  p.add(named, VecVar<2>(0), ScalarVar(1), Eigen::Vector2d(1, 2), 3.0);
  const AnalyzedProblem a = p.analyze(testing::analyze_with());
  REQUIRE(a.groups().size() == 1);
  CHECK(a.groups()[0].var_names == std::vector<std::string>{"point", "shift"});
  CHECK(a.groups()[0].data_names == std::vector<std::string>{"target", "weight"});
}

TEST_CASE("cost names: slots past the names keep the defaults") {
  const std::string text = ir::print(
      trace(offset_cost().named({"point"}), VecVar<2>(0), ScalarVar(1), Eigen::Vector2d(1, 2), 3.0));
  CAPTURE(text);
  CHECK(text.find("point") != std::string::npos);
  CHECK(text.find("x1") != std::string::npos);
  CHECK(text.find("d0") != std::string::npos);
}

TEST_CASE("cost names: too many names, a name that is no identifier, or a name used twice is an error") {
  auto trace_with = [](const auto& c) {
    return trace(c, VecVar<2>(0), ScalarVar(1), Eigen::Vector2d(1, 2), 3.0);
  };
  CHECK_THROWS_WITH_AS(trace_with(offset_cost().named({"a", "b", "c"})),
                       "lsjit: cost 'names_offset' names 3 variable arguments (a, b, c) but takes 2: expected at "
                       "most one name per variable argument, in order",
                       Error);
  CHECK_THROWS_WITH_AS(trace_with(offset_cost().named({"a", "b"}, {"t", "w", "extra"})),
                       doctest::Contains("names 3 data arguments (t, w, extra) but takes 2"), Error);
  CHECK_THROWS_WITH_AS(trace_with(offset_cost().named({"my point", "b"})),
                       doctest::Contains("cost 'names_offset'"), Error);
  CHECK_THROWS_WITH_AS(trace_with(offset_cost().named({"my point", "b"})), doctest::Contains("identifier"), Error);
  CHECK_THROWS_WITH_AS(trace_with(offset_cost().named({"p", "p"})), doctest::Contains("unique variable names"),
                       Error);
  // A problem refuses the cost when it is analyzed, and the message names it as well.
  Problem p;
  p.add(offset_cost().named({"a", "b", "c"}), VecVar<2>(0), ScalarVar(1), Eigen::Vector2d(1, 2), 3.0);
  CHECK_THROWS_WITH_AS(p.analyze(testing::analyze_with()), doctest::Contains("cost 'names_offset' names 3"), Error);
}
