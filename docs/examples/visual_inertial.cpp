// Variables of your own kinds: a small visual-inertial problem in which velocities and
// landmarks are both 3-vectors, and a navigation state is a 15-vector.
//
//   lsjit_example_visual_inertial
//
// A body moves through K keyframes. Per keyframe k it has
//   - a pose (lsjit::SE3Var: position and attitude),
//   - a velocity (a Vec3 of the kind "velocity"),
//   - an IMU bias (a VecVar<6> of the kind "bias": gyroscope, then accelerometer).
// The camera sees landmarks (Vec3s of the kind "landmark"). Velocity 0, landmark 0 and
// bias 0 are three variables, because their kinds differ: with plain VecVar<3> the first
// two would be one (lsjit keys a variable by its type's name and its ID).
//
// Costs, each a lambda:
//   - a landmark seen from a pose: the landmark in the body frame against the measurement,
//     robustified by a Huber loss (one observation is an outlier);
//   - a motion factor between keyframes: position, velocity and attitude propagated with
//     the bias-corrected IMU readings, and the bias's random walk: a 15-row residual, the
//     size of a navigation filter's error state;
//   - priors on the first pose, velocity and the bias (the gauge).
// The landmarks are Schur-eliminated on their own (AnalyzeOptions::schur_elimination picks
// the kind with the most free variables that no cost uses twice; velocities, of the same
// size, stay in the reduced system).
//
// The program exits nonzero unless the solve recovers the true trajectory, velocities,
// biases and landmarks, the summary names the four types, and the landmarks were the
// eliminated kind.
#include <lsjit/lsjit.h>

#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>

namespace {

using Velocity = lsjit::Kind<lsjit::VecVar<3>, "velocity">;
using Landmark = lsjit::Kind<lsjit::VecVar<3>, "landmark">;
using Bias = lsjit::Kind<lsjit::VecVar<6>, "bias">;

constexpr int kKeyframes = 12, kLandmarks = 40;
constexpr double kDt = 0.5;

// The truth: a gentle helix, landmarks on a wall in front of it, a slowly drifting bias.
lsjit::SE3d true_pose(int k) {
  const double t = k * kDt;
  return lsjit::SE3d::exp((Eigen::Matrix<double, 6, 1>() << std::cos(0.3 * t), std::sin(0.3 * t), 0.1 * t, 0.02 * t,
                           -0.01 * t, 0.3 * t).finished());
}
Eigen::Vector3d true_velocity(int k) {
  return (true_pose(k + 1).translation() - true_pose(k).translation()) / kDt;
}
Eigen::Vector3d true_landmark(int j) { return {4.0 + 0.1 * (j % 5), -3.0 + 0.15 * j, -1.0 + 0.3 * (j % 7)}; }
Eigen::Matrix<double, 6, 1> true_bias(int k) {
  return (Eigen::Matrix<double, 6, 1>() << 0.01, -0.02, 0.005, 0.1, 0.05, -0.08).finished() * (1.0 + 0.01 * k);
}

}  // namespace

