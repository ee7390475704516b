// Linear-solver benchmark: for synthetic normal equations shaped like lsjit's problems (a
// 3D pose graph, a 2D grid, bundle adjustment with and without the Schur complement), the
// time of each solver's analysis (construction: ordering, symbolic factorization) and of one
// solve() with an LM-style damping, median over repeats. Prints a Markdown table
// (docs/linear_solvers.md).
//
//   lsjit_bench_linear [--repeats N] [--small]
// The values are H = JᵀJ of a random Jacobian plus a prior per variable: the timings depend
// on the structure (and, for CG, on the conditioning, which here is benign).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "lsjit/runtime/linear/cholmod_cholesky.h"
#include "lsjit/runtime/linear/linear_solver.h"
#include "lsjit/runtime/linear/schur_solver.h"

namespace {

using namespace lsjit::linear;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Structure {
  std::string name;
  std::vector<int> sizes;
  std::vector<std::pair<int, int>> edges;  // two-variable residuals (plus a prior on each)
  int edge_rows = 0;
  int first_point = -1;  // bundle adjustment: where the points (eliminated by Schur) start
};

Structure pose_graph(int poses, int loops, std::mt19937_64& rng) {
  Structure s{"pose graph SE3 " + std::to_string(poses) + " + " + std::to_string(loops) + " loops",
              std::vector<int>(poses, 6), {}, 6};
  for (int i = 0; i + 1 < poses; ++i) s.edges.emplace_back(i, i + 1);
  std::uniform_int_distribution<int> pose(0, poses - 1);
  for (int l = 0; l < loops; ++l) {
    const int a = pose(rng), b = pose(rng);
    if (std::abs(a - b) > 1) s.edges.emplace_back(a, b);
  }
  return s;
}

Structure grid(int side) {
  Structure s{"grid SE2 " + std::to_string(side) + "x" + std::to_string(side),
              std::vector<int>(side * side, 3), {}, 3};
  for (int r = 0; r < side; ++r)
    for (int c = 0; c < side; ++c) {
      if (c + 1 < side) s.edges.emplace_back(r * side + c, r * side + c + 1);
      if (r + 1 < side) s.edges.emplace_back(r * side + c, (r + 1) * side + c);
    }
  return s;
}

// Cameras (9) first, then points (3), each point seen by `views` random cameras.
Structure bundle(int cameras, int points, int views, std::mt19937_64& rng) {
  Structure s{"BA " + std::to_string(cameras) + " cams, " + std::to_string(points) + " pts",
              std::vector<int>(cameras, 9), {}, 2, cameras};
  s.sizes.resize(cameras + points, 3);
  std::uniform_int_distribution<int> camera(0, cameras - 1);
  for (int p = 0; p < points; ++p)
    for (int v = 0; v < views; ++v) s.edges.emplace_back(camera(rng), cameras + p);
  return s;
}

// A video sequence: cameras along a path, each point seen by `views` consecutive cameras, so
// that the reduced camera system is banded (sparse) however many cameras there are.
Structure bundle_sequence(int cameras, int points, int views) {
  Structure s{"BA sequence " + std::to_string(cameras) + " cams, " + std::to_string(points) +
                  " pts",
              std::vector<int>(cameras, 9), {}, 2, cameras};
  s.sizes.resize(cameras + points, 3);
  for (int p = 0; p < points; ++p) {
    const int first = static_cast<int>(int64_t{p} * (cameras - views) / points);
    for (int v = 0; v < views; ++v) s.edges.emplace_back(first + v, cameras + p);
  }
  return s;
}

// H = JᵀJ of random edge Jacobians and a 2·I-ish prior per variable.
void fill(const Structure& s, BlockSparseSymmetric& H, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  H.set_zero();
  auto random_block = [&](int rows, int cols) {
    std::vector<double> m(rows * cols);
    for (double& v : m) v = u(rng);
    return m;
  };
  auto add_product = [&](int i, int j, const std::vector<double>& Ji,
                         const std::vector<double>& Jj, int rows) {
    const int ni = s.sizes[i], nj = s.sizes[j];
    std::vector<double> block(ni * nj, 0.0);
    for (int a = 0; a < ni; ++a)
      for (int b = 0; b < nj; ++b)
        for (int r = 0; r < rows; ++r) block[a * nj + b] += Ji[r * ni + a] * Jj[r * nj + b];
    H.add_to_block(i, j, block.data());
  };
  for (int i = 0; i < H.num_blocks(); ++i) {
    std::vector<double> prior = random_block(s.sizes[i], s.sizes[i]);
    for (int a = 0; a < s.sizes[i]; ++a) prior[a * s.sizes[i] + a] += 2;
    add_product(i, i, prior, prior, s.sizes[i]);
  }
  for (const auto& [i, j] : s.edges) {
    const std::vector<double> Ji = random_block(s.edge_rows, s.sizes[i]);
    const std::vector<double> Jj = random_block(s.edge_rows, s.sizes[j]);
    add_product(i, i, Ji, Ji, s.edge_rows);
    add_product(j, j, Jj, Jj, s.edge_rows);
    add_product(i, j, Ji, Jj, s.edge_rows);
  }
}

void run(const Structure& s, int repeats, std::mt19937_64& rng) {
  BlockSparseSymmetric H(s.sizes, s.edges);
  fill(s, H, rng);
  std::vector<double> b(H.dim()), x(H.dim()), shift(H.dim());
  std::uniform_real_distribution<double> u(-1, 1);
  for (double& v : b) v = u(rng);
  H.diagonal(shift.data());
  for (double& v : shift) v *= 1e-4;  // LM damping λ·diag(H)

  using Factory = std::function<std::unique_ptr<LinearSolver>()>;
  std::vector<std::pair<std::string, Factory>> solvers;
  if (s.first_point >= 0) {
    auto schur = [&](LinearSolverType type) {
      return [&, type] { return make_schur_solver(type, H.shared_pattern(), s.first_point); };
    };
    if (s.first_point * 9 <= 3000) solvers.emplace_back("dense_schur", schur(LinearSolverType::DenseSchur));
    solvers.emplace_back("sparse_schur", schur(LinearSolverType::SparseSchur));
    solvers.emplace_back("sparse_schur, 2 threads", schur(LinearSolverType::SparseSchur));
    solvers.emplace_back("iterative_schur (tol 1e-6)", schur(LinearSolverType::IterativeSchur));
    solvers.emplace_back("iterative_schur (tol 1e-6), 2 threads",
                         schur(LinearSolverType::IterativeSchur));
  }
  if (H.dim() <= 3000)
    solvers.emplace_back("dense_cholesky", [&] { return make_linear_solver(LinearSolverType::DenseCholesky, H.shared_pattern()); });
  if (cholmod_available()) {
    solvers.emplace_back("cholmod (block AMD)", [&] { return std::make_unique<CholmodCholesky>(H.shared_pattern()); });
    solvers.emplace_back("cholmod (scalar AMD)", [&] {
      return std::make_unique<CholmodCholesky>(H.shared_pattern(), CholmodCholesky::Ordering::ScalarAmd);
    });
  }
  solvers.emplace_back("eigen_sparse_cholesky", [&] { return make_linear_solver(LinearSolverType::EigenSparseCholesky, H.shared_pattern()); });
  solvers.emplace_back("cg (tol 1e-6)", [&] { return make_linear_solver(LinearSolverType::ConjugateGradient, H.shared_pattern()); });

  for (const auto& [label, make] : solvers) {
    LinearSolverOptions options;  // cg_relative_tolerance 1e-6
    if (label.find("2 threads") != std::string::npos) options.num_threads = 2;
    std::vector<double> analysis, solve;
    LinearSolveSummary summary;
    std::string factor;
    for (int r = 0; r < repeats; ++r) {
      const auto start = Clock::now();
      std::unique_ptr<LinearSolver> solver = make();
      analysis.push_back(seconds_since(start));
      summary = solver->solve(H, shift.data(), b.data(), x.data(), options);
      solve.push_back(summary.seconds);
      if (auto* c = dynamic_cast<CholmodCholesky*>(solver.get()))
        factor = std::to_string(static_cast<long long>(c->factor_nonzeros()));
    }
    std::printf("| %s | %lld | %lld | %s | %.2f | %.2f | %s | %s |\n", s.name.c_str(),
                static_cast<long long>(H.dim()),
                static_cast<long long>(H.pattern().num_stored_blocks()), label.c_str(),
                1e3 * median(analysis), 1e3 * median(solve),
                summary.ok ? std::to_string(summary.iterations).c_str() : summary.message.c_str(),
                factor.empty() ? "" : factor.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 5;
  bool small = false;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--repeats" && a + 1 < argc) repeats = std::max(1, std::stoi(argv[++a]));
    else if (arg == "--small") small = true;
    else {
      std::fprintf(stderr, "usage: lsjit_bench_linear [--repeats N] [--small]\n");
      return 2;
    }
  }
  std::mt19937_64 rng(42);
  std::printf("| problem | dim | stored blocks | solver | analysis ms | solve ms | iterations | nnz(L) |\n");
  std::printf("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |\n");
  run(pose_graph(small ? 100 : 400, small ? 20 : 100, rng), repeats, rng);
  run(pose_graph(small ? 1000 : 5000, small ? 200 : 1000, rng), repeats, rng);
  run(grid(small ? 20 : 100), repeats, rng);
  run(bundle(small ? 10 : 50, small ? 500 : 5000, 4, rng), repeats, rng);
  run(bundle(small ? 50 : 500, small ? 5000 : 50000, 5, rng), repeats, rng);
  run(bundle_sequence(small ? 200 : 2000, small ? 10000 : 100000, 6), repeats, rng);
  return 0;
}
