// Linear-solver benchmark: for synthetic normal equations shaped like lsjit's problems (a
// 3D pose graph, a 2D grid, bundle adjustment with and without the Schur complement), the
// time of each solver's analysis (construction: ordering, symbolic factorization) and of one
// solve() with an LM-style damping, median over repeats. Prints a Markdown table
// (docs/linear_solvers.md).
//
//   lsjit_bench_linear [--repeats N] [--small]
//   lsjit_bench_linear --factor [--repeats N] [--threads N] [--only NAME] [--g2o FILE]
//     (--threads: LinearSolverOptions::num_threads; --only: the matrices whose name has NAME;
//     --g2o: that graph's structure alone, e.g. one from `lsjit generate pose-graph`, with the
//     Automatic ordering only)
//   lsjit_bench_linear --panels [--repeats N]
// --panels times one supernode panel's factorization (supernodal_kernels.h, the host's
// instruction set) against OpenBLAS' dpotrf + dtrsm on the same random panels, which is
// what factor_panel chooses between by size; medians over N (at least 41) calls.
// --factor compares the sparse Cholesky factorizations alone (docs/benchmarks.md): the
// supernodal Cholesky with each ordering against CHOLMOD (when lsjit was built with
// LSJIT_WITH_CHOLMOD) on the same block-AMD ordering, on sphere2500 and M3500 (the edge
// structure of $LSJIT_SHARED_DATA_DIR/pose_graph/*.g2o, else synthetic look-alikes), intel
// and smallGrid3D (when present) and a random SE3 graph: analysis time, median solve() time
// over N calls on one object, and GFlop/s of the factorization's predicted flops per solve.
// The values are H = JᵀJ of a random Jacobian plus a prior per variable: the timings depend
// on the structure (and, for CG, on the conditioning, which here is benign).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "lsjit/common/clock.h"
#include "lsjit/runtime/io/g2o.h"
#include "lsjit/runtime/solve/linear/cholmod_cholesky.h"
#include "lsjit/runtime/solve/linear/linear_solver.h"
#include "lsjit/runtime/solve/linear/schur_solver.h"
#include "lsjit/runtime/solve/linear/supernodal_cholesky.h"
#include "lsjit/runtime/solve/linear/supernodal_kernels.h"
#include "bench_main.h"
#include "bench_stats.h"
#include <cstdlib>
#include <filesystem>
#include <map>

namespace {

using lsjit::bench::median;
using lsjit::Clock;
using lsjit::seconds_since;

using namespace lsjit::linear;
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
    auto schur = [&](lsjit::LinearSolver type) {
      return [&, type] { return make_schur_solver(type, H.shared_pattern(), s.first_point); };
    };
    if (s.first_point * 9 <= 3000) solvers.emplace_back("dense_schur", schur(lsjit::LinearSolver::DenseSchur));
    solvers.emplace_back("sparse_schur", schur(lsjit::LinearSolver::SparseSchur));
    solvers.emplace_back("sparse_schur, 2 threads", schur(lsjit::LinearSolver::SparseSchur));
    solvers.emplace_back("iterative_schur (tol 1e-6)", schur(lsjit::LinearSolver::IterativeSchur));
    solvers.emplace_back("iterative_schur (tol 1e-6), 2 threads",
                         schur(lsjit::LinearSolver::IterativeSchur));
  }
  if (H.dim() <= 3000)
    solvers.emplace_back("dense_cholesky", [&] { return make_linear_solver(lsjit::LinearSolver::DenseCholesky, H.shared_pattern()); });
  if (cholmod_available()) {
    solvers.emplace_back("cholmod (block AMD)", [&] { return std::make_unique<CholmodCholesky>(H.shared_pattern()); });
    solvers.emplace_back("cholmod (scalar AMD)", [&] {
      return std::make_unique<CholmodCholesky>(H.shared_pattern(), CholmodCholesky::Ordering::ScalarAmd);
    });
  }
  solvers.emplace_back("supernodal_cholesky", [&] { return make_linear_solver(lsjit::LinearSolver::SparseCholesky, H.shared_pattern()); });
  solvers.emplace_back("eigen_sparse_cholesky", [&] { return make_linear_solver(lsjit::LinearSolver::EigenSparseCholesky, H.shared_pattern()); });
  solvers.emplace_back("cg (tol 1e-6)", [&] { return make_linear_solver(lsjit::LinearSolver::ConjugateGradient, H.shared_pattern()); });

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
      if (auto* c = dynamic_cast<SupernodalCholesky*>(solver.get()))
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

