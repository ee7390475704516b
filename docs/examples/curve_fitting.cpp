// Curve fitting with lsjit: Ceres' curve_fitting example, y = exp(m x + c), with a cost
// written by hand as a C++ lambda.
//
//   lsjit_example_curve_fitting
//
// This is the example to read first: it shows how to write your own cost, pass
// per-instance data, add many instances at once, solve, and get the uncertainty of the
// estimate. The data are generated here: 67 samples of exp(0.3 x + 0.1) with Gaussian
// noise of σ = 0.2, as in Ceres (whose fixed sample of that noise gives m = 0.291861,
// c = 0.131439; this file draws its own, so the numbers differ a little).
//
// The program exits nonzero when m or c is further from the truth than four standard
// errors, or when fitting new data compiled anything.
#include <lsjit/lsjit.h>

#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <random>
#include <vector>

namespace {

constexpr double kTrueM = 0.3, kTrueC = 0.1, kSigma = 0.2;

struct Samples {
  std::vector<double> x, y;
};

// n samples at x = 0, 0.075, 0.15, ... (Ceres' abscissae for n = 67).
Samples make_samples(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, kSigma);
  Samples s;
  for (int i = 0; i < n; ++i) {
    const double x = 0.075 * i;
    s.x.push_back(x);
    s.y.push_back(std::exp(kTrueM * x + kTrueC) + noise(rng));
  }
  return s;
}

// 1. The cost. A generic lambda: lsjit calls it once, with symbolic scalars (lsjit::Sym)
//    in place of numbers, and records what it computes; from that record it derives the
//    Jacobian and compiles both into one machine-code kernel. Its arguments:
//      v        the variables' values: v[m] is the current value of variable m
//      m, c     variable handles (ScalarVar: a real number; also VecVar<N>, SE3Var, ...)
//      x, y     data of one instance (a double each here; Eigen matrices, Lie group
//               elements and std::array work too)
//    It returns the residual: a Sym here, an Eigen vector of Sym for several.
//    The body is ordinary C++ on Sym: arithmetic and the <cmath> functions (exp, log,
//    sin, pow, ...), found by argument-dependent lookup. What it cannot do is branch on a
//    traced value (`if (x > 0)` does not compile); lsjit::select(cond, a, b) chooses
//    instead.
//    Values that vary between instances (here x and y) must be data arguments: a number
//    captured by the lambda would be baked into the compiled kernel as a constant.
const auto exponential_residual = lsjit::cost(
    "exponential_residual",
    [](const auto& v, lsjit::ScalarVar m, lsjit::ScalarVar c, const auto& x, const auto& y) {
      return y - exp(v[m] * x + v[c]);
    });

// The two unknowns. A variable is a type and an ID of your choosing.
const lsjit::ScalarVar m(0), c(1);

// What a fit gives: the estimate, its standard errors and the solver's summary.
struct Fit {
  double m = 0, c = 0;
  double m_error = 0, c_error = 0;
  lsjit::SolveSummary summary;
};

Fit fit(const Samples& samples) {
  // 2. The problem. One add() for all samples: the handles m and c are shared by every
  //    instance, and a std::vector of data adds one instance per element. (Calling add()
  //    once per sample gives the same problem.) Nothing is traced yet.
  lsjit::Problem problem;
  problem.add(exponential_residual, m, c, samples.x, samples.y);

  // 3. Initial values, as in Ceres: m = c = 0.
  lsjit::Values initial;
  initial.set(m, 0.0);
  initial.set(c, 0.0);

  // 4. analyze() traces, differentiates and compiles (or finds the kernels in the cache);
  //    solve() runs Levenberg–Marquardt. Two unknowns: a dense linear solver is right.
  lsjit::AnalyzedProblem analyzed = problem.analyze();
  lsjit::SolverOptions options;
  options.linear_solver = lsjit::LinearSolver::DenseCholesky;
  const lsjit::SolveResult result = analyzed.solve(initial, options);
  std::cout << result.summary.report();

  // 5. Standard errors, from the Gauss–Newton matrix JᵀJ at the solution: the covariance
  //    of (m, c) is s² (JᵀJ)⁻¹ with s² = Σr² / (n − 2) the estimated noise variance. The
  //    matrix is over the free variables in lsjit's order (by type, then ID: m, then c).
  const Eigen::MatrixXd jtj = analyzed.evaluate(result.values, /*gauss_newton=*/true).gauss_newton;
  const double n = static_cast<double>(samples.x.size());
  const double s2 = 2.0 * result.summary.final_cost / (n - 2.0);  // the cost is ½Σr²
  const Eigen::Matrix2d covariance = s2 * jtj.inverse();

  Fit f;
  f.m = result.values.get(m);
  f.c = result.values.get(c);
  f.m_error = std::sqrt(covariance(0, 0));
  f.c_error = std::sqrt(covariance(1, 1));
  f.summary = result.summary;
  std::printf("m = %.6f ± %.6f (truth %.1f), c = %.6f ± %.6f (truth %.1f), noise σ ≈ %.3f\n",
              f.m, f.m_error, kTrueM, f.c, f.c_error, kTrueC, std::sqrt(s2));
  return f;
}

// Converged, and the truth within four standard errors (a wrong fit misses by far more).
bool near_truth(const Fit& f) {
  return lsjit::converged(f.summary.termination) && std::abs(f.m - kTrueM) < 4.0 * f.m_error &&
         std::abs(f.c - kTrueC) < 4.0 * f.c_error;
}

int run() {
  const Fit first = fit(make_samples(67, 1));

  // 6. Another data set, three times larger. The number of instances and their data are
  //    runtime inputs of the kernels, so this fit reuses the kernels compiled above.
  //    summary.compiles counts the kernels compiled for a problem, whether analyze()
  //    waited for them or they compile in the background (the default, while tier 0
  //    runs); summary.recompiles the misses of a cost that already had another kernel,
  //    which is what capturing the samples in the lambda instead of passing them as data
  //    would cause.
  const Fit second = fit(make_samples(201, 2));
  std::printf("kernels compiled for the first fit: %llu, for the second: %llu\n",
              static_cast<unsigned long long>(first.summary.compiles),
              static_cast<unsigned long long>(second.summary.compiles));

  if (!near_truth(first) || !near_truth(second) || second.summary.compiles != 0 || second.summary.recompiles != 0) {
    std::cerr << "curve_fitting: a fit is wrong, or the second fit recompiled\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::cerr << "curve_fitting: " << e.what() << "\n";
    return 1;
  }
}
