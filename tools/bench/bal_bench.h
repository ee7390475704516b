// What the two halves of lsjit_bench_bal (bal_bench.cpp, the parent that plans runs and
// prints tables; bal_bench_child.cpp, one measured solve per process) share.
//
// A child is this program re-executed as
//   lsjit_bench_bal --child KIND key=value ...
// and answers with "key value" lines on stdout (numbers only). Kinds and their keys:
//   lsjit   source cache solver tolerance max_iterations target fixed
//   ceres   source solver max_iterations target fixed
//   kernel  source cache repeats      (the normal-equations and residual kernels alone)
//   schur   source cache solver tolerance repeats   (one Schur linear solve alone)
// source is "file:PATH" (a BAL file) or "synthetic:N" (synthetic_spec(N), generated in the
// child). target is a cost: lsjit stops at the first iteration at or below it (unless
// fixed), both record when they crossed it; fixed=1 zeroes the tolerances so that exactly
// max_iterations iterations run.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "child_process.h"
#include "lsjit/runtime/io/synthetic.h"

namespace lsjit::bench {

using ChildArgs = std::map<std::string, std::string>;  // its key=value arguments

// The synthetic problem of `observations` observations: cameras growing as the square root
// (√N / 4, Ladybug-49's proportion: 49 cameras for 31,843 observations), each point seen
// by 4 cameras (Ladybug's 4.1 on average), so points = N / 4.
io::BalSpec synthetic_spec(int64_t observations);

int child_main(const std::string& kind, const ChildArgs& args);

// lsjit against GTSAM's BAL path (lsjit_bench_gtsam bal, bal_bench_gtsam.cpp), both at their
// defaults to convergence: on `ladybug` (skipped with a message if absent) and on
// synthetic problems of 10^4 observations and up by 10x to `max_observations`. Prints a
// table, or why it skips GTSAM when lsjit_bench_gtsam was not built.
void gtsam_comparison(const std::filesystem::path& ladybug, int64_t max_observations, int repeats);

// An empty directory under /tmp that is removed with the object.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/lsjit_bal_bench_XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string str() const { return path_.string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Runs this program as a child with `kind` and `args`, returns its record; throws with
// the child's kind and arguments if it fails.
Record run_child(const std::string& kind, const ChildArgs& args);

}  // namespace lsjit::bench
