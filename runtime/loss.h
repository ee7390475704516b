// Robust losses: a cost instance contributes ½ρ(s), s = ‖r‖², instead of ½s, so that
// outliers weigh less. The losses and their ρ are Ceres' (loss_function.h), with the scale
// a: ρ(s) ≈ s for small s, and the residual counts as an outlier beyond about ‖r‖ = a.
//
//   problem.add(between, lsjit::CauchyLoss(0.5), lsjit::SE2Var(i), lsjit::SE2Var(j), z, U);
//
// A loss is chosen per add() and its scale is runtime data: neither enters a kernel or its
// cache key. The solver applies it to the fused kernels' per-instance outputs (cost ½s,
// g = Jᵀr, H = JᵀJ) as Ceres' Corrector does (Triggs et al.): with ρ', ρ'' at s,
//   cost ½ρ(s),   g̃ = ρ' g,   H̃ = ρ' (H − β (Jᵀr)(Jᵀr)ᵀ),
// where β = (2α − α²)/s and α = 1 − sqrt(1 + 2 s ρ''/ρ') when ρ'' > 0 (the second-order
// correction that keeps the Gauss–Newton model consistent with ½ρ), else β = 0 (Ceres
// drops the correction when ρ'' <= 0, which keeps H̃ positive semidefinite). g̃ is the
// exact gradient of ½ρ(‖r‖²).
#pragma once

#include <cstdint>
#include <string_view>

namespace lsjit {

struct Loss {
  enum class Kind : uint8_t { Trivial, Huber, SoftLOne, Cauchy, Arctan, Tukey };
  Kind kind = Kind::Trivial;
  double scale = 1.0;  // a > 0

  // rho[0] = ρ(s), rho[1] = ρ'(s), rho[2] = ρ''(s), for s >= 0.
  void evaluate(double s, double rho[3]) const;
};
std::string_view loss_name(Loss::Kind kind);  // trivial, huber, soft_l_one, cauchy, arctan, tukey

inline Loss TrivialLoss() { return {Loss::Kind::Trivial, 1.0}; }
// The scale a of every loss below must be in [kMinLossScale, kMaxLossScale]: ρ divides by a²
// and multiplies by it, and outside that range a² underflows to 0 or overflows to inf.
// The constructors throw lsjit::Error, naming the range, for any other value.
inline constexpr double kMinLossScale = 1e-150, kMaxLossScale = 1e150;
// ρ = s for s <= a², 2a·sqrt(s) − a² beyond: quadratic, then linear.
Loss HuberLoss(double a);
// ρ = 2a²(sqrt(1 + s/a²) − 1): a smooth Huber.
Loss SoftLOneLoss(double a);
// ρ = a² log(1 + s/a²).
Loss CauchyLoss(double a);
// ρ = a·atan(s/a) (Ceres' ArctanLoss; it saturates at aπ/2).
Loss ArctanLoss(double a);
// ρ = a²/3 (1 − (1 − s/a²)³) for s <= a², a²/3 beyond: outliers have no gradient at all.
Loss TukeyLoss(double a);

namespace detail {
// The per-instance factors of the correction above: ½ρ(s) and (ρ', β) such that
// g̃ = ρ' g and H̃ = ρ' (H − β g gᵀ).
struct Correction {
  double half_rho;
  double rho1;
  double beta;
};
Correction correction(const Loss& loss, double s);
}  // namespace detail

}  // namespace lsjit