// The edge structure of a g2o file (poses numbered in file order), or nullopt if absent:
// `file` under the shared data's pose_graph/, or a path of its own when `as_path`.
std::optional<Structure> g2o_structure(const std::string& file, const std::string& name, bool as_path = false) {
  const char* dir = std::getenv("LSJIT_SHARED_DATA_DIR");
  const std::filesystem::path path =
      as_path ? std::filesystem::path(file)
              : std::filesystem::path(dir != nullptr ? dir : "/work/shared/data") / "pose_graph" / file;
  if (!std::filesystem::exists(path)) return std::nullopt;
  const lsjit::io::PoseGraph g = lsjit::io::read_g2o(path);
  std::map<int64_t, int> index;
  for (size_t k = 0; k < g.vertex_ids.size(); ++k) index[g.vertex_ids[k]] = static_cast<int>(k);
  const int block = g.edges3.empty() ? 3 : 6;
  Structure s{name, std::vector<int>(g.vertex_ids.size(), block), {}, block};
  for (const auto& e : g.edges2) s.edges.emplace_back(index.at(e.from), index.at(e.to));
  for (const auto& e : g.edges3) s.edges.emplace_back(index.at(e.from), index.at(e.to));
  return s;
}

// Loop closures between nearby poses of a path (the shape of sphere2500 and M3500).
Structure local_loops(const std::string& name, int poses, int loops, int block, int reach,
                      std::mt19937_64& rng) {
  Structure s{name, std::vector<int>(poses, block), {}, block};
  for (int i = 0; i + 1 < poses; ++i) s.edges.emplace_back(i, i + 1);
  std::uniform_int_distribution<int> pose(0, poses - 1), offset(2, reach);
  for (int l = 0; l < loops; ++l) {
    const int a = pose(rng), b = a - offset(rng);
    if (b >= 0) s.edges.emplace_back(b, a);
  }
  return s;
}

// Matrices whose name does not contain this are skipped (--only).
std::string only_matrices;
// --g2o: the Automatic ordering alone (a forced AMD on 10^5 poses takes minutes to factor).
bool automatic_only = false;

