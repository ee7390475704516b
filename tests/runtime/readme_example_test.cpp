// The README's example, as written there: a user's own cost, traced, differentiated and
// printed through <lsjit/lsjit.h>.
#include <doctest/doctest.h>

#include <lsjit/lsjit.h>

#include <random>

#include "../support/jacobian_check.h"
#include "../support/random_inputs.h"

TEST_CASE("the README example traces, differentiates and prints") {
  auto between = lsjit::cost("se2_between",
      [](const auto& v, lsjit::SE2Var a, lsjit::SE2Var b, const auto& z, const auto& U) {
        return (U * (z.inverse() * v[a].inverse() * v[b]).log()).eval();
      });
  lsjit::ir::Trace traced = lsjit::trace(between, lsjit::SE2Var(0), lsjit::SE2Var(1),
                                         lsjit::SE2d(), Eigen::Matrix3d());
  lsjit::ir::Trace jacobian = lsjit::ir::differentiate(traced);  // residual + J, δ = 0
  const std::string text = lsjit::ir::print(jacobian);
  CHECK(text.find("stage=jacobian residuals=3") != std::string::npos);
  CHECK(text.find("J[x1](2,2) = %") != std::string::npos);

  std::mt19937_64 rng(5);
  for (int k = 0; k < 5; ++k)
    lsjit::testing::check_jacobian(traced, lsjit::testing::random_inputs(traced.signature, rng));
}
