// Messages that name what was wrong: one number parser for every flag (no "stod"), ranges
// that keep a loss and a noise inside a double, a cost that overflows said as such, and no
// raw control byte from any input reaching the terminal.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../support/run_cli.h"
#include "../support/scratch_files.h"

namespace {

namespace fs = std::filesystem;
using lsjit::testing::CliRun;
using lsjit::testing::run;


bool has_raw_escape(const std::string& text) { return text.find('\x1b') != std::string::npos; }

}  // namespace

TEST_CASE("messages: a loss scale outside [1e-150, 1e150] is refused by the flag, naming it") {
  const fs::path dir = lsjit::testing::fresh_dir("messages_loss");
  const fs::path graph = dir / "g.g2o";
  REQUIRE(run("generate pose-graph --dim 2 --poses 10 --loop-closures 2 --out " + graph.string()).exit_code == 0);
  for (const std::string loss : {"tukey:4e-324", "cauchy:1e308", "huber:1e-200", "huber:0"}) {
    CAPTURE(loss);
    const CliRun r = run("solve " + graph.string() + " --loss " + loss);
    CAPTURE(r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find("lsjit solve: --loss: expected NAME:SCALE") != std::string::npos);
    CHECK(r.out.find("SCALE in [1e-150, 1e150], not '" + loss + "'") != std::string::npos);
    CHECK(r.out.find("stod") == std::string::npos);
  }
  CHECK(run("solve " + graph.string() + " --loss cauchy:1e150").exit_code == 0);
}

TEST_CASE("messages: generate --noise names the flag and its range") {
  const fs::path dir = lsjit::testing::fresh_dir("messages_noise");
  for (const std::string noise : {"4e-324", "1e308", "-1", "nan", "0x1p3"}) {
    CAPTURE(noise);
    for (const std::string kind : {"pose-graph --dim 2 --poses 5 --loop-closures 0",
                                   "bal --cameras 3 --points 5 --observations-per-point 2"}) {
      const CliRun r = run("generate " + kind + " --noise " + noise + " --out " + (dir / "x").string());
      CAPTURE(r.out);
      CHECK(r.exit_code == 2);
      CHECK(r.out.find("--noise: expected 0 or a standard deviation in [1e-12, 1e6], not '" + noise + "'") !=
            std::string::npos);
    }
  }
  CHECK_FALSE(fs::exists(dir / "x"));
  CHECK(run("generate bal --cameras 3 --points 5 --observations-per-point 2 --noise 0 --out " + (dir / "x").string())
            .exit_code == 0);
}

TEST_CASE("messages: no raw escape byte reaches the terminal from flags, arguments, the cache or LSJIT_TIER") {
  const fs::path dir = lsjit::testing::fresh_dir("messages_escape");
  const std::string esc = "$'\\e]0;owned\\a\\e[2J'";  // bash ANSI-C quoting: retitle, clear
  const fs::path graph = dir / "g.g2o";
  REQUIRE(run("generate pose-graph --dim 2 --poses 10 --loop-closures 2 --out " + graph.string()).exit_code == 0);
  const std::string cli = LSJIT_CLI_PATH;
  fs::create_directories(dir / "cache");
  fs::permissions(dir / "cache", fs::perms::owner_all, fs::perm_options::replace);
  const auto bash = [&](const std::string& line) {
    return lsjit::testing::run_shell("bash -c \"" + line + "\" 2>&1");
  };
  const std::string cases[] = {
      cli + " generate bal --cameras " + esc + " --points 1 --observations-per-point 1 --out x",
      cli + " generate pose-graph --dim 2 --poses 3 --loop-closures 0 --out x --bogus" + esc,
      cli + " generate " + esc,
      cli + " trace " + esc,
      cli + " trace se2_between --stage " + esc,
      cli + " trace se2_between --mode " + esc,
      cli + " cache show " + esc + " --dir " + (dir / "cache").string(),
      cli + " cache " + esc,
      cli + " " + esc,
      "LSJIT_TIER=" + esc + " " + cli + " solve " + graph.string(),
  };
  for (const std::string& line : cases) {
    CAPTURE(line);
    const CliRun r = bash(line);
    CAPTURE(r.out);
    CHECK_FALSE(has_raw_escape(r.out));
    CHECK(r.out.find("\\x1b") != std::string::npos);  // shown, escaped
  }
}

TEST_CASE("messages: a cost whose sum overflows says so, and where") {
  const fs::path dir = lsjit::testing::fresh_dir("messages_overflow");
  // Each residual and its square are finite (1e150² = 1e300), their sum over three edges is
  // not.
  std::string text = "VERTEX_SE2 0 0 0 0\nVERTEX_SE2 1 0 0 0\nVERTEX_SE2 2 0 0 0\nVERTEX_SE2 3 0 0 0\n";
  for (int i = 0; i < 3; ++i)
    text += "EDGE_SE2 " + std::to_string(i) + " " + std::to_string(i + 1) + " 1.3e154 0 0 1 0 0 1 0 1\n";
  const fs::path graph = dir / "sum.g2o";
  std::ofstream(graph) << text;
  const CliRun r = run("solve " + graph.string() + " --init file");  // auto would start where the cost is 0
  CAPTURE(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("the cost overflowed: every instance's cost is finite but their sum exceeds the largest double") !=
        std::string::npos);
  CHECK(r.out.find("(its gradient or Gauss-Newton matrix is)") == std::string::npos);
}
