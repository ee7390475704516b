// A g2o pose graph (runtime/io/g2o.h) as the Ceres baseline's input (ceres_pose_graph.h):
// SE2 poses and measurements as (x, y, θ), SE3 as (tx, ty, tz, qx, qy, qz, qw), edges by
// vertex index, the graph's held vertices constant. lsjit headers only: Ceres' stay in
// ceres_pose_graph.cpp. Used by the pose-graph benchmark and the interop tests.
#pragma once

#include <cmath>
#include <cstdint>

#include "ceres_pose_graph.h"
#include "lsjit/runtime/io/g2o.h"

namespace lsjit::bench {

// Each edge's U is sqrt_information(edge), a column-major 3x3 or 6x6 Eigen matrix: the
// graph's own factor (the overload below), or one the caller makes differently.
template <class SqrtInformation>
CeresPoseGraphInput ceres_pose_graph_input(const io::PoseGraph& g, SqrtInformation sqrt_information) {
  CeresPoseGraphInput in;
  in.dimension = g.dimension;
  const auto index = g.vertex_index();
  const auto add_edge = [&](const auto& e) {
    in.from.push_back(static_cast<int32_t>(index.at(e.from)));
    in.to.push_back(static_cast<int32_t>(index.at(e.to)));
    const auto u = sqrt_information(e);
    in.sqrt_information.insert(in.sqrt_information.end(), u.data(), u.data() + u.size());
  };
  if (g.dimension == 2) {
    for (const auto& x : g.poses2) {
      const auto p = x.params();  // (x, y, cos θ, sin θ)
      in.poses.insert(in.poses.end(), {p(0), p(1), std::atan2(p(3), p(2))});
    }
    for (const auto& e : g.edges2) {
      const auto z = e.measurement.params();
      in.measurements.insert(in.measurements.end(), {z(0), z(1), std::atan2(z(3), z(2))});
      add_edge(e);
    }
  } else {
    for (const auto& x : g.poses3) {
      const auto p = x.params();  // (tx, ty, tz, qx, qy, qz, qw)
      in.poses.insert(in.poses.end(), p.data(), p.data() + 7);
    }
    for (const auto& e : g.edges3) {
      const auto z = e.measurement.params();
      in.measurements.insert(in.measurements.end(), z.data(), z.data() + 7);
      add_edge(e);
    }
  }
  for (const int64_t id : g.held_constant()) in.constant.push_back(static_cast<int32_t>(index.at(id)));
  return in;
}

inline CeresPoseGraphInput ceres_pose_graph_input(const io::PoseGraph& g) {
  return ceres_pose_graph_input(g, [](const auto& e) { return e.sqrt_information; });
}

}  // namespace lsjit::bench
