// `lsjit solve` reads its input once: the format is told from the buffered head and the
// reader goes on from the same descriptor, so FIFOs, pipes and "-" (standard input) work.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "../support/run_cli.h"
#include "../support/scratch_files.h"

namespace {

namespace fs = std::filesystem;
using lsjit::testing::CliRun;


const std::string kCli = LSJIT_CLI_PATH;

// Generates a file and returns the final-cost line of solving it as a regular file.
std::string reference_cost(const fs::path& file, const std::string& generate) {
  REQUIRE(lsjit::testing::run(generate + " --out " + file.string()).exit_code == 0);
  const CliRun r = lsjit::testing::run("solve " + file.string());
  REQUIRE(r.exit_code == 0);
  const size_t at = r.out.find("  Final");
  REQUIRE(at != std::string::npos);
  return r.out.substr(at, r.out.find('\n', at) - at);
}

}  // namespace

TEST_CASE("input once: a FIFO, a pipe on /dev/stdin and '-' solve as the regular file does") {
  const fs::path dir = lsjit::testing::fresh_dir("input_once_kinds");
  // A pose graph larger than the 64 KiB head, so that the reader must go on past it, and a
  // BAL file.
  for (const auto& [name, generate] :
       {std::pair{std::string("graph.g2o"), std::string("generate pose-graph --dim 3 --poses 400 --loop-closures 40")},
        std::pair{std::string("problem.bal"),
                  std::string("generate bal --cameras 8 --points 300 --observations-per-point 3")}}) {
    CAPTURE(name);
    const fs::path file = dir / name;
    const std::string cost = reference_cost(file, generate);

    const fs::path fifo = dir / ("fifo-" + name);
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    const CliRun through_fifo = lsjit::testing::run_shell("(cat " + file.string() + " > " + fifo.string() +
                                                          " &); timeout 60 " + kCli + " solve " + fifo.string() +
                                                          " 2>&1");
    CAPTURE(through_fifo.out);
    CHECK(through_fifo.exit_code == 0);
    CHECK(through_fifo.out.find(cost) != std::string::npos);

    for (const std::string stdin_name : {"/dev/stdin", "-"}) {
      CAPTURE(stdin_name);
      const CliRun piped = lsjit::testing::run_shell("cat " + file.string() + " | timeout 60 " + kCli + " solve " +
                                                     stdin_name + " 2>&1");
      CAPTURE(piped.out);
      CHECK(piped.exit_code == 0);
      CHECK(piped.out.find(cost) != std::string::npos);
    }
  }
}

TEST_CASE("input once: errors in standard input name <stdin> and the line") {
  const CliRun r = lsjit::testing::run_shell("printf 'VERTEX_SE2 0 0 0 0\\nVERTEX_SE2 0 1 0 0\\n' | " + kCli +
                                             " solve - 2>&1");
  CAPTURE(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("<stdin>:2: VERTEX_SE2 0: the vertex id is already defined at line 1") != std::string::npos);
  const CliRun empty = lsjit::testing::run_shell("printf '' | " + kCli + " solve - 2>&1");
  CAPTURE(empty.out);
  CHECK(empty.exit_code == 1);
  CHECK(empty.out.find("<stdin>: cannot tell the format") != std::string::npos);
}
