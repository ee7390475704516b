// The consumer's cost translation unit: it includes only <lsjit/costs.h>, which must be
// enough to write a cost and add it to a Problem (main.cpp analyzes and solves).
#include <lsjit/costs.h>

#include <vector>

void add_points_on_circle(lsjit::Problem& problem, lsjit::VecVar<2> center, lsjit::ScalarVar radius,
                          const std::vector<Eigen::Vector2d>& points) {
  // The residual of a point: its distance from the center minus the radius.
  auto on_circle = lsjit::cost("on_circle",
      [](const auto& v, lsjit::VecVar<2> c, lsjit::ScalarVar r, const auto& point) {
        return (point - v[c]).norm() - v[r];
      }).named({"center", "radius"}, {"point"});
  problem.add(on_circle, center, radius, points);  // one instance per point
}
