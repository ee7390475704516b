// The series and thresholds shared by the Lie groups (runtime/lie/): how their exp, log and
// Jacobians stay accurate and branch-free near special angles.
#pragma once

#include <cstddef>

namespace lsjit {
namespace lie_detail {

// Branch-free numerics
// --------------------
// Every group operation is straight-line code over S: where a formula is singular or
// inaccurate near a special angle, both a series and the closed form are computed and
// lsjit::select picks one (a comparison gives a bool for double, a SymBool for Sym). The
// derivatives of both branches are formed when a trace is differentiated, so the branch that
// is not selected is fed guarded inputs (θ_safe = select(small, 1, θ), ...) and stays finite
// at the evaluation point: no 0 * inf = NaN can leak through the select. Series branches use
// only θ² (never θ = sqrt(θ²), whose derivative is infinite at 0).
//
// Two thresholds on θ²:
//
//  kSmallAngle2 = 1e-6 (θ < 1e-3), for the quaternion exp coefficients cos(θ/2) and
//    sin(θ/2)/θ and the quaternion log's atan(r)/r. The closed forms are accurate in value and
//    derivative for every θ > 0 (no cancellation: the derivative error of sin(θ/2)/θ is
//    O(ε/θ) but it multiplies ω, of size θ, so the error in the Jacobian stays O(ε)); the
//    series is only needed at θ = 0 itself, and three or four terms leave a truncation error
//    below 1e-19 at the threshold, in value and in derivative.
//
//  kSeriesAngle2 = 0.25 (θ < 0.5), for the coefficients whose closed forms cancel: sin θ/θ
//    and (θ/2)cot(θ/2) where they multiply O(1) quantities (SE2), (θ - sin θ)/θ³ and
//    (1 - (θ/2)cot(θ/2))/θ² (SE3's V and V⁻¹). Their values are fine for small θ once
//    multiplied by their θ² factors, but the derivatives of the closed forms lose about
//    ε/θ (absolute, in Jacobian units): 1e-10 at θ = 1e-6, 1e-12 at θ = 1e-4, and at most
//    ~2e-15 above θ = 0.5 (measured against 50-digit references). Below the threshold an
//    8- or 9-term series in θ² is used; its truncation error at θ² = 0.25 is below 2e-18
//    relative in value and 1e-18 in derivative. Both branches are therefore accurate to a
//    few ulps across the switch, so the switch is invisible to a solver.
//    (tests/runtime/lie_test.cpp checks Jacobians computed in double against long double
//    through the same branches to 1e-14; with a tiny threshold they differ by ~1e-12.)
inline constexpr double kSmallAngle2 = 1e-6;
inline constexpr double kSeriesAngle2 = 0.25;

// Taylor coefficients in t = θ²: f(θ) = c[0] + c[1] t + c[2] t² + ...
// clang-format off
inline constexpr double kCosHalf[] = {1.0, -1.0 / 8.0, 1.0 / 384.0};
inline constexpr double kSinHalfOverTheta[] = {1.0 / 2.0, -1.0 / 48.0, 1.0 / 3840.0};
// atan(r)/r in r².
inline constexpr double kAtanOverX[] = {1.0, -1.0 / 3.0, 1.0 / 5.0, -1.0 / 7.0};
inline constexpr double kSinOverTheta[] = {
    1.0,              -1.0 / 6.0,          1.0 / 120.0,           -1.0 / 5040.0,
    1.0 / 362880.0,   -1.0 / 39916800.0,   1.0 / 6227020800.0,    -1.0 / 1307674368000.0};
inline constexpr double kOneMinusCosOverTheta2[] = {
    1.0 / 2.0,        -1.0 / 24.0,         1.0 / 720.0,           -1.0 / 40320.0,
    1.0 / 3628800.0,  -1.0 / 479001600.0,  1.0 / 87178291200.0,   -1.0 / 20922789888000.0};
inline constexpr double kThetaMinusSinOverTheta3[] = {
    1.0 / 6.0,        -1.0 / 120.0,        1.0 / 5040.0,          -1.0 / 362880.0,
    1.0 / 39916800.0, -1.0 / 6227020800.0, 1.0 / 1307674368000.0, -1.0 / 355687428096000.0};
// (θ/2) cot(θ/2) = 1 - θ² D(θ²), with D the K² coefficient of SO(3)'s V⁻¹ (below).
inline constexpr double kHalfThetaCotHalfTheta[] = {
    1.0,                 -1.0 / 12.0,              -1.0 / 720.0,      -1.0 / 30240.0,
    -1.0 / 1209600.0,    -1.0 / 47900160.0,        -691.0 / 1307674368000.0,
    -1.0 / 74724249600.0, -3617.0 / 10670622842880000.0};
inline constexpr double kLeftJacobianInverseK2[] = {
    1.0 / 12.0,          1.0 / 720.0,              1.0 / 30240.0,     1.0 / 1209600.0,
    1.0 / 47900160.0,    691.0 / 1307674368000.0,  1.0 / 74724249600.0,
    3617.0 / 10670622842880000.0};
// clang-format on

// c[0] + c[1] t + ... by Horner's rule.
template <class S, std::size_t N>
S series(const S& t, const double (&c)[N]) {
  S r = S(c[N - 1]);
  for (std::size_t i = N - 1; i-- > 0;) r = r * t + S(c[i]);
  return r;
}

}  // namespace lie_detail

}  // namespace lsjit
