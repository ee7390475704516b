// The costs lsjit ships: priors on each Lie group, g2o-convention between costs on SE2 and
// SE3, the BAL (Snavely) reprojection, and a 1-D curve fit. They are ordinary lsjit::cost
// objects, usable with Problem like any user cost; the registry exposes them by name for
// `lsjit trace`, the docs and the tests.
//
// Conventions (docs/architecture.md, "Conventions"):
//  se2_between  vars a, b: SE2; data z: SE2 (the measurement), U: Mat3x3 with UᵀU = Ω.
//               e = [R(θa)ᵀ(t_b − t_a) − t_z ; wrap(θ_b − θ_a − θ_z)], r = U·e.
//  se3_between  vars a, b: SE3; data z: SE3, U: Mat6x6. q_ab = q̄_a q_b,
//               p_ab = R(q_a)ᵀ(p_b − p_a), e = [p_ab − p_z ; 2·vec(q_z q̄_ab)], r = U·e.
//  G_prior      var x: G; data prior: G, U: k×k. r = U·log(prior⁻¹·x) (GTSAM's PriorFactor).
//  snavely_reprojection  vars camera: Vec9 (angle-axis, t, f, k1, k2), point: Vec3; data
//               obs: Vec2. P = R·X + t, p = −P.xy/P.z, r = f·(1 + k1‖p‖² + k2‖p‖⁴)·p − obs.
//  curve_fit    vars m, c: Scalar; data x, y: f64. r = y − exp(m·x + c) (Ceres' example).
#pragma once

#include <functional>
#include <span>
#include <string>

#include "lsjit/ir/graph.h"

namespace lsjit {

struct BuiltinCost {
  std::string name;
  std::string description;
  std::function<ir::Trace()> trace;  // traces it (stage Traced)
};

std::span<const BuiltinCost> builtin_costs();
// nullptr when there is no built-in cost of that name.
const BuiltinCost* find_builtin_cost(std::string_view name);

}  // namespace lsjit