int main() try {
  // 1. The costs. Each argument's type says what it is; the data arguments (measurements)
  //    are runtime inputs, so every instance of a cost shares one kernel.
  auto observe = lsjit::cost("vio_observe", [](const auto& v, lsjit::SE3Var pose, Landmark l, const auto& z) {
    return (v[pose].inverse() * v[l] - z).eval();
  });
  // The navigation residual between keyframes: [position; velocity; attitude; bias drift],
  // 3 + 3 + 3 + 6 = 15 rows. The measured acceleration `a` is corrected by the bias's
  // accelerometer half, the measured rotation rate `w` by its gyroscope half; the drift
  // row weighs the bias's random walk.
  auto motion = lsjit::cost("vio_motion", [](const auto& v, lsjit::SE3Var p0, lsjit::SE3Var p1, Velocity v0,
                                             Velocity v1, Bias b0, Bias b1, const auto& a, const auto& w,
                                             const auto& drift, const auto& dt) {
    using S = lsjit::Sym;
    const Eigen::Matrix<S, 6, 1> bias = v[b0];
    const Eigen::Matrix<S, 3, 1> accel = a - bias.template tail<3>();
    const Eigen::Matrix<S, 3, 1> rate = w - bias.template head<3>();
    Eigen::Matrix<S, 15, 1> r;
    r.template segment<3>(0) = v[p1].translation() - v[p0].translation() - v[v0] * dt;
    r.template segment<3>(3) = v[v1] - v[v0] - accel * dt;
    r.template segment<3>(6) = (v[p0].rotation().inverse() * v[p1].rotation()).log() - rate * dt;
    r.template segment<6>(9) = 10.0 * (v[b1] - v[b0] - drift);
    return r;
  });
  auto prior_pose = lsjit::cost("vio_prior_pose", [](const auto& v, lsjit::SE3Var p, const auto& z) {
    return (z.inverse() * v[p]).log().eval();
  });
  // One lambda for the two vector priors, under a name per kind: a cost name stands for one
  // kernel, and the two kinds' traces differ in their variable's type (the kernel cache
  // would count the second as a recompile of the first).
  const auto vector_prior = [](const auto& v, auto x, const auto& z) { return (v[x] - z).eval(); };
  auto prior_velocity = lsjit::cost("vio_prior_velocity", vector_prior);
  auto prior_bias = lsjit::cost("vio_prior_bias", vector_prior);

  // 2. The problem, with measurements made from the truth. Velocity(0), Landmark(0) and
  //    Bias(0) share ID 0 and are three variables.
  lsjit::Problem problem;
  problem.add(prior_pose, lsjit::SE3Var(0), true_pose(0));
  problem.add(prior_velocity, Velocity(0), true_velocity(0));
  problem.add(prior_bias, Bias(0), true_bias(0));
  for (int k = 0; k + 1 < kKeyframes; ++k) {
    const Eigen::Vector3d a = (true_velocity(k + 1) - true_velocity(k)) / kDt + true_bias(k).tail<3>();
    const Eigen::Vector3d w =
        (true_pose(k).rotation().inverse() * true_pose(k + 1).rotation()).log() / kDt + true_bias(k).head<3>();
    // The drift's measurement: the random walk the truth took (zero mean in a real filter).
    problem.add(motion, lsjit::SE3Var(k), lsjit::SE3Var(k + 1), Velocity(k), Velocity(k + 1), Bias(k), Bias(k + 1),
                a, w, Eigen::Matrix<double, 6, 1>(true_bias(k + 1) - true_bias(k)), kDt);
  }
  const lsjit::Loss huber = lsjit::HuberLoss(0.1);
  for (int k = 0; k < kKeyframes; ++k)
    for (int j = 0; j < kLandmarks; ++j) {
      Eigen::Vector3d z = true_pose(k).inverse() * true_landmark(j);
      if (k == 3 && j == 7) z += Eigen::Vector3d(2.0, -1.0, 0.5);  // an outlier: the loss turns it down
      problem.add(observe, huber, lsjit::SE3Var(k), Landmark(j), z);
    }

  // 3. A start away from the truth.
  lsjit::Values initial;
  for (int k = 0; k < kKeyframes; ++k) {
    initial.set(lsjit::SE3Var(k), true_pose(k) * lsjit::SE3d::exp(Eigen::Matrix<double, 6, 1>::Constant(0.05)));
    initial.set(Velocity(k), true_velocity(k) + Eigen::Vector3d(0.2, -0.1, 0.1));
  }
  for (int j = 0; j < kLandmarks; ++j) initial.set(Landmark(j), true_landmark(j) + Eigen::Vector3d(0.3, 0.3, -0.2));
  for (int k = 0; k < kKeyframes; ++k) initial.set(Bias(k), Eigen::Matrix<double, 6, 1>::Zero());

  // 4. Solve. Auto picks a Schur solver and eliminates the landmarks.
  lsjit::SolverOptions options;
  options.function_tolerance = 1e-12;  // converge fully: the check below is against the truth
  const lsjit::SolveResult result = problem.analyze().solve(initial, options);
  std::cout << result.summary.report();

  // 5. Check: the truth recovered (the outlier's pose error stays small under the loss).
  double worst = 0;
  for (int k = 0; k < kKeyframes; ++k) {
    worst = std::max(worst, (result.values.get(lsjit::SE3Var(k)).translation() - true_pose(k).translation()).norm());
    worst = std::max(worst, (result.values.get(Velocity(k)) - true_velocity(k)).norm());
  }
  for (int j = 0; j < kLandmarks; ++j)
    worst = std::max(worst, (result.values.get(Landmark(j)) - true_landmark(j)).norm());
  for (int k = 0; k < kKeyframes; ++k) worst = std::max(worst, (result.values.get(Bias(k)) - true_bias(k)).norm());
  bool landmarks_eliminated = false;
  for (const auto& t : result.summary.variable_types)
    landmarks_eliminated = landmarks_eliminated || (t.name == "landmark" && t.eliminated);
  std::printf("largest error against the truth: %.2e; kinds: %zu; landmarks eliminated: %s\n", worst,
              result.summary.variable_types.size(), landmarks_eliminated ? "yes" : "no");
  // The outlier, turned down by the loss but not to zero, still pulls the estimate by about
  // 1e-2; without the loss it pulls twenty times as far (0.23).
  if (!lsjit::converged(result.summary.termination) || worst > 5e-2 || result.summary.variable_types.size() != 4 ||
      !landmarks_eliminated) {
    std::cerr << "visual_inertial: the solve missed the truth, or the kinds were not kept apart\n";
    return 1;
  }
  return 0;
} catch (const std::exception& e) {
  std::cerr << "visual_inertial: " << e.what() << "\n";
  return 1;
}
