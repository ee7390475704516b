// A program outside lsjit using the installed Ceres adapter (lsjit::ceres,
// <lsjit/interop/ceres.h>), as docs/porting_from_ceres.md step 2 tells Ceres users to: an
// lsjit cost inside a ceres::Problem. Exits nonzero when the answer is wrong.
//
// The problem: the same exact circle as main.cpp, fitted by Ceres with lsjit's residuals
// and Jacobians.
#include <ceres/ceres.h>
#include <lsjit/interop/ceres.h>
#include <lsjit/lsjit.h>

#include <cmath>
#include <iostream>

int main() {
  const double true_center[2] = {1.0, -2.0}, true_radius = 3.0;
  auto on_circle = lsjit::cost("on_circle",
      [](const auto& v, lsjit::VecVar<2> center, lsjit::ScalarVar radius, const auto& point) {
        return (point - v[center]).norm() - v[radius];
      });
  double center[2] = {0.0, 0.0}, radius = 1.0;
  ceres::Problem problem;
  for (int k = 0; k < 12; ++k) {
    const double angle = 0.1 + 0.4 * k;
    const Eigen::Vector2d point(true_center[0] + true_radius * std::cos(angle),
                                true_center[1] + true_radius * std::sin(angle));
    problem.AddResidualBlock(
        lsjit::ceres_cost_function(on_circle, lsjit::VecVar<2>(), lsjit::ScalarVar(), point), nullptr,
        center, &radius);
  }
  ceres::Solver::Options options;
  options.function_tolerance = options.gradient_tolerance = options.parameter_tolerance = 1e-14;
  ceres::Solver::Summary summary;
  ceres::Solve(options, &problem, &summary);
  const double error = std::hypot(center[0] - true_center[0], center[1] - true_center[1]) +
                       std::abs(radius - true_radius);
  std::cout << "Ceres with lsjit's residuals: center (" << center[0] << ", " << center[1]
            << "), radius " << radius << ", error " << error << "\n";
  return summary.IsSolutionUsable() && error < 1e-8 ? 0 : 1;
}
