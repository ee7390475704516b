// End-to-end pose-graph benchmark (issue 4): lsjit vs Ceres 2.1 on g2o files, one thread
// each, same residuals (docs/architecture.md, "Conventions"; Ceres' functors in
// ceres_pose_graph_costs.h).
//
//   lsjit_bench_pose_graph [--repeats N] [--data DIR] [--files a,b,...]
//     DIR: ../shared/data by default, files read from DIR/pose_graph/NAME.g2o
//
// Every solve runs in its own process (this program re-executed with --child), so that its
// peak memory (VmHWM, read by the child itself) is that solver's alone and each lsjit run
// starts without kernels in memory. Per repeat and file:
//   lsjit cold  a fresh, empty disk cache directory: trace and compile every kernel
//   lsjit warm  a second process on that directory: kernels loaded from disk
//   Ceres       LEVENBERG_MARQUARDT, SPARSE_NORMAL_CHOLESKY on SuiteSparse, defaults
//   Ceres 1e8   the same with lsjit's pose-graph first radius (pose_graph_problem.h), so
//               that the ratio at equal settings is beside the ratio of the defaults
//   baseline    (once per file) the process plus read_g2o only, the floor of both peaks
//   GTSAM       where lsjit_bench_gtsam was built (tools/bench/gtsam/build_gtsam.sh):
//               LevenbergMarquardtOptimizer at its defaults, its solution evaluated in
//               lsjit's residual convention so that the final costs compare
// CHOLMOD's supernodal factorization (Ceres' linear solver here; lsjit's solvers do not use
// CHOLMOD, its sparse Cholesky is its own) opens an OpenMP team of 4 threads whatever
// OMP_NUM_THREADS says; the children get OMP_THREAD_LIMIT=1 so that Ceres really runs on
// one thread, unless OMP_THREAD_LIMIT is already set.
// Tables report medians over repeats, column by column. Before the tables the run checks
// Ceres' final costs against reference values and both solvers' final costs against each
// other, and says so when they disagree. lsjit runs as `lsjit solve FILE.g2o` does: with
// pose_graph_solver_options() from the start --init auto chooses (pose_graph_start.h), whose
// time is part of its total.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bench_main.h"
#include "ceres_pose_graph.h"
#include "ceres_pose_graph_input.h"
#include "child_process.h"
#include "lsjit/runtime/solve/linear/supernodal_kernels.h"
#include "lsjit/compiler/cache/kernel_cache.h"
#include "lsjit/runtime/io/g2o.h"
#include "lsjit/runtime/lie/se2.h"
#include "lsjit/runtime/lie/se3.h"
#include "lsjit/runtime/pose_graph_problem.h"
#include "lsjit/runtime/pose_graph_start.h"

