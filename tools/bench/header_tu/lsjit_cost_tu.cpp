// A cost translation unit as users write one: Ceres' bundle_adjuster reprojection cost,
// ported (docs/porting_from_ceres.md), and the function that adds one instance per
// observation. tools/bench/header_bench.sh compiles it with each lsjit header
// (LSJIT_HEADER) beside ceres_cost_tu.cpp, its Ceres twin.
#include LSJIT_HEADER

#include <vector>

namespace app {

struct Observation {
  int camera, point;
  Eigen::Vector2d xy;
};

auto reprojection = lsjit::cost("reprojection",
    [](const auto& v, lsjit::VecVar<9> camera, lsjit::VecVar<3> point, const auto& observed) {
      using S = lsjit::Sym;
      const Eigen::Matrix<S, 9, 1> cam = v[camera];
      const Eigen::Matrix<S, 3, 1> P =
          lsjit::standard_costs::angle_axis_rotate<S>(cam.head<3>(), v[point]) + cam.segment<3>(3);
      const S xp = -P(0) / P(2), yp = -P(1) / P(2);
      const S r2 = xp * xp + yp * yp;
      const S distortion = 1.0 + r2 * (cam(7) + cam(8) * r2);
      return Eigen::Matrix<S, 2, 1>(cam(6) * distortion * xp - observed(0),
                                    cam(6) * distortion * yp - observed(1));
    });

void add_reprojection_costs(lsjit::Problem& problem, const std::vector<Observation>& observations) {
  for (const Observation& o : observations)
    problem.add(reprojection, lsjit::HuberLoss(1.0), lsjit::VecVar<9>(o.camera), lsjit::VecVar<3>(o.point), o.xy);
}

}  // namespace app
