// Bundle-adjustment benchmark (issue 5): lsjit vs Ceres 2.1 on BAL problems, one thread each,
// the same residual (the Snavely camera of docs/architecture.md, "Conventions"; Ceres'
// bundle_adjuster functor).
//
//   lsjit_bench_bal [--repeats N] [--scale-repeats N] [--data DIR] [--max-observations N]
//                   [--ceres-max-observations N] [--iterative-tolerance T]
//                   [--scale-iterations N] [--skip-ladybug] [--skip-scaling]
//                   [--gtsam-max-observations N]
//
// 1. Ladybug-49 (DIR/bal/problem-49-7776-pre.txt, DIR = ../shared/data by default). Ceres
//    runs 20 LM iterations from the file's values with DENSE_SCHUR, SPARSE_SCHUR
//    (SuiteSparse) and ITERATIVE_SCHUR (SCHUR_JACOBI, eta 0.1), defaults otherwise, no
//    ordering given. Its DENSE_SCHUR final cost (checked against the reference 13345.022),
//    plus 1e-9 of itself so that rounding in the last digits does not decide, is the
//    target: lsjit solves with dense_schur, sparse_schur and iterative_schur (relative
//    tolerance T on the reduced system, --iterative-tolerance, 0.1 by default) and its
//    iteration callback stops the solve at the first iteration whose cost is at or below
//    the target (at most 50 iterations). lsjit runs cold (an empty kernel cache directory:
//    trace and compile) and warm (a second process on that directory: kernels from disk).
//    The ratio is to the fastest Ceres configuration that reaches the target.
// 2. Scaling: synthetic problems (bal_bench.h, synthetic_spec) of 10^4 .. 10^6 observations
//    (at most --max-observations), a fixed number of LM iterations (tolerances zeroed)
//    with lsjit iterative_schur and dense_schur and Ceres ITERATIVE_SCHUR and DENSE_SCHUR
//    (Ceres up to --ceres-max-observations), warm kernels.
// 3. GTSAM (where lsjit_bench_gtsam was built, tools/bench/gtsam/build_gtsam.sh; with
//    Ladybug): its BAL path against lsjit, both at their defaults to convergence, on
//    Ladybug-49 and synthetic problems up to --gtsam-max-observations (bal_bench_gtsam.cpp).
//
// Every solve runs in its own process (bal_bench_child.cpp): its peak memory is its own,
// and "above data" subtracts the resident memory after the problem was read or generated.
// Ceres' SPARSE_SCHUR factors with CHOLMOD, which opens an OpenMP team of its own (lsjit's
// sparse_schur uses lsjit's supernodal Cholesky, not CHOLMOD): the children run with
// OMP_THREAD_LIMIT=1 unless it is set. Tables are medians over repeats, column by column;
// the order of the solvers alternates between repeats.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bal_bench.h"

