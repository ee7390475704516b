// The main of a benchmark program: what it does when its work throws.
#pragma once

#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

namespace lsjit::bench {

// Runs `body` (returning the exit status) and reports an exception it throws (a missing
// file, a malformed flag that std::stoi rejects) as "program: what" on stderr with exit
// status 1, instead of letting std::terminate abort the process.
template <class Body>
int report_errors(const char* program, Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
}

// The GTSAM baseline's driver (tools/bench/gtsam/), built beside the benchmarks where
// GTSAM was found, or "" where it was not (the caller says it skips GTSAM).
inline std::string gtsam_program() {
  const std::filesystem::path program =
      std::filesystem::read_symlink("/proc/self/exe").parent_path() / "lsjit_bench_gtsam";
  return std::filesystem::exists(program) ? program.string() : std::string();
}

}  // namespace lsjit::bench