void run_factor(const Structure& s, int repeats, int threads, std::mt19937_64& rng) {
  if (s.name.find(only_matrices) == std::string::npos) return;
  BlockSparseSymmetric H(s.sizes, s.edges);
  fill(s, H, rng);
  std::vector<double> b(H.dim(), 1.0), x(H.dim()), shift(H.dim());
  H.diagonal(shift.data());
  for (double& v : shift) v *= 1e-4;
  struct Result {
    double analysis = 0, solve = 0, flops = 0;
    int refinements = 0;  // of the last solve, when mixed
    bool fell_back = false;
  };
  auto measure = [&](auto make, auto flops, bool mixed = false) {
    Result r;
    const auto start = Clock::now();
    auto solver = make();
    r.analysis = seconds_since(start);
    r.flops = flops(*solver);
    std::vector<double> times;
    for (int k = 0; k < repeats + 1; ++k) {
      LinearSolverOptions options;
      options.num_threads = threads;
      options.mixed_precision = mixed ? MixedPrecision::Always : MixedPrecision::Never;
      const LinearSolveSummary summary = solver->solve(H, shift.data(), b.data(), x.data(), options);
      if (!summary.ok) std::fprintf(stderr, "%s: %s\n", s.name.c_str(), summary.message.c_str());
      r.refinements = summary.mixed_precision ? summary.iterations : 0;
      r.fell_back = r.fell_back || summary.mixed_precision_fallback;
      if (k > 0) times.push_back(summary.seconds);  // the first call warms caches and pages
    }
    r.solve = median(times);
    return r;
  };
  auto print = [&](const std::string& label, const Result& r, const Result* reference) {
    std::printf("| %s | %lld | %s | %.1f | %.1f | %.2f | %.2f | %s |\n", s.name.c_str(),
                static_cast<long long>(H.dim()), label.c_str(), 1e3 * r.analysis, r.flops / 1e6,
                1e3 * r.solve, r.flops / r.solve / 1e9,
                reference ? (std::to_string(reference->solve / r.solve).substr(0, 4) + "x").c_str()
                          : "");
  };
  std::optional<Result> cholmod;
  if (cholmod_available()) {
    cholmod = measure([&] { return std::make_unique<CholmodCholesky>(H.shared_pattern()); },
                      [](const CholmodCholesky& c) { return c.factorization_flops(); });
    print("cholmod (block AMD)", *cholmod, nullptr);
  }
  for (SupernodalOrdering o : {SupernodalOrdering::Amd, SupernodalOrdering::NestedDissection,
                               SupernodalOrdering::Automatic}) {
    if (automatic_only && o != SupernodalOrdering::Automatic) continue;
    std::string chosen, split_info;  // split: the two-thread speed-up its split predicts
    const Result r = measure(
        [&] {
          auto solver = std::make_unique<SupernodalCholesky>(H.shared_pattern(), o);
          chosen = supernodal_ordering_name(solver->ordering());
          split_info = ", " + std::to_string(solver->num_supernodes()) + " supernodes" +
                       (solver->split() == nullptr
                           ? ", not split"
                           : ", split " + std::to_string(solver->split()->predicted_speedup).substr(0, 4) + "x");
          return solver;
        },
        [](const SupernodalCholesky& c) { return c.factorization_flops(); });
    print(std::string("supernodal (") + supernodal_ordering_name(o) +
              (o == SupernodalOrdering::Automatic ? ": " + chosen : std::string()) + split_info + ")",
          r, cholmod ? &*cholmod : nullptr);
  }
  // Mixed precision (supernodal_cholesky.h) on the automatic ordering: the float
  // factorization, its refinement steps in double, against the double solve above.
  const Result mixed = measure(
      [&] { return std::make_unique<SupernodalCholesky>(H.shared_pattern(), SupernodalOrdering::Automatic); },
      [](const SupernodalCholesky& c) { return c.factorization_flops(); }, true);
  print("supernodal (automatic, mixed precision: " +
            (mixed.fell_back ? std::string("fell back to double") : std::to_string(mixed.refinements) + " refinements") + ")",
        mixed, cholmod ? &*cholmod : nullptr);
}

}  // namespace

// OpenBLAS, as runtime/solve/linear/supernodal_kernels.cpp links it.
extern "C" {
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void dtrsm_(const char* side, const char* uplo, const char* trans, const char* diag, const int* m,
            const int* n, const double* alpha, const double* a, const int* lda, double* b,
            const int* ldb);
}

