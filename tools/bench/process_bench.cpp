// Whole-process benchmark (issue 20): what a user waits for and how much memory the
// process takes, from fork to exit, for
//   lsjit --help
//   lsjit solve FILE, cold (an empty kernel cache: the LLVM module is loaded and compiles)
//   lsjit solve FILE, warm (every kernel in the disk cache: no libLLVM is mapped)
//   Ceres on the same file and costs, as its own process (lsjit_bench_pose_graph --child
//   ceres FILE, Ceres' default settings; that program also links lsjit, so its start-up
//   includes loading lsjit's libraries: a slight handicap for Ceres)
//   GTSAM on the same file, where lsjit_bench_gtsam was built (tools/bench/gtsam/): its
//   LevenbergMarquardtOptimizer at its defaults, reading the file with readG2o
//   optionally, the same lsjit runs of another build (--baseline-lsjit PATH, e.g. a build
//   of an earlier commit), so that a change is measured before and after in one run
// Runs are interleaved and repeated; medians of wall time and of peak RSS (wait4's
// ru_maxrss). Prints Markdown tables (docs/benchmarks.md). Every child runs with
// OMP_THREAD_LIMIT=1 and OPENBLAS_NUM_THREADS=1 unless they are set (as
// lsjit_bench_pose_graph does): one thread each, and CHOLMOD's OpenMP team limited.
//
//   lsjit_bench_process [--repeats N] [--data DIR] [--files a.g2o,b.g2o]
//                       [--baseline-lsjit PATH]
// The programs are found beside this one (the build directory).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bench_main.h"
#include "bench_stats.h"

namespace {

using lsjit::bench::median;

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Sample {
  double seconds = 0;
  double peak_mb = 0;
};

// Runs `argv` with stdout and stderr to /dev/null and `cache_dir` as LSJIT_CACHE_DIR.
Sample run(const std::vector<std::string>& argv, const fs::path& cache_dir) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // Flushed first: the child would otherwise inherit this process's unwritten output.
  std::fflush(stdout);
  const auto start = Clock::now();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    setenv("LSJIT_CACHE_DIR", cache_dir.c_str(), 1);
    const int null = open("/dev/null", O_WRONLY);
    if (null < 0 || dup2(null, STDOUT_FILENO) < 0 || dup2(null, STDERR_FILENO) < 0) _exit(126);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("failed: " + argv[0] + " " + (argv.size() > 1 ? argv[1] : ""));
  Sample s;
  s.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  s.peak_mb = usage.ru_maxrss / 1024.0;
  return s;
}

struct Series {
  std::vector<double> seconds, peak_mb;
  void add(const Sample& s) {
    seconds.push_back(s.seconds);
    peak_mb.push_back(s.peak_mb);
  }
};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

// One lsjit binary's runs on one file: cold (an empty cache each time) and warm.
struct LsjitRuns {
  std::string label, program;
  fs::path warm_cache;
  Series help, cold, warm;
};

