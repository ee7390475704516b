// lsjit against GTSAM's BAL path (bal_bench.h, gtsam_comparison): GTSAM as
// examples/SFMExample_bal.cpp runs it (GeneralSFMFactor<SfmCamera, Point3>, its priors on
// the first camera and point, LevenbergMarquardtOptimizer at its defaults: a sparse
// multifrontal Cholesky of the whole system, no Schur complement), lsjit at its defaults
// (linear solver Auto). Both run to convergence; GTSAM's solution is evaluated in lsjit's
// convention, so that the final costs compare. GTSAM reads BAL files in single precision
// (SfmData::FromBalFile), so its start differs from lsjit's in the 7th digit. Its own
// error() is printed too and is not comparable: GeneralSFMFactor counts an observation
// whose point is behind its camera (a CheiralityException) as zero error, so its LM may
// move points behind cameras, where BAL's convention keeps counting them.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "bal_bench.h"
#include "bench_main.h"
#include "bench_stats.h"
#include "lsjit/runtime/bal_problem.h"
#include "lsjit/runtime/io/bal.h"
#include "lsjit/runtime/io/synthetic.h"
#include "lsjit/runtime/solver_options.h"

namespace lsjit::bench {
namespace {

namespace fs = std::filesystem;

// The cost ½Σ‖r‖² in lsjit's convention of lsjit_bench_gtsam's solution (cameras, then
// points, in BAL's parametrization) on the observations of `file`.
double bal_cost_of(const fs::path& file, const fs::path& solution) {
  io::BalProblem bal = io::read_bal(file);
  std::ifstream in(solution);
  for (io::BalCamera& c : bal.cameras)
    for (int i = 0; i < 9; ++i) in >> c(i);
  for (Eigen::Vector3d& p : bal.points)
    for (int i = 0; i < 3; ++i) in >> p(i);
  if (!in) throw std::runtime_error(solution.string() + ": not one line per camera and point");
  const BalLeastSquares p = make_bal_problem(bal);
  return p.problem.analyze().cost(p.initial);
}

struct Row {
  std::string name;
  std::vector<Record> lsjit, gtsam;
};

double med(const std::vector<Record>& records, const std::string& key) {
  std::vector<double> v;
  for (const Record& r : records) v.push_back(r.at(key));
  return median(v);
}

Row compare(const std::string& name, const fs::path& file, const std::string& gtsam, int repeats) {
  Row row{name, {}, {}};
  const TempDir scratch;
  const ChildArgs lsjit_args = {{"source", "file:" + file.string()},
                                {"cache", scratch.str()},
                                {"solver", "auto"},
                                {"tolerance", std::to_string(SolverOptions{}.linear_relative_tolerance)},
                                {"max_iterations", std::to_string(SolverOptions{}.max_iterations)},
                                {"target", "-1"},
                                {"fixed", "0"}};
  run_child("lsjit", lsjit_args);  // cold: fills the kernel cache; the rows are warm runs
  const fs::path solution = scratch.path() / "gtsam_solution.txt";
  for (int rep = 0; rep < repeats; ++rep) {
    if (rep % 2 == 0) row.lsjit.push_back(run_child("lsjit", lsjit_args));
    row.gtsam.push_back(run_program(gtsam, {"bal", file.string(), solution.string()}));
    row.gtsam.back()["final_cost"] = bal_cost_of(file, solution);
    if (rep % 2 == 1) row.lsjit.push_back(run_child("lsjit", lsjit_args));
    std::printf("  %s: lsjit %.10g after %.0f iterations, %.1f ms; GTSAM %.10g after %.0f iterations, %.1f ms\n",
                name.c_str(), row.lsjit.back().at("final_cost"), row.lsjit.back().at("iterations"),
                1e3 * row.lsjit.back().at("total_s"), row.gtsam.back().at("final_cost"),
                row.gtsam.back().at("iterations"), 1e3 * row.gtsam.back().at("solve_s"));
    std::fflush(stdout);
  }
  return row;
}

void print(const std::vector<Row>& rows, int repeats) {
  std::printf("\n### GTSAM 4.3a0 (0ffe6c9) BAL path against lsjit, both at their defaults to convergence, "
              "medians of %d repeats\n\n"
              "Solve: lsjit's total_s (analyze + solve, warm kernels) against GTSAM's optimizer construction + "
              "optimize(). Process: fork to exit, reading included. Costs ½Σ‖r‖² in lsjit's convention.\n\n"
              "| problem | lsjit iters | GTSAM iters / linear solves | lsjit final cost | GTSAM final cost | "
              "GTSAM error() (its own convention) | "
              "lsjit solve ms | GTSAM solve ms | GTSAM / lsjit solve | lsjit process ms | GTSAM process ms | "
              "GTSAM / lsjit process | lsjit peak MB | GTSAM peak MB |\n"
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
              repeats);
  for (const Row& r : rows) {
    const double ls = med(r.lsjit, "total_s"), gs = med(r.gtsam, "solve_s");
    const double lp = med(r.lsjit, "process_s"), gp = med(r.gtsam, "process_s");
    std::printf("| %s | %.0f | %.0f / %.0f | %.10g | %.10g | %.10g | %.1f | %.1f | %.1fx | %.1f | %.1f | %.1fx | %.0f | %.0f |\n",
                r.name.c_str(), med(r.lsjit, "iterations"), med(r.gtsam, "iterations"),
                med(r.gtsam, "linear_solves"), med(r.lsjit, "final_cost"), med(r.gtsam, "final_cost"),
                med(r.gtsam, "gtsam_final_error"), 1e3 * ls,
                1e3 * gs, gs / ls, 1e3 * lp, 1e3 * gp, gp / lp, med(r.lsjit, "peak_mb"), med(r.gtsam, "peak_mb"));
  }
}

}  // namespace

void gtsam_comparison(const fs::path& ladybug, int64_t max_observations, int repeats) {
  const std::string gtsam = lsjit::bench::gtsam_program();
  if (gtsam.empty()) {
    std::printf("\nskipping GTSAM: lsjit_bench_gtsam was not built (tools/bench/gtsam/build_gtsam.sh, then "
                "configure again)\n");
    return;
  }
  std::vector<Row> rows;
  if (fs::exists(ladybug)) rows.push_back(compare("Ladybug-49", ladybug, gtsam, repeats));
  else std::printf("skipping Ladybug-49 against GTSAM: %s is missing\n", ladybug.c_str());
  const TempDir generated;
  for (int64_t n = 10000; n <= max_observations; n *= 10) {
    // GTSAM reads files only: the synthetic problem goes through a BAL file for both.
    const fs::path file = generated.path() / ("synthetic-" + std::to_string(n) + ".bal");
    io::write_bal(file, io::generate_bal(synthetic_spec(n)).initial);
    rows.push_back(compare("synthetic " + std::to_string(n), file, gtsam, repeats));
  }
  print(rows, repeats);
}

}  // namespace lsjit::bench