namespace {

using lsjit::Clock;
using lsjit::seconds_since;

namespace fs = std::filesystem;
using lsjit::bench::emit;
using lsjit::bench::Record;

// ---- child side: one solve, measurements as "key value" lines on stdout ----

double peak_rss_mb() { return lsjit::bench::status_mb("VmHWM"); }

lsjit::io::PoseGraph read_timed(const fs::path& file) {
  const auto start = Clock::now();
  lsjit::io::PoseGraph g = lsjit::io::read_g2o(file);
  emit("read_s", seconds_since(start));
  emit("poses", static_cast<double>(g.num_vertices()));
  emit("edges", static_cast<double>(g.num_edges()));
  return g;
}

void child_lsjit(const fs::path& file, const fs::path& cache_dir) {
  lsjit::compiler::KernelCache::Options cache_options;
  cache_options.directory = cache_dir;
  cache_options.quiet = true;
  // As a user's process: tiered (tier 0 while LLVM compiles) unless LSJIT_TIER says otherwise.
  const auto environment = lsjit::compiler::KernelCache::Options::from_environment();
  cache_options.tiering = environment.tiering;
  cache_options.tier0_code = environment.tier0_code;
  lsjit::compiler::KernelCache cache(cache_options);
  lsjit::io::PoseGraph graph = read_timed(file);
  const auto start = Clock::now();
  std::optional<lsjit::PoseGraphStartChoice> choice = lsjit::chordal_if_no_vertices(graph);
  lsjit::PoseGraphProblem p = lsjit::make_pose_graph_problem(graph);
  emit("build_s", seconds_since(start));
  lsjit::AnalyzeOptions analyze_options;
  analyze_options.cache = &cache;
  const lsjit::AnalyzedProblem analyzed = p.problem.analyze(analyze_options);
  // As `lsjit solve` does by default (--init auto).
  if (!choice) choice = lsjit::start_pose_graph(graph, p, analyzed, lsjit::PoseGraphStart::Auto);
  lsjit::SolveSummary s = analyzed.solve(p.initial, lsjit::pose_graph_solver_options()).summary;
  s.record_initialization(choice->used, choice->seconds, choice->reason);
  if (!s.usable()) throw std::runtime_error("lsjit: " + s.message);
  emit("chordal_start", choice->used == "chordal");
  emit("initialization_s", s.initialization_s);
  emit("trace_s", s.trace_s);
  emit("compile_s", s.compile_s);
  emit("analyze_s", s.analyze_s);
  emit("residual_s", s.residual_s);
  emit("jacobian_s", s.jacobian_s);
  emit("linear_solver_s", s.linear_solver_s);
  emit("setup_s", s.setup_s);
  emit("solve_s", s.solve_s);
  emit("total_s", s.total_s);
  emit("iterations", s.iterations);
  // Factorizations: one per step's linear solve (sparse or dense Cholesky; a mixed-precision
  // solve's linear_iterations are its refinement steps, on one factor), plus one per
  // mixed-precision solve that fell back to double.
  int linear_solves = s.mixed_precision_fallbacks;
  for (const lsjit::IterationSummary& it : s.per_iteration)
    if (it.iteration > 0 && it.linear_iterations > 0) ++linear_solves;
  emit("linear_solves", linear_solves);
  emit("mixed_precision_solves", s.mixed_precision_solves);
  emit("initial_cost", s.initial_cost);
  emit("final_cost", s.final_cost);
  emit("converged", lsjit::converged(s.termination));
  // Cold: from analyze() to the start of the first LM iteration (issue 20: <= 15 ms): the
  // set-up and the initial evaluation (iteration 0); and to the end of the first iteration.
  const auto& its = s.per_iteration;
  emit("to_first_iteration_s", lsjit::bench::to_first_iteration_s(s));
  emit("first_iteration_s", s.analyze_s + (its.size() > 1 ? its[1].cumulative_s : its.empty() ? 0 : its[0].cumulative_s));
  cache.wait_for_background();  // tiered compiles finish after the solve; count them
  emit("compiles", static_cast<double>(cache.stats().compiles));
  emit("cache_hits", static_cast<double>(s.cache_hits));
  emit("peak_mb", peak_rss_mb());
}

void child_ceres(const fs::path& file, double initial_trust_region_radius) {
  const lsjit::io::PoseGraph g = read_timed(file);
  lsjit::bench::CeresPoseGraphInput in = lsjit::bench::ceres_pose_graph_input(g);
  in.initial_trust_region_radius = initial_trust_region_radius;
  const lsjit::bench::CeresPoseGraphResult r = lsjit::bench::solve_ceres_pose_graph(in);
  emit("build_s", r.build_s);
  emit("preprocessor_s", r.preprocessor_s);
  emit("residual_s", r.residual_s);
  emit("jacobian_s", r.jacobian_s);
  emit("linear_solver_s", r.linear_solver_s);
  emit("minimizer_s", r.minimizer_s);
  emit("total_s", r.total_s);
  emit("iterations", r.iterations);
  emit("linear_solves", r.linear_solves);
  emit("initial_cost", r.initial_cost);
  emit("final_cost", r.final_cost);
  emit("converged", r.termination == "CONVERGENCE");
  emit("peak_mb", peak_rss_mb());
}

int child_main(const std::string& kind, const fs::path& file, const fs::path& cache_dir) {
  try {
    if (kind == "lsjit") {
      // As the CLI does; only lsjit's children, so that Ceres runs in its users' environment.
      lsjit::linear::supernodal::prefer_avx512_blas();
      child_lsjit(file, cache_dir);
    }
    else if (kind == "ceres") child_ceres(file, lsjit::SolverOptions{}.initial_trust_region_radius);
    else if (kind == "ceres_pose_graph_radius") child_ceres(file, lsjit::kPoseGraphInitialTrustRegionRadius);
    else if (kind == "baseline") {
      read_timed(file);
      emit("peak_mb", peak_rss_mb());
    } else throw std::runtime_error("unknown child kind " + kind);
  } catch (const std::exception& e) {
    std::cerr << "lsjit_bench_pose_graph (" << kind << ", " << file.string() << "): " << e.what() << "\n";
    return 1;
  }
  return 0;
}

// ---- parent side ----

// Runs this program with `args` and parses its "key value" lines.
Record run_child(const std::vector<std::string>& args) { return lsjit::bench::run_self(args); }

struct Runs {
  std::vector<Record> cold, warm, ceres, ceres_same;  // ceres_same: at lsjit's first radius
  std::vector<Record> gtsam;                           // empty without lsjit_bench_gtsam
  Record baseline;
};

// The cost ½Σ‖r‖² in lsjit's convention of the poses in `solution` (lsjit_bench_gtsam's
// output: one "id params..." line per vertex) on the edges of `file`.
double lsjit_cost_of(const fs::path& file, const fs::path& solution) {
  lsjit::io::PoseGraph graph = lsjit::io::read_g2o(file);
  const auto index = graph.vertex_index();
  std::ifstream in(solution);
  size_t poses = 0;
  for (int64_t id; in >> id; ++poses) {
    const size_t k = index.at(id);
    if (graph.dimension == 2) {
      double x = 0, y = 0, theta = 0;
      in >> x >> y >> theta;
      graph.poses2[k] = lsjit::SE2d::from_xy_theta(x, y, theta);
    } else {
      lsjit::SE3d::Params p;
      for (int i = 0; i < 7; ++i) in >> p(i);
      graph.poses3[k] = lsjit::SE3d::from_params(p);
    }
  }
  if (poses != graph.num_vertices()) throw std::runtime_error(solution.string() + ": not one pose per vertex");
  const lsjit::PoseGraphProblem p = lsjit::make_pose_graph_problem(graph);
  return p.problem.analyze().cost(p.initial);
}

// One GTSAM solve in its own process; "final_cost" is lsjit's cost of its solution.
Record run_gtsam(const std::string& program, const fs::path& file, const fs::path& scratch) {
  const fs::path solution = scratch / "gtsam_solution.txt";
  Record r = lsjit::bench::run_program(program, {"lm", file.string(), solution.string()});
  r["final_cost"] = lsjit_cost_of(file, solution);
  return r;
}

// Column `key` of `records`, median.
double med(const std::vector<Record>& records, const std::string& key) {
  std::vector<double> v;
  for (const Record& r : records) v.push_back(r.at(key));
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Reference final costs of Ceres with these residuals (½Σ‖r‖²), to be reproduced to 1e-6.
const std::map<std::string, double> kReference = {
    {"ring", 5.5815553},        {"intel", 22.208920},        {"M3500", 68.956479},
    {"tinyGrid3D", 9.2596838},  {"smallGrid3D", 512.69914},  {"sphere2500", 677.00865},
    {"parking-garage", 0.63419359}};

double rel(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-300); }

void print_tables(const std::vector<std::pair<std::string, Runs>>& results, int repeats) {
  auto ms = [](double s) { return 1e3 * s; };
  std::printf("\nmedians of %d repeats, one solver thread each; times in ms, cost ½Σ‖r‖²\n", repeats);

  std::printf("\n### Solves\n\n| graph | poses / edges | lsjit iters / factorizations | Ceres iters / factorizations | "
              "lsjit final cost | "
              "Ceres final cost | rel. diff | Ceres vs reference | lsjit total cold | lsjit total warm | "
              "Ceres total | Ceres / lsjit cold | Ceres / lsjit warm |\n"
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const auto& [name, r] : results) {
    const double lf = med(r.warm, "final_cost"), cf = med(r.ceres, "final_cost");
    const auto ref = kReference.find(name);
    char ref_text[32] = "n/a";
    if (ref != kReference.end()) std::snprintf(ref_text, sizeof ref_text, "%.1e", rel(cf, ref->second));
    const double cold = med(r.cold, "total_s"), warm = med(r.warm, "total_s"), ceres = med(r.ceres, "total_s");
    std::printf("| %s | %.0f / %.0f | %.0f / %.0f | %.0f / %.0f | %.10g | %.10g | %.1e | %s | %.1f | %.1f | %.1f | %.2fx | %.2fx |\n",
                name.c_str(), r.baseline.at("poses"), r.baseline.at("edges"), med(r.warm, "iterations"),
                med(r.warm, "linear_solves"), med(r.ceres, "iterations"), med(r.ceres, "linear_solves"), lf, cf,
                rel(lf, cf), ref_text, ms(cold), ms(warm), ms(ceres), ceres / cold, ceres / warm);
  }

  std::printf("\n### Equal settings: Ceres with lsjit's pose-graph first radius (%.0e)\n\n"
              "| graph | lsjit iters | Ceres iters | Ceres final cost | rel. diff to lsjit | Ceres total | "
              "Ceres / lsjit warm |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
              lsjit::kPoseGraphInitialTrustRegionRadius);
  for (const auto& [name, r] : results) {
    const double lf = med(r.warm, "final_cost"), cf = med(r.ceres_same, "final_cost");
    const double warm = med(r.warm, "total_s"), ceres = med(r.ceres_same, "total_s");
    std::printf("| %s | %.0f | %.0f | %.10g | %.1e | %.1f | %.2fx |\n", name.c_str(), med(r.warm, "iterations"),
                med(r.ceres_same, "iterations"), cf, rel(lf, cf), ms(ceres), ceres / warm);
  }

  if (std::any_of(results.begin(), results.end(), [](const auto& r) { return !r.second.gtsam.empty(); })) {
    std::printf("\n### GTSAM 4.3a0 (0ffe6c9): LevenbergMarquardtOptimizer at its defaults\n\n"
                "GTSAM's final cost is its solution's cost in lsjit's convention. Solve: lsjit's total_s "
                "(analyze + solve, warm) against GTSAM's optimizer construction + optimize(). Process: "
                "fork to exit, reading the file included.\n\n"
                "| graph | lsjit iters | GTSAM iters / linear solves | lsjit final cost | GTSAM final cost | "
                "GTSAM / lsjit cost | lsjit solve | GTSAM solve | GTSAM / lsjit solve | lsjit process | "
                "GTSAM process | GTSAM / lsjit process | GTSAM peak MB |\n"
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (const auto& [name, r] : results) {
      if (r.gtsam.empty()) continue;
      const double lf = med(r.warm, "final_cost"), gf = med(r.gtsam, "final_cost");
      const double ls = med(r.warm, "total_s"), gs = med(r.gtsam, "solve_s");
      const double lp = med(r.warm, "process_s"), gp = med(r.gtsam, "process_s");
      std::printf("| %s | %.0f | %.0f / %.0f | %.10g | %.10g | %.3g | %.1f | %.1f | %.1fx | %.1f | %.1f | %.1fx | %.1f |\n",
                  name.c_str(), med(r.warm, "iterations"), med(r.gtsam, "iterations"), med(r.gtsam, "linear_solves"),
                  lf, gf, gf / lf, ms(ls), ms(gs), gs / ls, ms(lp), ms(gp), gp / lp, med(r.gtsam, "peak_mb"));
    }
  }

  std::printf("\n### lsjit time split (warm process: kernels from the disk cache)\n\n"
              "| graph | build problem | trace | compile (disk load) | analyze (all) | residual | jacobian + H | "
              "solve set-up | linear solver | minimizer other | total |\n"
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const auto& [name, r] : results) {
    const auto& w = r.warm;
    const double other = med(w, "solve_s") - med(w, "setup_s") - med(w, "residual_s") - med(w, "jacobian_s") -
                         med(w, "linear_solver_s");
    std::printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", name.c_str(),
                ms(med(w, "build_s")), ms(med(w, "trace_s")), ms(med(w, "compile_s")), ms(med(w, "analyze_s")),
                ms(med(w, "residual_s")), ms(med(w, "jacobian_s")), ms(med(w, "setup_s")),
                ms(med(w, "linear_solver_s")), ms(other), ms(med(w, "total_s")));
  }

  std::printf("\n### Ceres time split\n\n| graph | build problem | preprocessor | residual | jacobian | "
              "linear solver | minimizer other | total |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const auto& [name, r] : results) {
    const auto& c = r.ceres;
    const double other = med(c, "minimizer_s") - med(c, "residual_s") - med(c, "jacobian_s") - med(c, "linear_solver_s");
    std::printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", name.c_str(), ms(med(c, "build_s")),
                ms(med(c, "preprocessor_s")), ms(med(c, "residual_s")), ms(med(c, "jacobian_s")),
                ms(med(c, "linear_solver_s")), ms(other), ms(med(c, "total_s")));
  }

