// The Ceres twin of lsjit_cost_tu.cpp: Ceres' bundle_adjuster SnavelyReprojectionError
// and the function that adds one AutoDiff residual block per observation.
#include <ceres/ceres.h>
#include <ceres/rotation.h>

#include <vector>

namespace app {

struct Observation {
  int camera, point;
  double xy[2];
};

struct SnavelyReprojectionError {
  double observed_x, observed_y;
  template <class T>
  bool operator()(const T* camera, const T* point, T* residuals) const {
    T p[3];
    ceres::AngleAxisRotatePoint(camera, point, p);
    p[0] += camera[3];
    p[1] += camera[4];
    p[2] += camera[5];
    const T xp = -p[0] / p[2];
    const T yp = -p[1] / p[2];
    const T r2 = xp * xp + yp * yp;
    const T distortion = 1.0 + r2 * (camera[7] + camera[8] * r2);
    residuals[0] = camera[6] * distortion * xp - observed_x;
    residuals[1] = camera[6] * distortion * yp - observed_y;
    return true;
  }
};

void add_reprojection_costs(ceres::Problem& problem, const std::vector<Observation>& observations,
                            std::vector<double*>& cameras, std::vector<double*>& points) {
  for (const Observation& o : observations)
    problem.AddResidualBlock(new ceres::AutoDiffCostFunction<SnavelyReprojectionError, 2, 9, 3>(
                                 new SnavelyReprojectionError{o.xy[0], o.xy[1]}),
                             new ceres::HuberLoss(1.0), cameras[o.camera], points[o.point]);
}

}  // namespace app
