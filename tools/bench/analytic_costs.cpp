// The derivations, so that a reader can check the code against them.
//
// Snavely. With R = Exp(w), Exp(w + δ) ≈ Exp(w)·Exp(J_r(w)·δ), so
//   ∂(R X)/∂w = −R [X]× J_r(w),   J_r(w) = I − (1 − cos θ)/θ² [w]× + (θ − sin θ)/θ³ [w]×²,
// ∂P/∂t = I, ∂P/∂X = R; ∂p/∂P = [[−1/P_z, 0, P_x/P_z²], [0, −1/P_z, P_y/P_z²]];
// with d = 1 + k1 r² + k2 r⁴: ∂pred/∂p = f (d I + 2 (k1 + 2 k2 r²) p pᵀ),
// ∂pred/∂f = d p, ∂pred/∂k1 = f r² p, ∂pred/∂k2 = f r⁴ p.
//
// SE3 between. Perturbing a by (ρ, ω) moves p_a to p_a + R_a ρ and q_a to q_a ⊗ (ω/2, 1):
//   ∂e_p/∂ρ_a = −I,  ∂e_p/∂ω_a = [p_ab]×,  ∂e_p/∂ρ_b = R_ab,  ∂e_p/∂ω_b = 0,
// and with m = q_z ⊗ q_ab⁻¹, M = m_w I + [m_v]×:
//   ∂e_q/∂ω_a = M,  ∂e_q/∂ω_b = −M R_ab,  ∂e_q/∂ρ = 0.
#include "analytic_costs.h"

#include <cmath>
#include <limits>

namespace lsjit::bench {
namespace {

// out = [v]× (row-major 3x3).
inline void hat(const double* v, double* out) {
  out[0] = 0;     out[1] = -v[2]; out[2] = v[1];
  out[3] = v[2];  out[4] = 0;     out[5] = -v[0];
  out[6] = -v[1]; out[7] = v[0];  out[8] = 0;
}

// C = A·B, 3x3 row-major.
inline void mul33(const double* A, const double* B, double* C) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

// Rotation matrix of a unit quaternion (x, y, z, w), row-major.
inline void quat_matrix(const double* q, double* R) {
  const double x = q[0], y = q[1], z = q[2], w = q[3];
  R[0] = 1 - 2 * (y * y + z * z); R[1] = 2 * (x * y - w * z);     R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z);     R[4] = 1 - 2 * (x * x + z * z); R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y);     R[7] = 2 * (y * z + w * x);     R[8] = 1 - 2 * (x * x + y * y);
}

// out = a ⊗ b, quaternions (x, y, z, w).
inline void quat_mul(const double* a, const double* b, double* out) {
  out[0] = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
  out[1] = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
  out[2] = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
  out[3] = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
}

}  // namespace

