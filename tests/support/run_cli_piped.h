// Runs the lsjit CLI (LSJIT_CLI_PATH) as a child process whose standard input is the
// output of a shell command, and reads the peak memory of the children that have ended.
#pragma once

#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "run_cli.h"

namespace lsjit::testing {

// `producer | lsjit args`. The exit code is lsjit's (the shell reports the last command of
// a pipeline), so a producer killed by SIGPIPE when lsjit stops reading does not count.
inline CliRun run_cli_piped(const std::string& producer, const std::string& args) {
  return run_shell(producer + " | " + std::string(LSJIT_CLI_PATH) + " " + args + " 2>&1");
}

// The largest peak resident set size, in bytes, of any child (or grandchild waited for by
// a child) of this process that has ended so far: getrusage(RUSAGE_CHILDREN).ru_maxrss.
inline long long children_peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_CHILDREN, &usage);
  return static_cast<long long>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace lsjit::testing
