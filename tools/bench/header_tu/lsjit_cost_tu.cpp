// A cost translation unit as users write one: Ceres' bundle_adjuster reprojection cost,
// ported, and the function that adds one instance per observation.
// tools/bench/header_bench.sh compiles it with each lsjit header (LSJIT_HEADER) beside
// ceres_cost_tu.cpp, its Ceres twin.
#include LSJIT_HEADER

#include <vector>

namespace app {

struct Observation {
  int camera, point;
  Eigen::Vector2d xy;
};

// The cost is lsjit::standard_costs::snavely_cost(), the port in docs/porting_from_ceres.md;
// its trace is instantiated here, where it is added, as a cost written in this file is.
const auto reprojection = lsjit::standard_costs::snavely_cost();

void add_reprojection_costs(lsjit::Problem& problem, const std::vector<Observation>& observations) {
  for (const Observation& o : observations)
    problem.add(reprojection, lsjit::HuberLoss(1.0), lsjit::VecVar<9>(o.camera), lsjit::VecVar<3>(o.point), o.xy);
}

}  // namespace app