static int run_main(int argc, char** argv) {
  int repeats = 7;
  fs::path data = "../shared/data/pose_graph";
  std::vector<std::string> files = {"ring.g2o", "tinyGrid3D.g2o", "intel.g2o", "sphere2500.g2o"};
  std::string baseline;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeats" && i + 1 < argc) repeats = std::max(1, std::atoi(argv[++i]));
    else if (a == "--data" && i + 1 < argc) data = argv[++i];
    else if (a == "--files" && i + 1 < argc) files = split(argv[++i]);
    else if (a == "--baseline-lsjit" && i + 1 < argc) baseline = argv[++i];
    else {
      std::cerr << "usage: lsjit_bench_process [--repeats N] [--data DIR] [--files a.g2o,...] "
                   "[--baseline-lsjit PATH]\n";
      return 2;
    }
  }
  setenv("OMP_THREAD_LIMIT", "1", /*overwrite=*/0);
  setenv("OPENBLAS_NUM_THREADS", "1", /*overwrite=*/0);
  const fs::path here = fs::read_symlink("/proc/self/exe").parent_path();
  const std::string ceres = (here / "lsjit_bench_pose_graph").string();
  const std::string gtsam = lsjit::bench::gtsam_program();
  if (gtsam.empty()) std::printf("skipping GTSAM: lsjit_bench_gtsam was not built (tools/bench/gtsam/build_gtsam.sh)\n");
  std::vector<std::string> gtsam_rows;
  const fs::path root = fs::temp_directory_path() / ("lsjit-bench-process-" + std::to_string(getpid()));
  std::vector<LsjitRuns> lsjits = {{"lsjit", (here / "lsjit").string(), root / "warm", {}, {}, {}}};
  if (!baseline.empty())
    lsjits.push_back({"baseline", fs::absolute(baseline).string(), root / "warm-baseline", {}, {}, {}});

  for (int r = 0; r < repeats; ++r)
    for (LsjitRuns& l : lsjits) l.help.add(run({l.program, "--help"}, l.warm_cache));
  for (const LsjitRuns& l : lsjits)
    std::printf("%s (%s) `--help`: %.1f ms, %.1f MB peak RSS (medians of %d)\n", l.label.c_str(),
                l.program.c_str(), 1e3 * median(l.help.seconds), median(l.help.peak_mb), repeats);

  std::printf("\n| problem | program | cold s | warm s | Ceres s | warm / Ceres | cold MB | "
              "warm MB | Ceres MB |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const std::string& name : files) {
    const fs::path file = data / name;
    if (!fs::exists(file)) {
      std::printf("| %s | skipped: %s not found | | | | | | | |\n", name.c_str(), file.c_str());
      continue;
    }
    Series reference, gtsam_runs;
    for (LsjitRuns& l : lsjits) {
      l.cold = l.warm = {};
      run({l.program, "solve", file.string()}, l.warm_cache);  // fills the warm cache
    }
    for (int r = 0; r < repeats; ++r) {
      for (LsjitRuns& l : lsjits) {
        const fs::path empty = root / ("cold-" + std::to_string(r));
        fs::remove_all(empty);
        l.cold.add(run({l.program, "solve", file.string()}, empty));
        fs::remove_all(empty);
        l.warm.add(run({l.program, "solve", file.string()}, l.warm_cache));
      }
      reference.add(run({ceres, "--child", "ceres", file.string()}, root / "warm"));
      if (!gtsam.empty()) gtsam_runs.add(run({gtsam, "lm", file.string(), (root / "gtsam_solution").string()}, root / "warm"));
    }
    if (!gtsam.empty()) {
      char row[256];
      std::snprintf(row, sizeof row, "| %s | %.3f | %.3f | %.2fx | %.1f | %.1f |", name.c_str(),
                    median(lsjits[0].warm.seconds), median(gtsam_runs.seconds),
                    median(gtsam_runs.seconds) / median(lsjits[0].warm.seconds), median(lsjits[0].warm.peak_mb),
                    median(gtsam_runs.peak_mb));
      gtsam_rows.push_back(row);
    }
    for (const LsjitRuns& l : lsjits)
      std::printf("| %s | %s | %.3f | %.3f | %.3f | %.2fx | %.1f | %.1f | %.1f |\n", name.c_str(),
                  l.label.c_str(), median(l.cold.seconds), median(l.warm.seconds),
                  median(reference.seconds), median(l.warm.seconds) / median(reference.seconds),
                  median(l.cold.peak_mb), median(l.warm.peak_mb), median(reference.peak_mb));
    std::fflush(stdout);
  }
  if (!gtsam_rows.empty()) {
    std::printf("\n### GTSAM 4.3a0 (0ffe6c9) as its own process (lsjit_bench_gtsam lm FILE)\n\n"
                "| problem | lsjit warm s | GTSAM s | GTSAM / lsjit warm | lsjit warm MB | GTSAM MB |\n"
                "| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (const std::string& row : gtsam_rows) std::printf("%s\n", row.c_str());
  }
  fs::remove_all(root);
  return 0;
}

int main(int argc, char** argv) {
  return lsjit::bench::report_errors("lsjit_bench_process", [&] { return run_main(argc, argv); });
}
