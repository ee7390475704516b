// Ceres' bundle_adjuster residual (examples/snavely_reprojection_error.h in Ceres), the
// Snavely camera of docs/architecture.md, "Conventions": angle-axis, translation, f, k1,
// k2; P = R·X + t, p = −P.xy / P.z, pred = f·(1 + k1‖p‖² + k2‖p‖⁴)·p, residual
// pred − (x, y).
//
// Private to the Ceres baselines (ceres_costs.cpp, ceres_bal.cpp): includes Ceres.
#pragma once

#include <ceres/rotation.h>

namespace lsjit::bench {

struct SnavelyFunctor {
  double x, y;
  template <class T>
  bool operator()(const T* camera, const T* point, T* residual) const {
    T p[3];
    ceres::AngleAxisRotatePoint(camera, point, p);
    p[0] += camera[3];
    p[1] += camera[4];
    p[2] += camera[5];
    const T xp = -p[0] / p[2], yp = -p[1] / p[2];
    const T r2 = xp * xp + yp * yp;
    const T distortion = 1.0 + r2 * (camera[7] + camera[8] * r2);
    residual[0] = camera[6] * distortion * xp - x;
    residual[1] = camera[6] * distortion * yp - y;
    return true;
  }
};

}  // namespace lsjit::bench
