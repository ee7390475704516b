// Data arguments are flattened column-major whatever the C++ storage order (data_traits.h):
// a row-major and a column-major matrix with the same entries are the same data, trace to
// the same graph and share one kernel (issue 19, item 8: before, they made two groups, four
// compiles and an explanation that blamed a captured value of a lambda capturing nothing).
#include <doctest/doctest.h>

#include <vector>

#include "../support/memory_cache.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/ir/structural_hash.h"
#include "lsjit/lsjit.h"

using namespace lsjit;

namespace {

using RowMajor3d = Eigen::Matrix<double, 3, 3, Eigen::RowMajor>;

auto weighted_offset() {
  return cost("layout_weighted_offset", [](const auto& v, VecVar<3> x, const auto& z, const auto& U) {
    return Eigen::Matrix<Sym, 3, 1>(U * (v[x] - z));
  });
}

Eigen::Matrix3d upper() {  // not symmetric: a transposed read would show
  Eigen::Matrix3d U;
  U << 1, 2, 3, 0, 4, 5, 0, 0, 6;
  return U;
}

}  // namespace

TEST_CASE("data layout: row-major and column-major matrices flatten to the same row") {
  const Eigen::Matrix3d col = upper();
  const RowMajor3d row = col;
  double a[9], b[9];
  DataTraits<Eigen::Matrix3d>::flatten(col, a);
  DataTraits<RowMajor3d>::flatten(row, b);
  for (int k = 0; k < 9; ++k) CHECK(a[k] == b[k]);
  CHECK(a[3] == 2);  // column-major: U(0,1) follows the first column
  CHECK(DataTraits<Eigen::Matrix3d>::type_name() == DataTraits<RowMajor3d>::type_name());
}

TEST_CASE("data layout: both orders trace to one graph, share one kernel group and give one cost") {
  const auto c = weighted_offset();
  const Eigen::Vector3d z(0.5, -1, 2);
  CHECK(ir::structural_hash(trace(c, VecVar<3>(0), z, upper())) ==
        ir::structural_hash(trace(c, VecVar<3>(0), z, RowMajor3d(upper()))));

  compiler::KernelCache cache(lsjit::testing::memory_only());  // its own, to count compiles
  const AnalyzeOptions a = lsjit::testing::analyze_with(cache);
  Problem p;
  p.add(c, VecVar<3>(0), z, upper());
  p.add(c, VecVar<3>(1), z, RowMajor3d(upper()));
  const AnalyzedProblem analyzed = p.analyze(a);
  CHECK(analyzed.groups().size() == 1);
  CHECK(cache.stats().compiles == 2);  // Residual and NormalEquations, once
  CHECK(cache.stats().recompiles == 0);

  // Same entries, same residuals: the row-major instance reads U(0,1) = 2, not U(1,0) = 0.
  Values values;
  values.set(VecVar<3>(0), Eigen::Vector3d(1, 2, 3));
  values.set(VecVar<3>(1), Eigen::Vector3d(1, 2, 3));
  const std::vector<InstanceEvaluation> e = analyzed.evaluate_instances(values, {{0, 0}, {0, 1}});
  REQUIRE(e.size() == 2);
  const Eigen::Vector3d expected = upper() * (Eigen::Vector3d(1, 2, 3) - z);
  for (const InstanceEvaluation& instance : e)
    for (int k = 0; k < 3; ++k) CHECK(instance.residuals[k] == doctest::Approx(expected[k]).epsilon(1e-15));
}
