// What the end-to-end benchmarks (pose_graph_bench.cpp, bal_bench*.cpp) share to run each
// measured solve in a process of its own: its peak memory is then its own, and every lsjit
// run starts from the kernel cache state the benchmark chose.
//
// A child is the benchmark itself re-executed (/proc/self/exe) with arguments of the
// benchmark's choosing; it answers with "key value" lines on stdout, numbers only (emit()).
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "lsjit/common/clock.h"

namespace lsjit::bench {

using Record = std::map<std::string, double>;  // one child's measurements

// Child side: one measurement as a "key value" line on stdout, value to 17 digits.
void emit(const char* key, double value);

// A field of /proc/self/status in MB: "VmHWM" (peak resident) or "VmRSS" (current); -1 if
// absent.
double status_mb(const char* field);

// Issue 20's cold-start measure, of an lsjit::SolveSummary: from analyze() to the start of
// the first LM iteration (the set-up and the initial evaluation, iteration 0), in seconds.
// A template because this header is also compiled into lsjit_bench_baselines, which does
// not see lsjit's headers.
template <class Summary>
double to_first_iteration_s(const Summary& s) {
  return s.analyze_s + (s.per_iteration.empty() ? 0 : s.per_iteration[0].cumulative_s);
}

// Parent side: runs this program with `args` (argv[1..]), waits for it and parses its
// lines, plus "process_s": the wall time from fork to exit. Throws std::runtime_error naming
// `args` if it cannot start or exits other than 0.
Record run_self(const std::vector<std::string>& args);
// The same for another program of the same protocol (lsjit_bench_gtsam).
Record run_program(const std::string& program, const std::vector<std::string>& args);

}  // namespace lsjit::bench
