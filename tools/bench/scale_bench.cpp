// Scale benchmark (issue 18, docs/benchmarks-history.md "Large pose graphs"): where the sparse
// Cholesky's symbolic analysis spends its time, and what factor it predicts, on the block
// pattern of g2o files (lsjit generate pose-graph writes them):
//
//   lsjit_bench_scale [--repeats N] FILE.g2o...
//   lsjit_bench_scale --cg [--radius R] FILE.g2o...
//
// For each file and each ordering (AMD, METIS nested dissection, automatic = the one with
// fewer predicted flops): the median over N analyses of each phase's time, the predicted
// nonzeros of L, the flops of one factorization, and the panels' memory (stored entries ·
// 8 bytes). Every vertex is a block (the solver holds one constant: one block fewer).
//
// --cg: the iterative solvers against the direct one on the file's real Gauss-Newton system
// at its initial values (vertex 0 held constant, as lsjit solve does), with LM's damping
// diag(H)/R (R = 1e4, Levenberg-Marquardt's first radius, unless --radius): analysis time,
// solve time, CG iterations to cg_relative_tolerance 1e-6 (at most 2000), the relative
// error of the step against the direct solve, and the factor's memory (the preconditioner's
// for subgraph_cg, with its cluster size).
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <chrono>
#include <cmath>
#include <functional>
#include <memory>

#include "lsjit/runtime/solve/linear/supernodal_kernels.h"
#include "lsjit/common/clock.h"
#include "lsjit/lsjit.h"
#include "lsjit/runtime/io/g2o.h"
#include "lsjit/runtime/pose_graph_problem.h"
#include "lsjit/runtime/solve/linear/block_sparse.h"
#include "lsjit/runtime/solve/linear/subgraph_cg.h"
#include "lsjit/runtime/solve/linear/supernodal_analysis.h"
#include "lsjit/runtime/solve/linear/supernodal_cholesky.h"
#include "bench_main.h"
#include "bench_stats.h"

