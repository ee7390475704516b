// The augmented-Lagrangian residual of a constraint: what a constraint cost contributes to
// the least-squares problem the inner Levenberg–Marquardt solves.
//
// A constraint cost computes c(x) (residual_dim = m components). With a multiplier λ (m
// values) and a penalty ρ > 0 per instance, the augmented Lagrangian adds
//   equality       c = 0:   ρ/2 ‖c + λ/ρ‖²                 − ‖λ‖²/(2ρ)
//   inequality     c <= 0:  ρ/2 ‖max(0, c + λ/ρ)‖²         − ‖λ‖²/(2ρ)
//                  c >= 0:  the same with −c
// to the objective (Hestenes–Powell–Rockafellar; the form ALGENCAN uses). The constant
// −‖λ‖²/(2ρ) does not move the minimizer, so the pass returns the residual
//   r = sqrt(ρ) (c + λ/ρ)     or     r = select(c + λ/ρ > 0, sqrt(ρ) (c + λ/ρ), 0)
// whose ½‖r‖² is the rest. λ and ρ become two data slots appended to the signature,
//   "al_multiplier" (Vec m) and "al_penalty" (f64),
// so the outer loop updates them between inner solves as runtime data: no recompile.
// The kind stays that of the constraint (it is part of the cache key).
//
// Input: a Traced-stage trace of kind Equality, InequalityLe or InequalityGe. Output: a
// Traced-stage trace, verified.
#pragma once

#include "lsjit/ir/graph.h"

namespace lsjit::ir {

Trace augmented_lagrangian_residual(const Trace& constraint);

}  // namespace lsjit::ir