namespace {

void run_panels(int repeats) {
  using namespace lsjit::linear::supernodal;
  init_blas();
  const int64_t shapes[][2] = {{24, 100}, {48, 198}, {162, 162}, {100, 300},
                               {300, 1500}, {500, 2000}, {800, 2400}};
  std::printf("| columns x rows | OpenBLAS potrf + trsm µs | ours µs | ours / OpenBLAS |\n");
  std::printf("| --- | ---: | ---: | ---: |\n");
  std::mt19937_64 rng(3);
  for (const auto& [n, ld] : shapes) {
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> original(n * ld + kProductRowPad), a;
    for (double& v : original) v = u(rng);
    for (int64_t c = 0; c < n; ++c) original[c * ld + c] = 3.0 * static_cast<double>(n);
    // Each call on a fresh copy; the copy alone is timed and subtracted.
    auto time = [&](auto&& factor) {
      std::vector<double> t;
      for (int r = 0; r < std::max(repeats, 41); ++r) {
        const auto start = Clock::now();
        a = original;
        factor();
        t.push_back(std::chrono::duration<double>(Clock::now() - start).count());
      }
      return median(t);
    };
    const int n32 = static_cast<int>(n), ld32 = static_cast<int>(ld), m32 = static_cast<int>(ld - n);
    const double copy = time([] {});
    const double blas = time([&] {
      int info = 0;
      const double one = 1;
      dpotrf_("L", &n32, a.data(), &ld32, &info);
      if (m32 > 0) dtrsm_("R", "L", "T", "N", &m32, &n32, &one, a.data(), &ld32, a.data() + n, &ld32);
    }) - copy;
    const double ours = time([&] { host_kernels<double>().factor_blocked(a.data(), n, ld); }) - copy;
    std::printf("| %lld x %lld | %.1f | %.1f | %.2f |\n", static_cast<long long>(n),
                static_cast<long long>(ld), 1e6 * blas, 1e6 * ours, ours / blas);
  }
}

}  // namespace

static int run_main(int argc, char** argv) {
  int repeats = 5, threads = 1;
  bool small = false, factor = false, panels = false;
  std::string g2o_file;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--repeats" && a + 1 < argc) repeats = std::max(1, std::stoi(argv[++a]));
    else if (arg == "--small") small = true;
    else if (arg == "--factor") factor = true;
    else if (arg == "--panels") panels = true;
    else if (arg == "--threads" && a + 1 < argc) threads = std::max(0, std::stoi(argv[++a]));
    else if (arg == "--only" && a + 1 < argc) only_matrices = argv[++a];
    else if (arg == "--g2o" && a + 1 < argc) g2o_file = argv[++a];
    else {
      std::fprintf(stderr, "usage: lsjit_bench_linear [--repeats N] [--small] [--factor [--threads N] [--only NAME] [--g2o FILE]] [--panels]\n");
      return 2;
    }
  }
  if (panels) {
    run_panels(repeats);
    return 0;
  }
  std::mt19937_64 rng(42);
  if (factor) {
    std::printf("| matrix | dim | solver | analysis ms | MFlop | solve ms | GFlop/s | vs cholmod |\n");
    std::printf("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n");
    if (!g2o_file.empty()) {
      automatic_only = true;
      const std::optional<Structure> s = g2o_structure(g2o_file, g2o_file, /*as_path=*/true);
      if (!s) throw std::runtime_error(g2o_file + " does not exist");
      run_factor(*s, repeats, threads, rng);
      return 0;
    }
    run_factor(g2o_structure("sphere2500.g2o", "sphere2500 (g2o)")
                   .value_or(local_loops("sphere2500-like", 2500, 2450, 6, 60, rng)),
               repeats, threads, rng);
    run_factor(g2o_structure("M3500.g2o", "M3500 (g2o)")
                   .value_or(local_loops("M3500-like", 3500, 1950, 3, 60, rng)),
               repeats, threads, rng);
    // The small graphs whose solves are dominated by per-supernode work, not flops.
    for (const char* file : {"intel.g2o", "smallGrid3D.g2o"})
      if (const std::optional<Structure> s = g2o_structure(file, std::string(file, std::strlen(file) - 4) + " (g2o)"))
        run_factor(*s, repeats, threads, rng);
    run_factor(pose_graph(5000, 1000, rng), repeats, threads, rng);
    return 0;
  }
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

int main(int argc, char** argv) {
  lsjit::linear::supernodal::prefer_avx512_blas();  // as the CLI does, before any thread
  return lsjit::bench::report_errors("lsjit_bench_linear", [&] { return run_main(argc, argv); });
}
