// Lie groups for variables and costs: SO2, SE2, SO3, SE3, each templated on the scalar so
// that a cost written over them runs on doubles and traces with lsjit::Sym.
//
//   group  params (ambient)                tangent
//   SO2    (cos θ, sin θ)            [2]    (θ)                           [1]
//   SE2    (x, y, cos θ, sin θ)      [4]    (vx, vy, ω)                   [3]
//   SO3    (qx, qy, qz, qw)          [4]    (ωx, ωy, ωz)                  [3]
//   SE3    (tx, ty, tz, qx, qy, qz, qw) [7] (ρx, ρy, ρz, ωx, ωy, ωz)      [6]
//
// Common interface: identity(), exp(ξ), log(), inverse(), g * h, act(p) / g * p, matrix(),
// params(), from_params(p), retract(δ) = g * exp(δ), local(h) = log(g⁻¹ h), cast<T>().
// The numerics (branch-free series switches chosen with lsjit::select) are described in
// series.h; each header documents its own formulas.
#pragma once

#include "lsjit/ir/sym_eigen.h"
// (sym_eigen.h first: it must precede any instantiation of Eigen code for Sym.)
#include "lsjit/runtime/lie/se2.h"
#include "lsjit/runtime/lie/se3.h"
#include "lsjit/runtime/lie/so2.h"
#include "lsjit/runtime/lie/so3.h"
