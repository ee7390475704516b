// lsjit solve FILE.g2o --plot FILE.svg, run as a separate process.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../support/run_cli.h"
#include "../support/svg_check.h"

namespace {

namespace fs = std::filesystem;
using Run = lsjit::testing::CliRun;
Run run(const std::string& args) { return lsjit::testing::run_cli(args); }

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(LSJIT_TEST_TMP_DIR) / ("plot_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("lsjit solve --plot draws a 2D and a 3D pose graph before and after, and the cost per iteration") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const fs::path dir = fresh_dir("graph" + std::to_string(dim));
    const fs::path file = dir / "graph.g2o", svg = dir / "graph.svg";
    REQUIRE(run("generate pose-graph --dim " + std::to_string(dim) +
                " --poses 80 --loop-closures 10 --seed 3 --out " + file.string()).exit_code == 0);
    const Run r = run("solve " + file.string() + " --json --plot " + svg.string());
    CAPTURE(r.out);
    REQUIRE(r.exit_code == 0);
    const size_t at = r.out.find("\"iterations\": ");
    REQUIRE(at != std::string::npos);
    const int iterations = std::stoi(r.out.substr(at + 14));

    const std::string text = read(svg);
    const auto doc = lsjit::testing::parse_svg(text);
    CHECK(!doc.elements.front().attribute("viewBox").empty());
    CHECK(doc.title == "lsjit solve graph.g2o");
    // One odometry chain (0 -> 1 -> ... -> 79) per graph panel, plus the cost curve; the
    // loop closures are one path per graph panel.
    CHECK(doc.count("polyline") == 3);
    CHECK(doc.count("path") == 2);
    CHECK(lsjit::testing::polyline_points(*doc.all("polyline")[0]).size() == 80);
    CHECK(lsjit::testing::polyline_points(*doc.all("polyline")[1]).size() == 80);
    CHECK(doc.count("circle") == static_cast<size_t>(iterations) + 1);  // one per cost, the initial too
    CHECK(text.find("80 poses, 89 edges (10 loop closures)") != std::string::npos);
    CHECK(text.find("after: " + std::to_string(iterations) + " iterations") != std::string::npos);
    CHECK((text.find("projected on the x-y plane") != std::string::npos) == (dim == 3));
  }
}

TEST_CASE("lsjit solve --plot: usage errors exit with 2, an unwritable file with 1") {
  const fs::path dir = fresh_dir("errors");
  const fs::path graph = dir / "graph.g2o", bal = dir / "bal.txt";
  REQUIRE(run("generate pose-graph --dim 2 --poses 20 --loop-closures 2 --out " + graph.string()).exit_code == 0);
  REQUIRE(run("generate bal --cameras 2 --points 5 --observations-per-point 2 --out " + bal.string()).exit_code == 0);
  CHECK(run("solve " + graph.string() + " --plot").exit_code == 2);
  const Run on_bal = run("solve " + bal.string() + " --plot " + (dir / "bal.svg").string());
  CAPTURE(on_bal.out);
  CHECK(on_bal.exit_code == 2);
  CHECK(on_bal.out.find("--plot draws pose graphs") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "bal.svg"));
  const Run unwritable = run("solve " + graph.string() + " --plot " + (dir / "missing" / "x.svg").string());
  CAPTURE(unwritable.out);
  CHECK(unwritable.exit_code == 1);
  CHECK(unwritable.out.find("cannot write the plot") != std::string::npos);
}
