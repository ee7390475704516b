// Bundle adjustment with lsjit: cameras and 3D points refined together so that the points
// project onto where the cameras saw them.
//
//   lsjit_example_bundle_adjustment
//
// The problem is a synthetic one in the BAL format (Bundle Adjustment in the Large, the
// format of Ceres' bundle_adjuster example): a ring of cameras around a cloud of points,
// observations with one pixel of noise, and cameras and points perturbed as an initial
// estimate. lsjit::io::read_bal reads real BAL files the same way (`lsjit solve FILE`
// does all of this from the command line).
//
// The program exits nonzero when the solve does not converge or when the solution
// explains the observations worse than the true scene does.
#include <lsjit/lsjit.h>

#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>

namespace {

int run() {
  // 1. The scene. generate_bal returns the truth and the perturbed initial problem; both
  //    hold the same (noisy) observations. Each camera is 9 numbers, as in BAL: angle-axis
  //    rotation, translation, focal length f and radial distortion k1, k2.
  lsjit::io::BalSpec spec;
  spec.cameras = 16;
  spec.points = 500;
  spec.observations_per_point = 4;  // each point seen by 4 of the 16 cameras
  spec.pixel_sigma = 1.0;           // observation noise, pixels
  spec.camera_rotation_sigma = 0.01;
  spec.camera_translation_sigma = 0.1;
  spec.point_sigma = 0.1;
  spec.seed = 7;
  const lsjit::io::GeneratedBal scene = lsjit::io::generate_bal(spec);
  std::cout << scene.initial.cameras.size() << " cameras, " << scene.initial.points.size()
            << " points, " << scene.initial.observations.size() << " observations\n";

  // 2. The least-squares problem: one snavely_reprojection residual (2 pixels) per
  //    observation, cameras as VecVar<9> and points as VecVar<3>, all observations in one
  //    batch. make_bal_problem(bal, lsjit::HuberLoss(1.0)) would robustify them against
  //    outliers, as Ceres' bundle_adjuster --robustify does.
  lsjit::BalLeastSquares ba = lsjit::make_bal_problem(scene.initial);

  // 3. Trace, differentiate and compile once; then solve. The normal equations have a
  //    block per camera, per point and per observed camera–point pair; the sparse
  //    Cholesky (lsjit's own supernodal factorization) solves them directly. The default,
  //    LinearSolver::Auto, would instead eliminate the points with a Schur complement
  //    solver (DenseSchur or SparseSchur). For much larger scenes,
  //    LinearSolver::IterativeSchur or ConjugateGradient trade exact steps for memory.
  lsjit::AnalyzedProblem analyzed = ba.problem.analyze();
  lsjit::SolverOptions options;
  options.linear_solver = lsjit::LinearSolver::SparseCholesky;
  options.max_iterations = 100;
  options.num_threads = 0;  // every hardware thread; the result is the same for any count
  const lsjit::SolveResult result = analyzed.solve(ba.initial, options);
  std::cout << result.summary.report();

  // 4. The refined scene, back in BAL form (write_bal would save it).
  lsjit::io::BalProblem refined = scene.initial;
  lsjit::update_bal(refined, result.values);

  // 5. Is it right? Bundle adjustment sees the scene only up to a similarity (rotation,
  //    translation, scale), so the solution cannot be compared with the truth number by
  //    number. What it can be compared on is the fit: the true scene is one candidate
  //    solution, so the optimum reprojects at least as well as the truth does. The RMS
  //    reprojection error of the truth is about the pixel noise; the optimum's is a little
  //    below it, having fitted some of the noise.
  lsjit::BalLeastSquares at_truth = lsjit::make_bal_problem(scene.truth);
  const double truth_cost = analyzed.cost(at_truth.initial);
  const double residuals = 2.0 * static_cast<double>(refined.observations.size());
  const auto rms = [&](double cost) { return std::sqrt(2.0 * cost / residuals); };
  std::printf("RMS reprojection error: initial %.4g px, solution %.4g px, truth %.4g px\n",
              rms(result.summary.initial_cost), rms(result.summary.final_cost), rms(truth_cost));
  const bool ok = lsjit::converged(result.summary.termination) &&
                  result.summary.final_cost <= truth_cost;
  if (!ok) {
    std::cerr << "bundle_adjustment: the solve did not reach a good solution\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::cerr << "bundle_adjustment: " << e.what() << "\n";
    return 1;
  }
}
