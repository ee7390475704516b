// Every output of the CLI (--out, --plot, generate --out) goes through one writer
// (io::detail::AtomicFileWriter): another user's symlink is not followed, an input is never
// overwritten, a failed output never costs another, and a failure says which output and
// why (docs/testing.md, "Output safety").
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../support/run_cli.h"
#include "../support/scratch_files.h"

namespace {

namespace fs = std::filesystem;
using lsjit::testing::CliRun;
using lsjit::testing::run;



// A small pose graph to solve, written by lsjit generate.
fs::path small_graph(const fs::path& dir) {
  const fs::path g = dir / "graph.g2o";
  REQUIRE(run("generate pose-graph --dim 2 --poses 30 --loop-closures 5 --out " + g.string()).exit_code == 0);
  return g;
}

constexpr uid_t kNobody = 65534;

}  // namespace

TEST_CASE("outputs: another user's symlink in a shared sticky directory is not followed") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: planting a link owned by another user needs root");
    return;
  }
  const fs::path dir = lsjit::testing::fresh_dir("outputs_symlink");
  const fs::path graph = small_graph(dir);
  const fs::path private_dir = dir / "private";
  const fs::path shared = dir / "shared";
  fs::create_directories(private_dir);
  fs::create_directories(shared);
  REQUIRE(::chmod(shared.c_str(), 01777) == 0);  // as /tmp
  const fs::path secret = private_dir / "secret";
  lsjit::testing::put_file(secret, "root's data\n");
  REQUIRE(::chmod(secret.c_str(), 0600) == 0);

  // nobody's links: to the secret, and dangling into the private folder.
  const fs::path link = shared / "result.g2o";
  const fs::path dangling = shared / "plot.svg";
  fs::create_symlink(secret, link);
  fs::create_symlink(private_dir / "planted.svg", dangling);
  REQUIRE(::lchown(link.c_str(), kNobody, kNobody) == 0);
  REQUIRE(::lchown(dangling.c_str(), kNobody, kNobody) == 0);

  const CliRun solve = run("solve " + graph.string() + " --out " + link.string());
  CAPTURE(solve.out);
  CHECK(solve.exit_code == 1);
  CHECK(solve.out.find("--out: " + link.string() + ": cannot write: it is a symlink owned by user 65534") !=
        std::string::npos);
  CHECK(solve.out.find("Solver Summary") == std::string::npos);  // refused before the solve
  CHECK(lsjit::testing::file_contents(secret) == "root's data\n");

  const CliRun generate = run("generate pose-graph --dim 2 --poses 5 --loop-closures 0 --out " + link.string());
  CAPTURE(generate.out);
  CHECK(generate.exit_code != 0);
  CHECK(generate.out.find("it is a symlink owned by user 65534") != std::string::npos);
  CHECK(lsjit::testing::file_contents(secret) == "root's data\n");

  const CliRun plot = run("solve " + graph.string() + " --plot " + dangling.string());
  CAPTURE(plot.out);
  CHECK(plot.exit_code == 1);
  CHECK(plot.out.find("--plot: " + dangling.string() + ": cannot write: it is a symlink owned by user 65534") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(private_dir / "planted.svg"));

  // The user's own link is followed, as before; so is nobody's link in nobody's own
  // private folder (only nobody could have changed either).
  const fs::path own = shared / "own.g2o";
  fs::create_symlink(private_dir / "own-target.g2o", own);
  CHECK(run("solve " + graph.string() + " --out " + own.string()).exit_code == 0);
  CHECK(fs::is_symlink(own));
  CHECK(lsjit::testing::file_contents(private_dir / "own-target.g2o").rfind("VERTEX_SE2", 0) == 0);
  const fs::path nobody_home = dir / "nobody";
  fs::create_directories(nobody_home);
  REQUIRE(::chown(nobody_home.c_str(), kNobody, kNobody) == 0);
  REQUIRE(::chmod(nobody_home.c_str(), 0755) == 0);
  const fs::path their_link = nobody_home / "out.g2o";
  fs::create_symlink(private_dir / "their-target.g2o", their_link);
  REQUIRE(::lchown(their_link.c_str(), kNobody, kNobody) == 0);
  CHECK(run("solve " + graph.string() + " --out " + their_link.string()).exit_code == 0);
  CHECK(fs::exists(private_dir / "their-target.g2o"));
}