  std::printf("\n### lsjit cold vs warm (issue 4: trace + compile <= 100 ms cold)\n\n"
              "| graph | kernels compiled cold | trace + compile cold | analyze cold | kernels from disk warm | "
              "trace + compile warm | analyze warm | total cold | total warm | cold, analyze to first iteration | "
              "cold, analyze to first iteration end |\n"
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const auto& [name, r] : results)
    std::printf("| %s | %.0f | %.1f | %.1f | %.0f | %.2f | %.2f | %.1f | %.1f | %.1f | %.1f |\n", name.c_str(),
                med(r.cold, "compiles"), ms(med(r.cold, "trace_s") + med(r.cold, "compile_s")),
                ms(med(r.cold, "analyze_s")), med(r.warm, "cache_hits"),
                ms(med(r.warm, "trace_s") + med(r.warm, "compile_s")), ms(med(r.warm, "analyze_s")),
                ms(med(r.cold, "total_s")), ms(med(r.warm, "total_s")), ms(med(r.cold, "to_first_iteration_s")),
                ms(med(r.cold, "first_iteration_s")));

  std::printf("\n### Peak memory (VmHWM of each solver's process, MB)\n\n"
              "| graph | process + read_g2o only | lsjit cold | lsjit warm | Ceres |\n| --- | ---: | ---: | ---: | ---: |\n");
  for (const auto& [name, r] : results)
    std::printf("| %s | %.1f | %.1f | %.1f | %.1f |\n", name.c_str(), r.baseline.at("peak_mb"),
                med(r.cold, "peak_mb"), med(r.warm, "peak_mb"), med(r.ceres, "peak_mb"));
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(fs::path(item).stem().string());
  return out;
}