namespace {

using lsjit::bench::median;
using lsjit::Clock;
using lsjit::seconds_since;

using namespace lsjit::linear;

BlockPattern g2o_pattern(const std::string& path) {
  const lsjit::io::PoseGraph g = lsjit::io::read_g2o(path);
  std::map<int64_t, int> index;
  for (size_t k = 0; k < g.vertex_ids.size(); ++k) index[g.vertex_ids[k]] = static_cast<int>(k);
  std::vector<std::pair<int, int>> pairs;
  for (const auto& e : g.edges2) pairs.emplace_back(index.at(e.from), index.at(e.to));
  for (const auto& e : g.edges3) pairs.emplace_back(index.at(e.from), index.at(e.to));
  return BlockPattern(std::vector<int>(g.vertex_ids.size(), g.dimension == 2 ? 3 : 6), pairs);
}

void analyze(const std::string& name, const BlockPattern& p, int repeats) {
  for (SupernodalOrdering o : {SupernodalOrdering::Amd, SupernodalOrdering::NestedDissection,
                               SupernodalOrdering::Automatic}) {
    std::vector<double> graph, amd, nd, symbolic, layout, total;
    SupernodalAnalysis a;
    for (int r = 0; r < repeats; ++r) {
      a = analyze_supernodal(p, o);
      const SupernodalAnalysis::Seconds& s = a.seconds;
      graph.push_back(s.graph);
      amd.push_back(s.amd);
      nd.push_back(s.nested_dissection);
      symbolic.push_back(s.symbolic);
      layout.push_back(s.layout);
      total.push_back(s.graph + s.amd + s.nested_dissection + s.symbolic + s.layout);
    }
    std::string label = supernodal_ordering_name(o);
    if (o == SupernodalOrdering::Automatic) label += std::string(": ") + supernodal_ordering_name(a.ordering);
    // Milliseconds to two decimals below 10 (the shared graphs' phases), whole above.
    auto ms = [](const std::vector<double>& seconds) {
      char b[32];
      const double v = 1e3 * median(seconds);
      std::snprintf(b, sizeof b, v < 10 ? "%.2f" : "%.0f", v);
      return std::string(b);
    };
    std::printf("| %s | %lld | %s | %s | %s | %s | %s | %s | %s | %.1f | %.1f | %.0f |\n",
                name.c_str(), static_cast<long long>(p.dim()), label.c_str(), ms(graph).c_str(),
                ms(amd).c_str(), ms(nd).c_str(), ms(symbolic).c_str(), ms(layout).c_str(),
                ms(total).c_str(), a.factor_nonzeros / 1e6, a.factorization_flops / 1e9,
                a.stored_entries * 8 / 1e6);
  }
}

void compare_cg(const std::string& file, double radius) {
  const std::string name = file.substr(file.find_last_of('/') + 1);
  const lsjit::PoseGraphProblem problem = lsjit::make_pose_graph_problem(lsjit::io::read_g2o(file));
  const lsjit::AnalyzedProblem analyzed = problem.problem.analyze();
  std::vector<double> gradient(analyzed.tangent_dim());
  const BlockSparseSymmetric H = analyzed.gauss_newton_matrix(problem.initial, gradient.data());
  const int64_t n = H.dim();
  std::vector<double> shift(n), b(n), direct(n), x(n);
  H.diagonal(shift.data());
  for (double& d : shift) d = std::clamp(d, 1e-6, 1e32) / radius;
  for (int64_t r = 0; r < n; ++r) b[r] = -gradient[r];
  LinearSolverOptions options;
  options.max_cg_iterations = 2000;
  auto error = [&] {
    double diff = 0, norm = 0;
    for (int64_t r = 0; r < n; ++r) diff += (x[r] - direct[r]) * (x[r] - direct[r]), norm += direct[r] * direct[r];
    return std::sqrt(diff / norm);
  };
  using Factory = std::function<std::unique_ptr<LinearSolver>()>;
  std::vector<std::pair<std::string, Factory>> solvers{
      {"sparse_cholesky", [&] { return make_linear_solver(lsjit::LinearSolver::SparseCholesky, H.shared_pattern()); }},
      {"cg (block Jacobi)", [&] { return make_linear_solver(lsjit::LinearSolver::ConjugateGradient, H.shared_pattern()); }}};
  for (int clusters : {0, 16, 64, 256})
    solvers.emplace_back("subgraph_cg, clusters " + std::to_string(clusters),
                         [&, clusters] { return std::make_unique<SubgraphCg>(H.shared_pattern(), clusters); });
  for (const auto& [label, make] : solvers) {
    const auto start = std::chrono::steady_clock::now();
    std::unique_ptr<LinearSolver> solver = make();
    const double analysis = seconds_since(start);
    const LinearSolveSummary s = solver->solve(H, shift.data(), b.data(), x.data(), options);
    if (label == "sparse_cholesky") direct = x;
    double factor_mb = 0;
    if (auto* c = dynamic_cast<SupernodalCholesky*>(solver.get())) factor_mb = c->analysis().stored_entries * 8 / 1e6;
    if (auto* c = dynamic_cast<SubgraphCg*>(solver.get()))
      factor_mb = c->preconditioner().analysis().stored_entries * 8 / 1e6;
    std::printf("| %s | %lld | %g | %s | %.0f | %.0f | %s | %.1e | %.0f |\n", name.c_str(),
                static_cast<long long>(n), radius, label.c_str(), 1e3 * analysis, 1e3 * s.seconds,
                s.ok ? std::to_string(s.iterations).c_str() : s.message.c_str(), error(), factor_mb);
  }
}

}  // namespace

static int run_main(int argc, char** argv) {
  int repeats = 3;
  bool cg = false;
  double radius = 1e4;
  std::vector<std::string> files;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--repeats" && a + 1 < argc) repeats = std::max(1, std::stoi(argv[++a]));
    else if (arg == "--cg") cg = true;
    else if (arg == "--radius" && a + 1 < argc) radius = std::stod(argv[++a]);
    else if (!arg.empty() && arg[0] != '-') files.push_back(arg);
    else {
      std::fprintf(stderr, "usage: lsjit_bench_scale [--repeats N] [--cg [--radius R]] FILE.g2o...\n");
      return 2;
    }
  }
  if (cg) {
    std::printf("| file | dim | radius | solver | analysis ms | solve ms | CG iterations | step error | factor MB |\n");
    std::printf("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (const std::string& file : files) compare_cg(file, radius);
    return 0;
  }
  std::printf("| file | dim | ordering | graph ms | AMD ms | ND ms | symbolic ms | layout ms | "
              "total ms | nnz(L) M | GFlop | panels MB |\n");
  std::printf("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const std::string& file : files) {
    const std::string name = file.substr(file.find_last_of('/') + 1);
    analyze(name, g2o_pattern(file), repeats);
  }
  return 0;
}

int main(int argc, char** argv) {
  lsjit::linear::supernodal::prefer_avx512_blas();  // as the CLI does, before any thread
  return lsjit::bench::report_errors("lsjit_bench_scale", [&] { return run_main(argc, argv); });
}
