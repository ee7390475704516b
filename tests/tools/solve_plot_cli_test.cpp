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
using lsjit::testing::run;

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
    // loop closures are one path per graph panel. A 3D graph has three rows of graph
    // panels: its x-y, x-z and y-z projections.
    const size_t graph_panels = dim == 3 ? 6 : 2;
    CHECK(doc.count("polyline") == graph_panels + 1);
    CHECK(doc.count("path") == graph_panels);
    CHECK(lsjit::testing::polyline_points(*doc.all("polyline")[0]).size() == 80);
    CHECK(lsjit::testing::polyline_points(*doc.all("polyline")[1]).size() == 80);
    CHECK(doc.count("circle") == static_cast<size_t>(iterations) + 1);  // one per cost, the initial too
    CHECK(text.find("80 poses, 89 edges (10 loop closures)") != std::string::npos);
    CHECK(text.find("after: " + std::to_string(iterations) + " iterations") != std::string::npos);
    CHECK((text.find("projected on the x-y, x-z and y-z planes") != std::string::npos) == (dim == 3));
    CHECK((text.find("before: initial estimate (x-z)") != std::string::npos) == (dim == 3));
    CHECK((text.find("(y-z)</text>") != std::string::npos) == (dim == 3));
    if (dim == 3) {  // the rows are stacked: the y-z row's panels lie below the x-y row's
      const auto polylines = doc.all("polyline");
      CHECK(lsjit::testing::polyline_points(*polylines[4]).size() == 80);
      CHECK(lsjit::testing::polyline_points(*polylines[4])[0].second >
            lsjit::testing::polyline_points(*polylines[0])[0].second + 400);
    }
  }
}

TEST_CASE("lsjit solve --plot: usage errors exit with 2, an unwritable file with 1") {
  const fs::path dir = fresh_dir("errors");
  const fs::path graph = dir / "graph.g2o", bal = dir / "bal.txt";
  REQUIRE(run("generate pose-graph --dim 2 --poses 20 --loop-closures 2 --out " + graph.string()).exit_code == 0);
  REQUIRE(run("generate bal --cameras 2 --points 5 --observations-per-point 2 --out " + bal.string()).exit_code == 0);
  CHECK(run("solve " + graph.string() + " --plot").exit_code == 2);
  const Run unwritable = run("solve " + graph.string() + " --plot " + (dir / "missing" / "x.svg").string());
  CAPTURE(unwritable.out);
  CHECK(unwritable.exit_code == 1);
  // Refused before the solve, naming the flag, the file and the reason; the solve goes on.
  CHECK(unwritable.out.find("lsjit solve: --plot: " + (dir / "missing" / "x.svg").string() +
                            ": cannot write: No such file or directory; solving without the plot") !=
        std::string::npos);
  CHECK(unwritable.out.find("Solver Summary") != std::string::npos);
  // The plot is SVG: another extension is refused before anything is read or written.
  const Run png = run("solve " + graph.string() + " --plot " + (dir / "out.png").string());
  CHECK(png.exit_code == 2);
  CHECK(png.out.find("--plot: the plot is SVG: expected a file name ending in .svg, not '") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out.png"));
  CHECK(run("solve " + graph.string() + " --plot " + (dir / "upper.SVG").string()).exit_code == 0);
}

TEST_CASE("lsjit --help lists solve's --plot and --init") {
  const Run help = run("--help");
  CHECK(help.out.find("[--plot FILE.svg]") != std::string::npos);
  CHECK(help.out.find("[--init auto|file|chordal]") != std::string::npos);
}

// Issue 19, item 2: a BAL file's --plot solves and draws what fits bundle adjustment:
// reprojection-error histograms before and after, and the cost per iteration.
TEST_CASE("lsjit solve FILE.bal --plot draws reprojection errors before and after, and the cost") {
  const fs::path dir = fresh_dir("bal");
  const fs::path bal = dir / "bal.txt", svg = dir / "bal.svg";
  REQUIRE(run("generate bal --cameras 4 --points 60 --observations-per-point 3 --noise 0.5 --out " + bal.string())
              .exit_code == 0);
  const Run r = run("solve " + bal.string() + " --plot " + svg.string() + " --json");
  CAPTURE(r.out);
  REQUIRE(r.exit_code == 0);
  REQUIRE(fs::exists(svg));
  std::ifstream in(svg);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto doc = lsjit::testing::parse_svg(text);
  CHECK(doc.title == "lsjit solve bal.txt");
  CHECK(text.find("4 cameras, 60 points, 180 observations") != std::string::npos);
  CHECK(text.find(">before: initial estimate<") != std::string::npos);
  CHECK(text.find(">after: ") != std::string::npos);
  CHECK(text.find("reprojection error (pixels)") != std::string::npos);
  CHECK(doc.count("polyline") == 1);  // the cost curve
  // Each histogram is drawn on its own scales, so the result spreads over several bars
  // rather than sitting in the first; each panel gives its errors' RMS and median.
  int bars[2] = {0, 0};
  for (const auto* e : doc.all("rect"))
    if (e->attribute("class") == "bar") ++bars[std::stod(e->attribute("x")) < 500 ? 0 : 1];
  CHECK(bars[0] >= 3);
  CHECK(bars[1] >= 3);
  size_t stats = 0;
  for (size_t at = text.find("RMS "); at != std::string::npos; at = text.find("RMS ", at + 1)) ++stats;
  CHECK(stats == 2);
  CHECK(text.find("(180 errors)") != std::string::npos);
}
