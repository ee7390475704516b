// Hand-written residuals and analytic Jacobians of the two costs the kernel benchmark
// measures, in plain scalar C++: what an engineer writes when automatic differentiation is
// too slow. Compiled -O3 -march=native (tools/bench/CMakeLists), one instance per call,
// no lsjit and no Ceres inside. The kernel benchmark also uses them as an independent
// check of lsjit's Jacobians.
//
// Layouts are lsjit's (docs/variables.md, kernel.h): Jacobians row-major, in the tangent
// space of each variable.
#pragma once

namespace lsjit::bench {

// BAL / Snavely reprojection (docs/architecture.md, "Conventions"): camera = (angle-axis
// w[3], t[3], f, k1, k2), point X[3], observation obs[2]. P = R(w)·X + t, p = −P.xy / P.z,
// residual = f·(1 + k1‖p‖² + k2‖p‖⁴)·p − obs. Like Ceres' AngleAxisRotatePoint, R(w)·X is
// first order (X + w × X) when ‖w‖² <= machine epsilon.
// Writes residual[2], J_camera[2x9], J_point[2x3].
void snavely_analytic(const double* camera, const double* point, const double* obs,
                      double* residual, double* J_camera, double* J_point);

// g2o SE3:QUAT between cost (docs/architecture.md, "Conventions"): poses a, b and
// measurement z as (tx, ty, tz, qx, qy, qz, qw) with unit quaternions, U the 6x6 upper
// square-root information matrix, column-major (Eigen's storage, as lsjit's data layout).
// e = [R_aᵀ(p_b − p_a) − p_z ; 2·vec(q_z ⊗ (q_a⁻¹ q_b)⁻¹)], residual = U·e.
// Jacobians with respect to right perturbations x·exp(ρ, ω) of a and b (tangent order
// ρ then ω): J_a[6x6], J_b[6x6], row-major.
void se3_between_analytic(const double* a, const double* b, const double* z, const double* U,
                          double* residual, double* J_a, double* J_b);

}  // namespace lsjit::bench
