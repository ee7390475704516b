// Pose-graph starts (runtime/pose_graph_start.h): file, chordal and auto on the shared g2o
// graphs and on generated graphs whose odometry start drifts (io::PoseGraphSpec::
// drift_sigma), solved as `lsjit solve` does (pose_graph_solver_options, one thread, warm
// kernels). The claim checked: auto never ends above the better of the other two starts
// (relative 1e-9); each violation is printed and makes the exit status 1.
//
//   lsjit_bench_starts [--data DIR] [--repeats N] [--large]
//     DIR: ../shared/data by default (DIR/pose_graph/*.g2o; absent files are skipped)
//     --large adds the generated 3D graph of 100,000 poses with drift (minutes)
// Times are medians over N repeats (default 3) of the whole of a start and its solve: the
// chordal initialization and auto's comparison included.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_main.h"
#include "bench_stats.h"
#include "lsjit/runtime/solve/linear/supernodal_kernels.h"
#include "lsjit/common/clock.h"
#include "lsjit/runtime/io/g2o.h"
#include "lsjit/runtime/io/synthetic.h"
#include "lsjit/runtime/pose_graph_start.h"

namespace {

namespace fs = std::filesystem;
using lsjit::PoseGraphStart;

struct Outcome {
  std::string used;
  int iterations = 0;
  double initial_cost = 0, final_cost = 0, seconds = 0;
  bool converged = false;
};

Outcome solve_from(const lsjit::io::PoseGraph& read, PoseGraphStart start) {
  lsjit::io::PoseGraph graph = read;
  const auto begin = lsjit::Clock::now();
  std::optional<lsjit::PoseGraphStartChoice> choice = lsjit::chordal_if_no_vertices(graph);
  lsjit::PoseGraphProblem p = lsjit::make_pose_graph_problem(graph);
  const lsjit::AnalyzedProblem analyzed = p.problem.analyze();
  if (!choice) choice = lsjit::start_pose_graph(graph, p, analyzed, start);
  lsjit::SolverOptions options = lsjit::pose_graph_solver_options();
  options.num_threads = 1;
  const lsjit::SolveSummary s = analyzed.solve(p.initial, options).summary;
  Outcome o;
  o.seconds = lsjit::seconds_since(begin);
  o.used = choice->used;
  o.iterations = s.iterations;
  o.initial_cost = s.initial_cost;
  o.final_cost = s.usable() ? s.final_cost : INFINITY;
  o.converged = lsjit::converged(s.termination);
  return o;
}

struct Row {
  std::string name;
  Outcome file, chordal, automatic;
};

Row measure(const std::string& name, const lsjit::io::PoseGraph& graph, int repeats) {
  Row row{name, {}, {}, {}};
  std::vector<double> times[3];
  for (int rep = 0; rep < repeats; ++rep) {
    int k = 0;
    for (auto [start, out] : {std::pair{PoseGraphStart::File, &row.file}, std::pair{PoseGraphStart::Chordal, &row.chordal},
                              std::pair{PoseGraphStart::Auto, &row.automatic}}) {
      *out = solve_from(graph, start);
      times[k++].push_back(out->seconds);
    }
  }
  row.file.seconds = lsjit::bench::median(times[0]);
  row.chordal.seconds = lsjit::bench::median(times[1]);
  row.automatic.seconds = lsjit::bench::median(times[2]);
  return row;
}

std::string cell(const Outcome& o) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%d / %.6g / %.10g%s / %.1f", o.iterations, o.initial_cost, o.final_cost,
                o.converged ? "" : " (not converged)", 1e3 * o.seconds);
  return buf;
}

lsjit::io::PoseGraph generated(int dim, int64_t poses, double drift) {
  lsjit::io::PoseGraphSpec spec;
  spec.dimension = dim;
  spec.poses = poses;
  spec.loop_closures = poses / 5;
  spec.drift_sigma = drift;
  spec.seed = 3;
  return lsjit::io::generate_pose_graph(spec).graph;
}

}  // namespace

int main(int argc, char** argv) {
  lsjit::linear::supernodal::prefer_avx512_blas();  // as the CLI does, before any thread
  return lsjit::bench::report_errors("lsjit_bench_starts", [&] {
    fs::path data = LSJIT_SHARED_DATA_DIR;
    int repeats = 3;
    bool large = false;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--data" && i + 1 < argc) data = argv[++i];
      else if (a == "--repeats" && i + 1 < argc) repeats = std::max(1, std::atoi(argv[++i]));
      else if (a == "--large") large = true;
      else {
        std::fprintf(stderr, "usage: lsjit_bench_starts [--data DIR] [--repeats N] [--large]\n");
        return 2;
      }
    }
    std::vector<Row> rows;
    for (const char* name : {"sphere2500", "parking-garage", "M3500", "intel", "ring", "smallGrid3D", "tinyGrid3D"}) {
      const fs::path file = data / "pose_graph" / (std::string(name) + ".g2o");
      if (!fs::exists(file)) {
        std::printf("skipping %s: %s is missing\n", name, file.c_str());
        continue;
      }
      rows.push_back(measure(name, lsjit::io::read_g2o(file), repeats));
    }
    struct Generated {
      int dim;
      int64_t poses;
      double drift;
    };
    std::vector<Generated> specs = {{2, 2000, 0.01}, {2, 2000, 0.05}, {3, 2000, 0.01},
                                    {3, 2000, 0.05}, {3, 10000, 0.02}, {2, 10000, 0.02}};
    if (large) specs.push_back({3, 100000, 0.02});
    for (const Generated& g : specs) {
      char name[96];
      std::snprintf(name, sizeof name, "generated %dD, %lld poses, drift %.2g", g.dim,
                    static_cast<long long>(g.poses), g.drift);
      rows.push_back(measure(name, generated(g.dim, g.poses, g.drift), g.poses > 20000 ? 1 : repeats));
    }

    std::printf("\n### Starts: iterations / initial cost / final cost / ms (start and solve), medians of %d\n\n"
                "| graph | file | chordal | auto | auto chose | auto vs better end |\n"
                "| --- | ---: | ---: | ---: | --- | ---: |\n", repeats);
    int violations = 0;
    for (const Row& r : rows) {
      const double best = std::min(r.file.final_cost, r.chordal.final_cost);
      const double excess = r.automatic.final_cost / best - 1;
      if (excess > 1e-9) ++violations;
      std::printf("| %s | %s | %s | %s | %s | %+.1e%s |\n", r.name.c_str(), cell(r.file).c_str(),
                  cell(r.chordal).c_str(), cell(r.automatic).c_str(), r.automatic.used.c_str(), excess,
                  excess > 1e-9 ? " HIGHER" : "");
    }
    std::printf("\n%d graph%s where auto ended above the better start\n", violations, violations == 1 ? "" : "s");
    return violations == 0 ? 0 : 1;
  });
}