// Solves one graph: a baseline child (read_g2o only), then `repeats` rounds of lsjit cold and
// warm on a fresh cache directory, and Ceres with the default first trust-region radius and
// with lsjit's pose-graph one.
Runs run_graph(const std::string& name, const fs::path& file, int repeats, const std::string& gtsam) {
  Runs runs;
  runs.baseline = run_child({"--child", "baseline", file.string()});
  for (int rep = 0; rep < repeats; ++rep) {
    char tmpl[] = "/tmp/lsjit_pose_graph_bench_XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    const fs::path cache_dir = tmpl;
    // The directory goes however the children end.
    const std::unique_ptr<const fs::path, void (*)(const fs::path*)> remover(
        &cache_dir, [](const fs::path* d) { fs::remove_all(*d); });
    // Alternate which solver goes first, so that neither always runs on a cooler core.
    if (rep % 2) runs.ceres.push_back(run_child({"--child", "ceres", file.string()}));
    runs.cold.push_back(run_child({"--child", "lsjit", file.string(), cache_dir.string()}));
    runs.warm.push_back(run_child({"--child", "lsjit", file.string(), cache_dir.string()}));
    if (!(rep % 2)) runs.ceres.push_back(run_child({"--child", "ceres", file.string()}));
    runs.ceres_same.push_back(run_child({"--child", "ceres_pose_graph_radius", file.string()}));
    if (!gtsam.empty()) runs.gtsam.push_back(run_gtsam(gtsam, file, cache_dir));
    if (runs.cold.back().at("compiles") == 0 || runs.warm.back().at("compiles") != 0)
      throw std::runtime_error(name + ": the cold run did not compile or the warm run did");
  }
  return runs;
}