namespace {

namespace fs = std::filesystem;
using lsjit::bench::ChildArgs;
using lsjit::bench::Record;
using lsjit::bench::run_child;
using lsjit::bench::TempDir;

constexpr double kReferenceCost = 13345.022;  // Ceres 2.1, 20 LM iterations, Ladybug-49
constexpr int kLadybugMaxIterations = 50;     // lsjit's cap on the way to the target

struct Options {
  int repeats = 3, scale_repeats = 3, scale_iterations = 5;
  fs::path data_dir = fs::path(LSJIT_SHARED_DATA_DIR);
  int64_t max_observations = 1000000, ceres_max_observations = 1000000;
  double iterative_tolerance = 0.1;
  int64_t gtsam_max_observations = 100000;
  bool ladybug = true, scaling = true;
};

double med(const std::vector<Record>& records, const std::string& key) {
  std::vector<double> v;
  for (const Record& r : records) v.push_back(r.at(key));
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double rel(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-300); }
std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// ---- Ladybug-49 ----

struct LsjitConfig {
  std::string solver;
  double tolerance;
  std::vector<Record> cold, warm;
};
struct CeresConfig {
  std::string solver;
  std::vector<Record> runs;
};

std::string tolerance_text(const LsjitConfig& c) {
  return c.solver == "iterative_schur" ? " (tol " + fmt("%g", c.tolerance) + ")" : "";
}

double ms(double s) { return 1e3 * s; }

void print_ceres_iterations(const std::vector<CeresConfig>& ceres) {
  std::printf("\n### Ceres, 20 iterations\n\n| Ceres solver | iterations (accepted) | CG iterations | final cost | "
              "vs %.3f | first iteration <= target | time to it | total | points eliminated | 2,3,9 Schur kernels |\n"
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n", kReferenceCost);
  for (const CeresConfig& c : ceres) {
    const auto& r = c.runs;
    const double ti = med(r, "target_iteration");
    std::printf("| %s | %.0f (%.0f) | %.0f | %.10g | %.1e | %s | %s | %.1f | %.0f | %s |\n", c.solver.c_str(),
                med(r, "iterations"), med(r, "successful_steps"), med(r, "linear_iterations"), med(r, "final_cost"),
                rel(med(r, "final_cost"), kReferenceCost), ti < 0 ? "not reached" : fmt("%.0f", ti).c_str(),
                ti < 0 ? "-" : fmt("%.1f", ms(med(r, "target_s"))).c_str(), ms(med(r, "total_s")),
                med(r, "eliminated_blocks"), med(r, "schur_2_3_9") ? "yes" : "no");
  }
}

// `best_ceres`: the total seconds of the fastest Ceres configuration that reached the target,
// `best_name` its name.
void print_lsjit_to_target(const std::vector<LsjitConfig>& lsjit, double best_ceres,
                           const std::string& best_name) {
  std::printf("\n### lsjit, stopped at the target\n\n| lsjit solver | iterations to target (accepted) | CG iterations | "
              "final cost | total cold | total warm | %s (fastest Ceres) / lsjit cold | / lsjit warm |\n"
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n", best_name.c_str());
  for (const LsjitConfig& c : lsjit) {
    const auto& w = c.warm;
    const double ti = med(w, "target_iteration");
    std::printf("| %s%s | %s (%.0f) | %.0f | %.10g | %.1f | %.1f | %.2fx | %.2fx |\n", c.solver.c_str(),
                tolerance_text(c).c_str(), ti < 0 ? "not reached" : fmt("%.0f", ti).c_str(),
                med(w, "successful_steps"), med(w, "linear_iterations"), med(w, "final_cost"),
                ms(med(c.cold, "total_s")), ms(med(w, "total_s")), best_ceres / med(c.cold, "total_s"),
                best_ceres / med(w, "total_s"));
  }
}

void print_time_splits(const std::vector<LsjitConfig>& lsjit, const std::vector<CeresConfig>& ceres) {
  std::printf("\n### lsjit time split, warm (ms)\n\n| lsjit solver | build problem | trace | compile (disk load) | "
              "analyze (all) | residual | jacobian (NE kernel + assembly) | solve set-up | linear solver (Schur) | "
              "minimizer other | total |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const LsjitConfig& c : lsjit) {
    const auto& w = c.warm;
    const double other = med(w, "solve_s") - med(w, "setup_s") - med(w, "residual_s") - med(w, "jacobian_s") -
                         med(w, "linear_solver_s");
    std::printf("| %s%s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", c.solver.c_str(),
                tolerance_text(c).c_str(), ms(med(w, "build_s")), ms(med(w, "trace_s")), ms(med(w, "compile_s")),
                ms(med(w, "analyze_s")), ms(med(w, "residual_s")), ms(med(w, "jacobian_s")), ms(med(w, "setup_s")),
                ms(med(w, "linear_solver_s")), ms(other), ms(med(w, "total_s")));
  }

  std::printf("\n### Ceres time split (ms; its linear solver includes the Schur elimination)\n\n| Ceres solver | "
              "build problem | preprocessor | residual | jacobian | linear solver | minimizer other | total |\n"
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const CeresConfig& c : ceres) {
    const auto& r = c.runs;
    const double other = med(r, "minimizer_s") - med(r, "residual_s") - med(r, "jacobian_s") - med(r, "linear_solver_s");
    std::printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", c.solver.c_str(), ms(med(r, "build_s")),
                ms(med(r, "preprocessor_s")), ms(med(r, "residual_s")), ms(med(r, "jacobian_s")),
                ms(med(r, "linear_solver_s")), ms(other), ms(med(r, "total_s")));
  }
}

// `kernel`: the measurements of lsjit_bench_bal --child kernel.
void print_per_evaluation(const std::vector<LsjitConfig>& lsjit, const std::vector<CeresConfig>& ceres,
                          const Record& kernel) {
  const double kernel_ms = ms(kernel.at("normal_kernel_s")), residual_kernel_ms = ms(kernel.at("residual_kernel_s"));
  std::printf("\n### Per evaluation and per linear solve (ms)\n\n"
              "Kernels alone (lsjit_bench_bal --child kernel, %s): normal equations %.2f ms, residual %.2f ms "
              "per pass over all observations.\n\n"
              "| solver | NE / Jacobian evaluations | per evaluation | of which kernel | of which assembly | "
              "linear solves | per linear solve |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
              kernel.at("normal_kernel_s_from_disk") ? "the kernel the solves ran, from disk" : "recompiled",
              kernel_ms, residual_kernel_ms);
  for (const LsjitConfig& c : lsjit) {
    const auto& w = c.warm;
    const double evals = med(w, "normal_evaluations"), per = ms(med(w, "jacobian_s")) / evals;
    std::printf("| lsjit %s%s | %.0f | %.2f | %.2f | %.2f | %.0f | %.2f |\n", c.solver.c_str(),
                tolerance_text(c).c_str(), evals, per, kernel_ms, per - kernel_ms, med(w, "iterations"),
                ms(med(w, "linear_solver_s")) / med(w, "iterations"));
  }
  for (const CeresConfig& c : ceres) {
    const auto& r = c.runs;
    const double evals = med(r, "jacobian_evaluations");
    std::printf("| Ceres %s | %.0f | %.2f | | | %.0f | %.2f |\n", c.solver.c_str(), evals,
                ms(med(r, "jacobian_s")) / evals, med(r, "linear_solves"),
                ms(med(r, "linear_solver_s")) / med(r, "linear_solves"));
  }
}

void print_peak_memory(const std::vector<LsjitConfig>& lsjit, const std::vector<CeresConfig>& ceres) {
  std::printf("\n### Peak memory (VmHWM of each solver's process, MB)\n\n| solver | process + data | peak | above data |\n"
              "| --- | ---: | ---: | ---: |\n");
  for (const LsjitConfig& c : lsjit)
    for (const auto* runs : {&c.cold, &c.warm})
      std::printf("| lsjit %s%s %s | %.1f | %.1f | %.1f |\n", c.solver.c_str(), tolerance_text(c).c_str(),
                  runs == &c.cold ? "cold" : "warm", med(*runs, "rss_data_mb"), med(*runs, "peak_mb"),
                  med(*runs, "peak_mb") - med(*runs, "rss_data_mb"));
  for (const CeresConfig& c : ceres)
    std::printf("| Ceres %s | %.1f | %.1f | %.1f |\n", c.solver.c_str(), med(c.runs, "rss_data_mb"),
                med(c.runs, "peak_mb"), med(c.runs, "peak_mb") - med(c.runs, "rss_data_mb"));
}

void print_ladybug(const std::vector<LsjitConfig>& lsjit, const std::vector<CeresConfig>& ceres,
                   const Record& kernel, double target, int repeats) {
  double best_ceres = 1e300;
  std::string best_name = "none reached the target";
  for (const CeresConfig& c : ceres)
    if (med(c.runs, "target_iteration") >= 0 && med(c.runs, "total_s") < best_ceres)
      best_ceres = med(c.runs, "total_s"), best_name = c.solver;

  std::printf("\nmedians of %d repeats, one thread each; times in ms; cost ½Σ‖r‖²; target %.10g\n", repeats, target);
  print_ceres_iterations(ceres);
  print_lsjit_to_target(lsjit, best_ceres, best_name);
  print_time_splits(lsjit, ceres);
  print_per_evaluation(lsjit, ceres, kernel);
  print_peak_memory(lsjit, ceres);
}

// Returns false when Ceres does not reproduce the reference cost.
bool ladybug(const Options& opt) {
  const fs::path file = opt.data_dir / "bal" / "problem-49-7776-pre.txt";
  if (!fs::exists(file)) throw std::runtime_error(file.string() + " is missing (pass --data DIR)");
  const std::string source = "file:" + file.string();
  std::vector<CeresConfig> ceres = {{"dense_schur", {}}, {"sparse_schur", {}}, {"iterative_schur", {}}};
  std::vector<LsjitConfig> lsjit = {{"dense_schur", 0, {}, {}},
                                    {"sparse_schur", 0, {}, {}},
                                    {"iterative_schur", opt.iterative_tolerance, {}, {}}};
  auto ceres_args = [&](const std::string& solver, double target) -> ChildArgs {
    return {{"source", source}, {"solver", solver}, {"max_iterations", "20"}, {"target", fmt("%.17g", target)},
            {"fixed", "0"}};
  };
  // A first, untimed Ceres DENSE_SCHUR run sets the target: its 20-iteration cost + 1e-9.
  const double target = run_child("ceres", ceres_args("dense_schur", -1)).at("final_cost") * (1 + 1e-9);
  auto run_ceres = [&] {
    for (CeresConfig& c : ceres) {
      c.runs.push_back(run_child("ceres", ceres_args(c.solver, target)));
      std::printf("  Ceres %s: %.10g after %.0f iterations, %.1f ms\n", c.solver.c_str(),
                  c.runs.back().at("final_cost"), c.runs.back().at("iterations"), 1e3 * c.runs.back().at("total_s"));
      std::fflush(stdout);
    }
  };
  Record kernel;
  for (int rep = 0; rep < opt.repeats; ++rep) {
    if (rep % 2 == 0) run_ceres();
    for (LsjitConfig& c : lsjit) {
      const TempDir cache;
      ChildArgs args = {{"source", source}, {"cache", cache.str()}, {"solver", c.solver},
                        {"tolerance", fmt("%.17g", c.tolerance)}, {"max_iterations", std::to_string(kLadybugMaxIterations)},
                        {"target", fmt("%.17g", target)}, {"fixed", "0"}};
      c.cold.push_back(run_child("lsjit", args));
      c.warm.push_back(run_child("lsjit", args));
      if (c.cold.back().at("compiles") == 0 || c.warm.back().at("compiles") != 0)
        throw std::runtime_error("the cold run did not compile or the warm run did");
      if (kernel.empty()) kernel = run_child("kernel", {{"source", source}, {"cache", cache.str()}, {"repeats", "21"}});
      std::printf("  lsjit %s%s: %.10g after %.0f iterations, cold %.1f ms, warm %.1f ms\n", c.solver.c_str(),
                  tolerance_text(c).c_str(), c.warm.back().at("final_cost"), c.warm.back().at("iterations"),
                  1e3 * c.cold.back().at("total_s"), 1e3 * c.warm.back().at("total_s"));
      std::fflush(stdout);
    }
    if (rep % 2 == 1) run_ceres();
  }
  const double ceres_cost = med(ceres[0].runs, "final_cost");
  const bool reproduced = rel(ceres_cost, kReferenceCost) <= 1e-6;
  std::printf("\nCeres DENSE_SCHUR after 20 iterations: %.10g (initial %.10g), reference %.3f: relative difference "
              "%.1e%s\n", ceres_cost, med(ceres[0].runs, "initial_cost"), kReferenceCost, rel(ceres_cost, kReferenceCost),
              reproduced ? "" : " MISMATCH");
  print_ladybug(lsjit, ceres, kernel, target, opt.repeats);
  return reproduced;
}

// ---- scaling ----

struct ScaleRow {
  int64_t observations = 0;
  std::string name;
  std::vector<Record> runs;
  Record kernel;  // lsjit rows only
};

void print_scaling(const std::vector<ScaleRow>& rows, int iterations, int repeats) {
  std::printf("\n### Scaling: %d LM iterations (tolerances zeroed), warm kernels, medians of %d repeats\n\n"
              "| observations | cameras / points | solver | ms / iteration | ns / observation / iteration | "
              "vs smallest | CG / solve | NE eval ms (kernel) | linear solve ms | setup ms | peak MB | above data MB | "
              "bytes / observation |\n| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
              
              iterations, repeats);
  for (const ScaleRow& row : rows) {
    const auto& r = row.runs;
    const double n = static_cast<double>(row.observations);
    const double per_it = med(r, "iterations_s") / med(r, "iterations");
    double first = 0;  // ns per observation per iteration of the smallest size, same solver
    for (const ScaleRow& o : rows)
      if (o.name == row.name) {
        first = 1e9 * med(o.runs, "iterations_s") / med(o.runs, "iterations") / static_cast<double>(o.observations);
        break;
      }
    const bool is_lsjit = row.name.rfind("lsjit", 0) == 0;
    const double evals = is_lsjit ? med(r, "normal_evaluations") : med(r, "jacobian_evaluations");
    const double solves = is_lsjit ? med(r, "iterations") : med(r, "linear_solves");
    const std::string ne = fmt("%.1f", 1e3 * med(r, "jacobian_s") / evals) +
                           (is_lsjit ? fmt(" (%.1f)", 1e3 * row.kernel.at("normal_kernel_s")) : "");
    const double above = med(r, "peak_mb") - med(r, "rss_data_mb");
    // Everything before the first iteration: problem construction and analyze(), or
    // Ceres' problem construction and preprocessor.
    const double setup = med(r, "build_s") + (is_lsjit ? med(r, "analyze_s") : med(r, "preprocessor_s"));
    std::printf("| %.0f | %.0f / %.0f | %s | %.1f | %.0f | %.2fx | %.1f | %s | %.1f | %.0f | %.1f | %.1f | %.0f |\n", n,
                med(r, "cameras"), med(r, "points"), row.name.c_str(), 1e3 * per_it, 1e9 * per_it / n,
                1e9 * per_it / n / first, med(r, "linear_iterations") / solves, ne.c_str(),
                1e3 * med(r, "linear_solver_s") / solves, 1e3 * setup, med(r, "peak_mb"), above,
                above * 1048576.0 / n);
  }
}

void scaling(const Options& opt) {
  const TempDir cache;
  const std::string iterations = std::to_string(opt.scale_iterations);
  const std::string tolerance = fmt("%.17g", opt.iterative_tolerance);
  // Warm the cache: the solves below load their kernels from disk.
  run_child("lsjit", {{"source", "synthetic:10000"}, {"cache", cache.str()}, {"solver", "iterative_schur"},
                      {"tolerance", tolerance}, {"max_iterations", "1"}, {"target", "-1"}, {"fixed", "1"}});
  std::vector<ScaleRow> rows;
  for (const int64_t n : {10000, 30000, 100000, 300000, 1000000}) {
    if (n > opt.max_observations) break;
    const std::string source = "synthetic:" + std::to_string(n);
    std::vector<ScaleRow> size_rows;
    auto lsjit_row = [&](const std::string& solver) {
      ScaleRow row{n, "lsjit " + solver + (solver == "iterative_schur" ? " (tol " + fmt("%g", opt.iterative_tolerance) + ")" : ""), {}, {}};
      row.kernel = run_child("kernel", {{"source", source}, {"cache", cache.str()}, {"repeats", "5"}});
      return row;
    };
    size_rows.push_back(lsjit_row("iterative_schur"));
    size_rows.push_back(lsjit_row("dense_schur"));
    const bool with_ceres = n <= opt.ceres_max_observations;
    if (with_ceres) {
      size_rows.push_back({n, "Ceres ITERATIVE_SCHUR", {}, {}});
      size_rows.push_back({n, "Ceres DENSE_SCHUR", {}, {}});
    }
    for (int rep = 0; rep < opt.scale_repeats; ++rep) {
      auto run_lsjit = [&] {
        for (const std::string solver : {"iterative_schur", "dense_schur"})
          size_rows[solver == std::string("iterative_schur") ? 0 : 1].runs.push_back(run_child(
              "lsjit", {{"source", source}, {"cache", cache.str()}, {"solver", solver}, {"tolerance", tolerance},
                        {"max_iterations", iterations}, {"target", "-1"}, {"fixed", "1"}}));
      };
      auto run_ceres = [&] {
        if (!with_ceres) return;
        for (const std::string solver : {"iterative_schur", "dense_schur"})
          size_rows[solver == std::string("iterative_schur") ? 2 : 3].runs.push_back(run_child(
              "ceres", {{"source", source}, {"solver", solver}, {"max_iterations", iterations}, {"target", "-1"},
                        {"fixed", "1"}}));
      };
      if (rep % 2 == 0) run_lsjit(), run_ceres();
      else run_ceres(), run_lsjit();
    }
    for (const ScaleRow& row : size_rows) {
      std::printf("  %lld observations, %s: %.1f ms per iteration, peak %.0f MB\n", static_cast<long long>(n),
                  row.name.c_str(), 1e3 * med(row.runs, "iterations_s") / med(row.runs, "iterations"),
                  med(row.runs, "peak_mb"));
      rows.push_back(row);
    }
    std::fflush(stdout);
  }
  print_scaling(rows, opt.scale_iterations, opt.scale_repeats);
}

int usage() {
  std::cerr << "usage: lsjit_bench_bal [--repeats N] [--scale-repeats N] [--data DIR] [--max-observations N]\n"
               "                       [--ceres-max-observations N] [--iterative-tolerance T]\n"
               "                       [--scale-iterations N] [--skip-ladybug] [--skip-scaling]\n"
               "                       [--gtsam-max-observations N]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "--child") {
    ChildArgs args;
    for (int i = 3; i < argc; ++i) {
      const std::string a = argv[i];
      const size_t eq = a.find('=');
      if (eq == std::string::npos) return usage();
      args[a.substr(0, eq)] = a.substr(eq + 1);
    }
    return lsjit::bench::child_main(argv[2], args);
  }

  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--repeats" && has_value) opt.repeats = std::max(1, std::atoi(argv[++i]));
    else if (a == "--scale-repeats" && has_value) opt.scale_repeats = std::max(1, std::atoi(argv[++i]));
    else if (a == "--scale-iterations" && has_value) opt.scale_iterations = std::max(1, std::atoi(argv[++i]));
    else if (a == "--data" && has_value) opt.data_dir = argv[++i];
    else if (a == "--max-observations" && has_value) opt.max_observations = std::atoll(argv[++i]);
    else if (a == "--ceres-max-observations" && has_value) opt.ceres_max_observations = std::atoll(argv[++i]);
    else if (a == "--iterative-tolerance" && has_value) opt.iterative_tolerance = std::atof(argv[++i]);
    else if (a == "--skip-ladybug") opt.ladybug = false;
    else if (a == "--skip-scaling") opt.scaling = false;
    else if (a == "--gtsam-max-observations" && has_value) opt.gtsam_max_observations = std::atoll(argv[++i]);
    else return usage();
  }

  setenv("OMP_THREAD_LIMIT", "1", /*overwrite=*/0);
  // Ceres reaches OpenBLAS' pthread build through libblas.so.3, and this binary links
  // Ceres: without this, that build's idle workers spin in every child, lsjit's included.
  setenv("OPENBLAS_NUM_THREADS", "1", /*overwrite=*/0);
  std::printf("children run with OMP_THREAD_LIMIT=%s (CHOLMOD's OpenMP threads)\n", std::getenv("OMP_THREAD_LIMIT"));
  bool ok = true;
  try {
    if (opt.ladybug) ok = ladybug(opt);
    if (opt.ladybug) lsjit::bench::gtsam_comparison(opt.data_dir / "bal" / "problem-49-7776-pre.txt",
                                                    opt.gtsam_max_observations, opt.repeats);
    if (opt.scaling) scaling(opt);
  } catch (const std::exception& e) {
    std::cerr << "lsjit_bench_bal: " << e.what() << "\n";
    return 1;
  }
  return ok ? 0 : 1;
}
