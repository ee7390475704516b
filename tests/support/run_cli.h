// Runs the lsjit CLI (LSJIT_CLI_PATH, defined for test targets) as a separate process.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace lsjit::testing {

struct CliRun {
  int exit_code;
  std::string out;  // stdout and stderr, interleaved
};

// Runs a shell command line and collects what it prints; the exit code is the shell's.
inline CliRun run_shell(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  CliRun r{0, ""};
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// `environment`: assignments (NAME=VALUE ...) for the child only.
inline CliRun run_cli(const std::string& args, const std::string& environment = "") {
  return run_shell((environment.empty() ? "" : "env " + environment + " ") + std::string(LSJIT_CLI_PATH) +
                   " " + args + " 2>&1");
}

// The tests' usual spelling of run_cli.
inline CliRun run(const std::string& args, const std::string& environment = "") {
  return run_cli(args, environment);
}

}  // namespace lsjit::testing
