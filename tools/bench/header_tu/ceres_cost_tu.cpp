// The Ceres twin of lsjit_cost_tu.cpp: Ceres' bundle_adjuster SnavelyReprojectionError
// (tools/bench/ceres_snavely.h) and the function that adds one AutoDiff residual block
// per observation.
#include <ceres/ceres.h>
#include <lsjit/tools/bench/ceres_snavely.h>  // Ceres' SnavelyReprojectionError

#include <vector>

namespace app {

struct Observation {
  int camera, point;
  double xy[2];
};

void add_reprojection_costs(ceres::Problem& problem, const std::vector<Observation>& observations,
                            std::vector<double*>& cameras, std::vector<double*>& points) {
  for (const Observation& o : observations)
    problem.AddResidualBlock(new ceres::AutoDiffCostFunction<lsjit::bench::SnavelyFunctor, 2, 9, 3>(
                                 new lsjit::bench::SnavelyFunctor{o.xy[0], o.xy[1]}),
                             new ceres::HuberLoss(1.0), cameras[o.camera], points[o.point]);
}

}  // namespace app