// Prints one graph's final costs; returns false when Ceres does not reproduce the reference cost.
bool report_costs(const std::string& name, const Runs& runs) {
  bool agree = true;
  const double lf = med(runs.warm, "final_cost"), cf = med(runs.ceres, "final_cost");
  std::printf("%s: final cost lsjit %.10g (%s), Ceres %.10g (%s), relative difference %.1e", name.c_str(),
              lf, med(runs.warm, "converged") ? "converged" : "NOT converged", cf,
              med(runs.ceres, "converged") ? "converged" : "NOT converged", rel(lf, cf));
  if (const auto ref = kReference.find(name); ref != kReference.end()) {
    std::printf("; Ceres vs reference %.10g: %.1e", ref->second, rel(cf, ref->second));
    if (rel(cf, ref->second) > 1e-6) {
      std::printf(" MISMATCH");
      agree = false;
    }
  }
  std::printf("\n");
  std::fflush(stdout);
  return agree;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 4 && std::string(argv[1]) == "--child")
    return child_main(argv[2], argv[3], argc >= 5 ? argv[4] : "");

  int repeats = 5;
  fs::path data_dir = fs::path(LSJIT_SHARED_DATA_DIR);
  std::vector<std::string> files = {"sphere2500", "parking-garage", "M3500", "intel", "ring",
                                    "smallGrid3D", "tinyGrid3D"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeats" && i + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--data" && i + 1 < argc) {
      data_dir = argv[++i];
    } else if (a == "--files" && i + 1 < argc) {
      files = split(argv[++i]);
    } else {
      std::cerr << "usage: lsjit_bench_pose_graph [--repeats N] [--data DIR] [--files a,b,...]\n";
      return 2;
    }
  }

  setenv("OMP_THREAD_LIMIT", "1", /*overwrite=*/0);
  // Ceres reaches OpenBLAS' pthread build through libblas.so.3, and this binary links
  // Ceres: without this, that build's idle workers spin in every child, lsjit's included.
  setenv("OPENBLAS_NUM_THREADS", "1", /*overwrite=*/0);
  std::printf("children run with OMP_THREAD_LIMIT=%s (CHOLMOD's OpenMP threads)\n", std::getenv("OMP_THREAD_LIMIT"));
  const std::string gtsam = lsjit::bench::gtsam_program();
  if (gtsam.empty())
    std::printf("skipping GTSAM: lsjit_bench_gtsam was not built (tools/bench/gtsam/build_gtsam.sh, then "
                "configure again)\n");
  std::vector<std::pair<std::string, Runs>> results;
  bool agree = true;
  try {
    for (const std::string& name : files) {
      const fs::path file = data_dir / "pose_graph" / (name + ".g2o");
      if (!fs::exists(file)) {
        std::printf("skipping %s: %s is missing\n", name.c_str(), file.c_str());
        continue;
      }
      Runs runs = run_graph(name, file, repeats, gtsam);
      if (!report_costs(name, runs)) agree = false;
      results.emplace_back(name, std::move(runs));
    }
  } catch (const std::exception& e) {
    std::cerr << "lsjit_bench_pose_graph: " << e.what() << "\n";
    return 1;
  }
  if (results.empty()) {
    std::cerr << "lsjit_bench_pose_graph: no graph found under " << (data_dir / "pose_graph").string()
              << " (pass --data DIR)\n";
    return 1;
  }
  print_tables(results, repeats);
  return agree ? 0 : 1;
}
