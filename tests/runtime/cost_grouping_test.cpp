// Problem::add groups the instances of one cost object before tracing, whatever its
// closure captures. Before, a cost capturing a std::vector made one group per add() (2,000
// groups for 2,000 adds), traced one by one and merged only after tracing.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../support/memory_cache.h"
#include "lsjit/lsjit.h"

namespace cost_grouping_test {
using namespace lsjit;

namespace {

bool has_warning(const SolveSummary& s, const std::string& text) {
  for (const std::string& w : s.warnings)
    if (w.find(text) != std::string::npos) return true;
  return false;
}

Values zeros(int n) {
  Values v;
  for (int i = 0; i < n; ++i) v.set(ScalarVar(i), 0.0);
  return v;
}

}  // namespace

TEST_CASE("cost grouping: a cost object that captures a std::vector is one group") {
  const std::vector<double> gains = {2.0, 0.5};
  auto weighted = cost("grouping_weighted",
                       [gains](const auto& v, ScalarVar x, const auto& t) { return v[x] * gains[0] - t; });
  static_assert(!std::is_trivially_copyable_v<decltype(weighted.function)>);
  constexpr int kAdds = 500;
  Problem p;
  for (int i = 0; i < kAdds; ++i) p.add(weighted, ScalarVar(i), 1.0 * i);
  CHECK(p.num_groups() == 1);
  // A copy of the object, and the object renamed, as add() sees them.
  const auto copy = weighted;
  p.add(copy, ScalarVar(kAdds), 3.0);
  CHECK(p.num_groups() == 1);
  p.add(weighted.named({"x"}), ScalarVar(kAdds + 1), 3.0);
  CHECK(p.num_groups() == 2);

  const SolveResult r = p.analyze(lsjit::testing::analyze_with()).solve(zeros(kAdds + 2));
  REQUIRE(r.summary.usable());
  CHECK(r.summary.cost_groups == 2);  // the renamed one has its own IR names (and the same kernels)
  CHECK(r.values.get(ScalarVar(7)) == doctest::Approx(3.5));
  CHECK(r.summary.warnings.empty());
}

TEST_CASE("cost grouping: a new cost object per add is traced per add, and said once with the fix") {
  const std::vector<double> gains = {2.0, 0.5};
  constexpr int kAdds = 40;
  Problem p;
  for (int i = 0; i < kAdds; ++i)
    p.add(cost("grouping_per_add", [gains](const auto& v, ScalarVar x, const auto& t) { return v[x] * gains[0] - t; }),
          ScalarVar(i), 1.0 * i);
  CHECK(p.num_groups() == kAdds);
  const SolveResult r = p.analyze(lsjit::testing::analyze_with()).solve(zeros(kAdds));
  REQUIRE(r.summary.usable());
  CHECK(r.summary.cost_groups == 1);
  CHECK(r.values.get(ScalarVar(9)) == doctest::Approx(4.5));
  CHECK(has_warning(r.summary, "cost 'grouping_per_add' was added as 40 separate cost objects"));
  CHECK(has_warning(r.summary, "pass the captured values as data"));
  CHECK(r.summary.warnings.size() == 1);
  CHECK(r.summary.report().find("separate cost objects") != std::string::npos);
}

}  // namespace cost_grouping_test