void snavely_analytic(const double* camera, const double* point, const double* obs,
                      double* residual, double* J_camera, double* J_point) {
  const double* w = camera;
  const double theta2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
  double R[9], dRX_dw[9];  // R and ∂(R X)/∂w
  double W[9], Xh[9];
  hat(w, W);
  hat(point, Xh);
  if (theta2 > std::numeric_limits<double>::epsilon()) {
    const double theta = std::sqrt(theta2);
    const double c = std::cos(theta), s = std::sin(theta);
    const double a[3] = {w[0] / theta, w[1] / theta, w[2] / theta};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        R[3 * i + j] = (i == j ? c : 0.0) + (1 - c) * a[i] * a[j];
    R[1] -= s * a[2]; R[2] += s * a[1];
    R[3] += s * a[2]; R[5] -= s * a[0];
    R[6] -= s * a[1]; R[7] += s * a[0];
    double W2[9], Jr[9];
    mul33(W, W, W2);
    const double b = (1 - c) / theta2, d = (theta - s) / (theta2 * theta);
    for (int k = 0; k < 9; ++k) Jr[k] = (k % 4 == 0 ? 1.0 : 0.0) - b * W[k] + d * W2[k];
    double RXh[9];
    mul33(R, Xh, RXh);
    mul33(RXh, Jr, dRX_dw);
    for (double& v : dRX_dw) v = -v;
  } else {
    for (int k = 0; k < 9; ++k) R[k] = (k % 4 == 0 ? 1.0 : 0.0) + W[k];
    for (int k = 0; k < 9; ++k) dRX_dw[k] = -Xh[k];
  }
  double P[3];
  for (int i = 0; i < 3; ++i)
    P[i] = R[3 * i] * point[0] + R[3 * i + 1] * point[1] + R[3 * i + 2] * point[2] + camera[3 + i];
  const double inv_z = 1.0 / P[2];
  const double p[2] = {-P[0] * inv_z, -P[1] * inv_z};
  const double f = camera[6], k1 = camera[7], k2 = camera[8];
  const double r2 = p[0] * p[0] + p[1] * p[1];
  const double dist = 1 + r2 * (k1 + k2 * r2);
  residual[0] = f * dist * p[0] - obs[0];
  residual[1] = f * dist * p[1] - obs[1];

  // ∂pred/∂P = ∂pred/∂p · ∂p/∂P (2x3).
  const double g = 2 * (k1 + 2 * k2 * r2);
  const double A[4] = {f * (dist + g * p[0] * p[0]), f * g * p[0] * p[1],
                       f * g * p[0] * p[1], f * (dist + g * p[1] * p[1])};
  // ∂p/∂P: row 0 = (−1/P_z, 0, P_x/P_z²) = (−1/P_z, 0, −p_x/P_z); row 1 likewise.
  const double D[6] = {-inv_z, 0, -p[0] * inv_z, 0, -inv_z, -p[1] * inv_z};
  double dpred_dP[6];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) dpred_dP[3 * i + j] = A[2 * i] * D[j] + A[2 * i + 1] * D[3 + j];
  for (int i = 0; i < 2; ++i) {
    double* Jc = J_camera + 9 * i;
    const double* row = dpred_dP + 3 * i;
    for (int j = 0; j < 3; ++j) {
      Jc[j] = row[0] * dRX_dw[j] + row[1] * dRX_dw[3 + j] + row[2] * dRX_dw[6 + j];
      Jc[3 + j] = row[j];
      J_point[3 * i + j] = row[0] * R[j] + row[1] * R[3 + j] + row[2] * R[6 + j];
    }
    Jc[6] = dist * p[i];
    Jc[7] = f * r2 * p[i];
    Jc[8] = f * r2 * r2 * p[i];
  }
}

void se3_between_analytic(const double* a, const double* b, const double* z, const double* U,
                          double* residual, double* J_a, double* J_b) {
  const double* qa = a + 3;
  const double* qb = b + 3;
  const double qa_inv[4] = {-qa[0], -qa[1], -qa[2], qa[3]};
  double q_ab[4];
  quat_mul(qa_inv, qb, q_ab);
  double Ra[9], Rab[9];
  quat_matrix(qa, Ra);
  quat_matrix(q_ab, Rab);
  const double dp[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
  double p_ab[3];
  for (int i = 0; i < 3; ++i) p_ab[i] = Ra[i] * dp[0] + Ra[3 + i] * dp[1] + Ra[6 + i] * dp[2];
  const double q_ab_inv[4] = {-q_ab[0], -q_ab[1], -q_ab[2], q_ab[3]};
  double m[4];
  quat_mul(z + 3, q_ab_inv, m);
  const double e[6] = {p_ab[0] - z[0], p_ab[1] - z[1], p_ab[2] - z[2], 2 * m[0], 2 * m[1], 2 * m[2]};

  // de/da and de/db, row-major 6x6, before U.
  double Ea[36] = {}, Eb[36] = {};
  double P[9], M[9], MRab[9];
  hat(p_ab, P);
  hat(m, M);
  for (int k = 0; k < 9; k += 4) M[k] = m[3];
  mul33(M, Rab, MRab);
  for (int i = 0; i < 3; ++i) {
    Ea[6 * i + i] = -1;
    for (int j = 0; j < 3; ++j) {
      Ea[6 * i + 3 + j] = P[3 * i + j];
      Ea[6 * (3 + i) + 3 + j] = M[3 * i + j];
      Eb[6 * i + j] = Rab[3 * i + j];
      Eb[6 * (3 + i) + 3 + j] = -MRab[3 * i + j];
    }
  }
  // U is upper triangular, column-major: U(i, k) = U[i + 6 k], zero for k < i.
  for (int i = 0; i < 6; ++i) {
    double r = 0;
    for (int k = i; k < 6; ++k) r += U[i + 6 * k] * e[k];
    residual[i] = r;
    for (int j = 0; j < 6; ++j) {
      double sa = 0, sb = 0;
      for (int k = i; k < 6; ++k) {
        sa += U[i + 6 * k] * Ea[6 * k + j];
        sb += U[i + 6 * k] * Eb[6 * k + j];
      }
      J_a[6 * i + j] = sa;
      J_b[6 * i + j] = sb;
    }
  }
}

}  // namespace lsjit::bench
