#include "lsjit/runtime/bal_problem.h"

#include "lsjit/runtime/standard_costs.h"

namespace lsjit {

BalLeastSquares make_bal_problem(const io::BalProblem& bal, const Loss& loss) {
  BalLeastSquares p;
  if (!bal.observations.empty()) {
    std::vector<int64_t> cameras, points;
    std::vector<Eigen::Vector2d> xy;
    cameras.reserve(bal.observations.size());
    points.reserve(bal.observations.size());
    xy.reserve(bal.observations.size());
    for (const auto& o : bal.observations) {
      cameras.push_back(o.camera);
      points.push_back(o.point);
      xy.push_back(o.xy);
    }
    if (loss.kind == Loss::Kind::Trivial)
      p.problem.add(standard_costs::snavely_cost(), VecVar<9>::batch(std::move(cameras)),
                    VecVar<3>::batch(std::move(points)), xy);
    else
      p.problem.add(standard_costs::snavely_cost(), loss, VecVar<9>::batch(std::move(cameras)),
                    VecVar<3>::batch(std::move(points)), xy);
  }
  for (size_t c = 0; c < bal.cameras.size(); ++c) p.initial.set(VecVar<9>(static_cast<int64_t>(c)), bal.cameras[c]);
  for (size_t k = 0; k < bal.points.size(); ++k) p.initial.set(VecVar<3>(static_cast<int64_t>(k)), bal.points[k]);
  return p;
}

void update_bal(io::BalProblem& bal, const Values& values) {
  for (size_t c = 0; c < bal.cameras.size(); ++c) bal.cameras[c] = values.get(VecVar<9>(static_cast<int64_t>(c)));
  for (size_t k = 0; k < bal.points.size(); ++k) bal.points[k] = values.get(VecVar<3>(static_cast<int64_t>(k)));
}

}  // namespace lsjit
