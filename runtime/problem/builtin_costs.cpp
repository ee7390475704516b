#include "lsjit/runtime/builtin_costs.h"

#include <limits>
#include <vector>

#include "lsjit/runtime/standard_costs.h"

namespace lsjit {
namespace {

using namespace standard_costs;

template <class C, class... Args>
BuiltinCost entry(const C& c, std::string description, Args... example_args) {
  return {c.name, std::move(description),
          [c, example_args...] { return lsjit::trace(c, example_args...); }};
}

std::vector<BuiltinCost> make_registry() {
  using Eigen::Matrix;
  std::vector<BuiltinCost> r;
  r.push_back(entry(make_prior<SO2, SO2Var>("so2_prior"), "prior on an SO2 rotation",
                    SO2Var(0), SO2d(), Matrix<double, 1, 1>::Zero()));
  r.push_back(entry(make_prior<SE2, SE2Var>("se2_prior"), "prior on an SE2 pose", SE2Var(0),
                    SE2d(), Matrix<double, 3, 3>::Zero()));
  r.push_back(entry(make_prior<SO3, SO3Var>("so3_prior"), "prior on an SO3 rotation",
                    SO3Var(0), SO3d(), Matrix<double, 3, 3>::Zero()));
  r.push_back(entry(make_prior<SE3, SE3Var>("se3_prior"), "prior on an SE3 pose", SE3Var(0),
                    SE3d(), Matrix<double, 6, 6>::Zero()));
  r.push_back(entry(se2_between_cost(), "g2o EDGE_SE2 between two SE2 poses", SE2Var(0),
                    SE2Var(1), SE2d(), Matrix<double, 3, 3>::Zero()));
  r.push_back(entry(se3_between_cost(), "g2o EDGE_SE3:QUAT between two SE3 poses", SE3Var(0),
                    SE3Var(1), SE3d(), Matrix<double, 6, 6>::Zero()));
  r.push_back(entry(snavely_cost(), "BAL reprojection through a Snavely camera", VecVar<9>(0),
                    VecVar<3>(1), Matrix<double, 2, 1>::Zero()));
  r.push_back(entry(curve_fit_cost(), "1-D curve fit y = exp(m x + c)", ScalarVar(0),
                    ScalarVar(1), 0.0, 0.0));
  return r;
}

}  // namespace

std::span<const BuiltinCost> builtin_costs() {
  static const std::vector<BuiltinCost> registry = make_registry();
  return registry;
}

const BuiltinCost* find_builtin_cost(std::string_view name) {
  for (const BuiltinCost& c : builtin_costs())
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace lsjit
