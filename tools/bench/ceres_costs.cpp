#include "ceres_costs.h"

#include "ceres_pose_graph_costs.h"
#include "ceres_snavely.h"

#include <ceres/autodiff_cost_function.h>
#include <ceres/crs_matrix.h>
#include <ceres/manifold.h>
#include <ceres/problem.h>

#include <Eigen/Geometry>
#include <array>
#include <vector>

namespace lsjit::bench {
namespace {

double checksum(const double* v, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += v[i];
  return s;
}

ceres::Problem::Options borrowed() {
  ceres::Problem::Options o;
  o.cost_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
  o.manifold_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
  return o;
}

double evaluate(ceres::Problem& problem) {
  ceres::Problem::EvaluateOptions options;
  options.num_threads = 1;
  double cost = 0;
  std::vector<double> residuals;
  ceres::CRSMatrix jacobian;
  problem.Evaluate(options, &cost, &residuals, nullptr, &jacobian);
  return cost + checksum(jacobian.values.data(), jacobian.values.size());
}

}  // namespace

struct CeresBal::Impl {
  std::vector<std::unique_ptr<ceres::CostFunction>> costs;
  std::vector<const double*> camera, point;
  ceres::Problem problem{borrowed()};
};

CeresBal::CeresBal(int64_t observations, const int32_t* camera_index, const int32_t* point_index,
                   const double* xy, double* cameras, double* points, int64_t, int64_t)
    : impl_(std::make_unique<Impl>()) {
  for (int64_t i = 0; i < observations; ++i) {
    auto* cost = new ceres::AutoDiffCostFunction<SnavelyFunctor, 2, 9, 3>(
        new SnavelyFunctor{xy[2 * i], xy[2 * i + 1]});
    impl_->costs.emplace_back(cost);
    double* c = cameras + 9 * int64_t{camera_index[i]};
    double* p = points + 3 * int64_t{point_index[i]};
    impl_->camera.push_back(c);
    impl_->point.push_back(p);
    impl_->problem.AddResidualBlock(cost, nullptr, c, p);
  }
}
CeresBal::~CeresBal() = default;

double CeresBal::evaluate_blocks(double* residuals, double* jacobian_camera, double* jacobian_point) {
  const size_t n = impl_->costs.size();
  for (size_t i = 0; i < n; ++i) {
    const double* params[2] = {impl_->camera[i], impl_->point[i]};
    double* jacobians[2] = {jacobian_camera + 18 * i, jacobian_point + 6 * i};
    impl_->costs[i]->Evaluate(params, residuals + 2 * i, jacobians);
  }
  return checksum(residuals, 2 * n) + checksum(jacobian_camera, 18 * n);
}

double CeresBal::evaluate_problem() { return evaluate(impl_->problem); }

struct CeresSe3Between::Impl {
  std::vector<std::unique_ptr<ceres::CostFunction>> costs;
  std::vector<std::array<const double*, 4>> blocks;
  std::vector<Eigen::Vector3d> p;          // Ceres' layout: translation and quaternion as
  std::vector<Eigen::Quaterniond> q;       // separate blocks
  ceres::EigenQuaternionManifold quaternion_manifold;
  ceres::Problem problem{borrowed()};
};

CeresSe3Between::CeresSe3Between(int64_t edges, const int32_t* from, const int32_t* to,
                                 const double* measurement, const double* sqrt_information,
                                 double* poses, int64_t num_poses)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.p.resize(num_poses);
  m.q.resize(num_poses);
  for (int64_t k = 0; k < num_poses; ++k) {
    const double* x = poses + 7 * k;
    m.p[k] = Eigen::Vector3d(x[0], x[1], x[2]);
    m.q[k] = Eigen::Quaterniond(x[6], x[3], x[4], x[5]);
  }
  for (int64_t i = 0; i < edges; ++i) {
    const double* z = measurement + 7 * i;
    auto* f = new Se3BetweenFunctor{Eigen::Vector3d(z[0], z[1], z[2]),
                                    Eigen::Quaterniond(z[6], z[3], z[4], z[5]),
                                    Eigen::Map<const Eigen::Matrix<double, 6, 6>>(sqrt_information + 36 * i)};
    auto* cost = new ceres::AutoDiffCostFunction<Se3BetweenFunctor, 6, 3, 4, 3, 4>(f);
    m.costs.emplace_back(cost);
    double* pa = m.p[from[i]].data();
    double* qa = m.q[from[i]].coeffs().data();
    double* pb = m.p[to[i]].data();
    double* qb = m.q[to[i]].coeffs().data();
    m.blocks.push_back({pa, qa, pb, qb});
    m.problem.AddResidualBlock(cost, nullptr, pa, qa, pb, qb);
  }
  for (auto& q : m.q) m.problem.SetManifold(q.coeffs().data(), &m.quaternion_manifold);
}
CeresSe3Between::~CeresSe3Between() = default;

double CeresSe3Between::evaluate_blocks(double* residuals, double* jacobians) {
  const size_t n = impl_->costs.size();
  for (size_t i = 0; i < n; ++i) {
    double* J = jacobians + 84 * i;
    double* blocks[4] = {J, J + 18, J + 42, J + 60};
    impl_->costs[i]->Evaluate(impl_->blocks[i].data(), residuals + 6 * i, blocks);
  }
  return checksum(residuals, 6 * n) + checksum(jacobians, 84 * n);
}

double CeresSe3Between::evaluate_problem() { return evaluate(impl_->problem); }

}  // namespace lsjit::bench