TEST_CASE("outputs: --plot never replaces the input, and a refused plot still leaves the solution") {
  const fs::path dir = lsjit::testing::fresh_dir("outputs_plot_input");
  const fs::path graph = small_graph(dir);
  const std::string before = lsjit::testing::file_contents(graph);
  const fs::path solution = dir / "solution.g2o";
  const CliRun r = run("solve " + graph.string() + " --plot " + graph.string() + " --out " + solution.string());
  CAPTURE(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("--plot " + graph.string() + ": cannot write: it is the input " + graph.string()) !=
        std::string::npos);
  CHECK(lsjit::testing::file_contents(graph) == before);
  CHECK(lsjit::testing::file_contents(solution).rfind("VERTEX_SE2", 0) == 0);

  // Through a link to the input, and --out onto the input: refused too.
  const fs::path alias = dir / "alias.g2o";
  fs::create_symlink(graph, alias);
  const CliRun out = run("solve " + graph.string() + " --out " + alias.string());
  CAPTURE(out.out);
  CHECK(out.exit_code == 1);
  CHECK(out.out.find("cannot write: it is the input") != std::string::npos);
  CHECK(lsjit::testing::file_contents(graph) == before);

  // Two outputs onto one file.
  const CliRun twice = run("solve " + graph.string() + " --out " + solution.string() + " --plot " + solution.string());
  CHECK(twice.out.find("another output of this run writes that file") != std::string::npos);
}

TEST_CASE("outputs: --plot onto /dev/full or a FIFO is refused at once and the solution is written") {
  const fs::path dir = lsjit::testing::fresh_dir("outputs_plot_special");
  const fs::path graph = small_graph(dir);
  const fs::path solution = dir / "solution.g2o";
  const CliRun full = run("solve " + graph.string() + " --plot /dev/full --out " + solution.string());
  CAPTURE(full.out);
  CHECK(full.exit_code == 1);
  CHECK(full.out.find("--plot: /dev/full: cannot write: is a character device") != std::string::npos);
  CHECK(lsjit::testing::file_contents(solution).rfind("VERTEX_SE2", 0) == 0);

  const fs::path fifo = dir / "plot.svg";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const CliRun pipe = lsjit::testing::run_shell("timeout 60 " + std::string(LSJIT_CLI_PATH) + " solve " +
                                                graph.string() + " --plot " + fifo.string() + " 2>&1");
  CAPTURE(pipe.out);
  CHECK(pipe.exit_code == 1);  // not 124: no hang
  CHECK(pipe.out.find("is a FIFO") != std::string::npos);
}

TEST_CASE("outputs: a write that fails part way keeps the old file, says which output and why, "
          "and the other output is still written") {
  const fs::path dir = lsjit::testing::fresh_dir("outputs_partial");
  const fs::path graph = small_graph(dir);
  const fs::path solution = dir / "solution.g2o", plot = dir / "plot.svg";
  lsjit::testing::put_file(solution, "old solution\n");
  lsjit::testing::put_file(plot, "old plot\n");
  // A file-size limit of 1 KiB stands for a full disk: both outputs are larger.
  const std::string cli = std::string(LSJIT_CLI_PATH);
  const CliRun both = lsjit::testing::run_shell("ulimit -f 1; trap '' XFSZ; " + cli + " solve " + graph.string() +
                                                " --out " + solution.string() + " --plot " + plot.string() + " 2>&1");
  CAPTURE(both.out);
  CHECK(both.exit_code == 1);
  CHECK(both.out.find("lsjit solve: --out: " + solution.string() + ": cannot write: File too large") !=
        std::string::npos);
  CHECK(both.out.find("lsjit solve: --plot: " + plot.string() + ": cannot write: File too large") !=
        std::string::npos);
  CHECK(lsjit::testing::file_contents(solution) == "old solution\n");
  CHECK(lsjit::testing::file_contents(plot) == "old plot\n");
  // The solution fails, the plot (smaller) is written.
  const CliRun one = lsjit::testing::run_shell("ulimit -f 8; trap '' XFSZ; " + cli + " solve " + graph.string() +
                                               " --out " + solution.string() + " --plot " + plot.string() + " 2>&1");
  CAPTURE(one.out);
  if (fs::file_size(graph) > 8192) {
    CHECK(one.exit_code == 1);
    CHECK(lsjit::testing::file_contents(solution) == "old solution\n");
    CHECK(lsjit::testing::file_contents(plot).find("<svg") != std::string::npos);
  }
  // No temporary file is left behind.
  for (const auto& e : fs::directory_iterator(dir)) CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
}

TEST_CASE("outputs: a failed solve with --out says that no solution was written") {
  const fs::path dir = lsjit::testing::fresh_dir("outputs_failed");
  const fs::path graph = dir / "overflow.g2o";
  // Finite numbers whose residual's square overflows: the cost at the start is not finite.
  // (--init auto would start chordally, where the cost is 0.)
  lsjit::testing::put_file(graph, "VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 0 0 0\nEDGE_SE2 0 1 1e300 0 0 1 0 0 1 0 1\n");
  const fs::path solution = dir / "solution.g2o";
  const CliRun r = run("solve " + graph.string() + " --init file --out " + solution.string());
  CAPTURE(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("the solve failed: no solution written to " + solution.string()) != std::string::npos);
  CHECK(r.out.find("the cost overflowed at cost 'se2_between' instance 0: its residuals are finite") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(solution));
}
