// VecVar<N> up to kMaxVecVarSize (32): a navigation filter's 15-vector (position, velocity,
// attitude error, two biases) and larger states trace, compile, differentiate correctly and
// solve. Before, VecVar stopped at 12 with "sizes above 12 are not supported yet".
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "../support/memory_cache.h"
#include "lsjit/lsjit.h"

namespace state_sizes_test {
using namespace lsjit;

namespace {

// x_{k+1} = f(x_k) with f_i(x) = x_i + 0.1 sin(x_{i+1 mod N}) · scale_i: every output mixes
// two components, so the Jacobian is not diagonal and a wrong column shows.
template <int N, class S>
Eigen::Matrix<S, N, 1> process(const Eigen::Matrix<S, N, 1>& x, const Eigen::Matrix<S, N, 1>& scale) {
  Eigen::Matrix<S, N, 1> next;
  for (int i = 0; i < N; ++i) next(i) = x(i) + 0.1 * scale(i) * sin(x((i + 1) % N));
  return next;
}

template <int N>
void solves_a_chain_of_states() {
  CAPTURE(N);
  using State = VecVar<N>;
  using Vec = Eigen::Matrix<double, N, 1>;
  auto prior = cost("state_prior_" + std::to_string(N),
                    [](const auto& v, State x, const auto& z) { return (v[x] - z).eval(); });
  auto step = cost("state_step_" + std::to_string(N), [](const auto& v, State a, State b, const auto& scale) {
    using std::sin;
    return (v[b] - process<N>(v[a], scale)).eval();
  });
  Vec scale, x;
  for (int i = 0; i < N; ++i) {
    scale(i) = 1.0 + 0.05 * i;
    x(i) = 0.3 * std::cos(1.0 + i);
  }
  constexpr int kStates = 6;
  Problem p;
  Values initial, truth;
  p.add(prior, State(0), x);
  truth.set(State(0), x);
  for (int k = 0; k + 1 < kStates; ++k) {
    p.add(step, State(k), State(k + 1), scale);
    x = process<N, double>(x, scale);
    truth.set(State(k + 1), x);
  }
  for (int k = 0; k < kStates; ++k) initial.set(State(k), Vec::Zero());

  const AnalyzedProblem analyzed = p.analyze(lsjit::testing::analyze_with());
  // The kernels' Jacobians against central differences of their residuals, at the start and
  // at the truth.
  for (const Values* at : {&initial, &truth}) {
    const GradientCheckResult check = analyzed.check_gradients(*at);
    CAPTURE(check.report());
    CHECK(check.passed);
    CHECK(check.entries == static_cast<size_t>(N * N + (kStates - 1) * 2 * N * N));
  }
  SolverOptions to_the_end;  // tolerances that let the iterations reach rounding
  to_the_end.function_tolerance = 1e-15;
  to_the_end.parameter_tolerance = 1e-14;
  to_the_end.gradient_tolerance = 1e-18;
  const SolveResult r = analyzed.solve(initial, to_the_end);
  REQUIRE(r.summary.usable());
  CHECK(r.summary.final_cost < 1e-24);
  for (int k = 0; k < kStates; ++k) CHECK((r.values.get(State(k)) - truth.get(State(k))).norm() < 1e-9);
}

}  // namespace

TEST_CASE("state sizes: VecVar<15>, <24> and <32> trace, differentiate and solve") {
  solves_a_chain_of_states<15>();
  solves_a_chain_of_states<24>();
  solves_a_chain_of_states<32>();
}

}  // namespace state_sizes_test
