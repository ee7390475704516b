// The SVG generator of `lsjit solve --plot` (tools/lsjit/plot_svg.h) on tiny graphs.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "../support/svg_check.h"
#include "lsjit/tools/lsjit/plot_svg.h"

namespace {

using lsjit::cli::Point2;
using lsjit::cli::SolvePlot;
using lsjit::testing::parse_svg;
using lsjit::testing::polyline_points;

// A square walked 0 -> 1 -> 2 -> 3, closed by the loop 3 -> 0.
SolvePlot square() {
  SolvePlot p;
  p.title = "lsjit solve a&b.g2o";
  p.subtitle = "SE2 pose graph";
  p.before = {{0, 0}, {1.2, 0.1}, {1.1, 1.3}, {-0.1, 1.0}};
  p.after = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  p.topology = lsjit::cli::classify_edges({0, 1, 2, 3}, {{0, 1}, {1, 2}, {2, 3}, {3, 0}});
  p.costs = {100, 10, 1, 0.5};
  return p;
}

double distance(std::pair<double, double> a, std::pair<double, double> b) {
  return std::hypot(a.first - b.first, a.second - b.second);
}

}  // namespace

TEST_CASE("classify_edges: consecutive ids are odometry chains, other edges loop closures") {
  // Ids out of order, a gap (4 is missing), an odometry edge given backwards, a vertex (9)
  // without odometry.
  const std::vector<int64_t> ids = {3, 0, 1, 2, 6, 5, 9};
  const auto t = lsjit::cli::classify_edges(ids, {{0, 1}, {2, 1}, {2, 3}, {5, 6}, {3, 0}, {6, 1}, {9, 2}});
  // Indices: 0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0, 5 -> 5, 6 -> 4, 9 -> 6.
  REQUIRE(t.odometry_chains.size() == 2);
  CHECK((t.odometry_chains[0] == std::vector<size_t>{1, 2, 3, 0}));
  CHECK((t.odometry_chains[1] == std::vector<size_t>{5, 4}));
  REQUIRE(t.loop_closures.size() == 3);
  CHECK((t.loop_closures[0] == std::pair<size_t, size_t>{0, 1}));
  CHECK((t.loop_closures[1] == std::pair<size_t, size_t>{4, 2}));
  CHECK((t.loop_closures[2] == std::pair<size_t, size_t>{6, 3}));
  // A missing odometry edge cuts the chain: 0-1 and 2-3 only.
  const auto cut = lsjit::cli::classify_edges({0, 1, 2, 3}, {{0, 1}, {2, 3}});
  CHECK((cut.odometry_chains == std::vector<std::vector<size_t>>{{0, 1}, {2, 3}}));
  CHECK_THROWS_AS(lsjit::cli::classify_edges({0, 1}, {{0, 7}}), std::invalid_argument);
}

TEST_CASE("nice_ticks: steps of 1, 2 or 5 times a power of ten, inside the range") {
  CHECK((lsjit::cli::nice_ticks(0, 10, 5) == std::vector<double>{0, 2, 4, 6, 8, 10}));
  const std::vector<double> t = lsjit::cli::nice_ticks(-0.37, 1.2, 5);
  REQUIRE(t.size() >= 3);
  const double step = t[1] - t[0];
  CHECK(step == doctest::Approx(0.2));
  for (size_t k = 0; k < t.size(); ++k) {
    CHECK(t[k] >= -0.37);
    CHECK(t[k] <= 1.2);
    if (k > 0) CHECK(t[k] - t[k - 1] == doctest::Approx(step));
  }
  CHECK(lsjit::cli::nice_ticks(1, 1, 5).empty());
}

TEST_CASE("xml_escape replaces the five XML specials") {
  CHECK(lsjit::cli::xml_escape("a<b & \"c\" 'd'>") == "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
}

TEST_CASE("solve_plot_svg: a well-formed document with one polyline per chain and panel, one path per panel") {
  const std::string svg = lsjit::cli::solve_plot_svg(square());
  const auto doc = parse_svg(svg);
  CHECK(doc.elements.front().attribute("viewBox") == "0 0 1500.0 600.0");
  CHECK(doc.title == "lsjit solve a&amp;b.g2o");
  CHECK(doc.count("polyline") == 3);  // before, after, cost
  CHECK(doc.count("path") == 2);      // the loop closure, before and after
  CHECK(svg.find(">before: initial estimate<") != std::string::npos);
  CHECK(svg.find(">after<") != std::string::npos);
  CHECK(svg.find("SE2 pose graph") != std::string::npos);
}

TEST_CASE("solve_plot_svg keeps the aspect ratio and one scale for both graph panels") {
  SolvePlot p = square();
  p.before = {{0, 0}, {10, 0}, {10, 1}, {0, 1}};  // 10 x 1
  p.after = {{0, 0}, {5, 0}, {5, 0.5}, {0, 0.5}};  // half the size
  const auto doc = parse_svg(lsjit::cli::solve_plot_svg(p));
  const auto lines = doc.all("polyline");
  REQUIRE(lines.size() == 3);
  const auto before = polyline_points(*lines[0]), after = polyline_points(*lines[1]);
  REQUIRE(before.size() == 4);
  REQUIRE(after.size() == 4);
  // Pixels per unit are the same along x and y (to the 0.1 px rounding) ...
  const double sx = distance(before[0], before[1]) / 10, sy = distance(before[1], before[2]) / 1;
  CHECK(sx == doctest::Approx(sy).epsilon(0.01));
  // ... and in both panels.
  CHECK(distance(after[0], after[1]) / 5 == doctest::Approx(sx).epsilon(0.01));
  // y points up: vertex 2 (y = 1) is above vertex 1 (y = 0) on screen.
  CHECK(before[2].second < before[1].second);
}

TEST_CASE("solve_plot_svg draws the cost on a log scale: decades are equally spaced") {
  SolvePlot p = square();
  p.costs = {1000, 100, 10, 1};
  const auto doc = parse_svg(lsjit::cli::solve_plot_svg(p));
  const auto cost = polyline_points(*doc.all("polyline").back());
  REQUIRE(cost.size() == 4);
  const double d1 = cost[1].second - cost[0].second, d2 = cost[2].second - cost[1].second,
               d3 = cost[3].second - cost[2].second;
  CHECK(d1 > 0);  // decreasing cost goes down the screen
  CHECK(d2 == doctest::Approx(d1).epsilon(0.01));
  CHECK(d3 == doctest::Approx(d1).epsilon(0.01));
  CHECK(doc.count("circle") == 4);
}

TEST_CASE("solve_plot_svg leaves out what cannot be drawn") {
  SolvePlot p = square();
  p.after[2] = {std::numeric_limits<double>::quiet_NaN(), 0};  // cuts the chain after vertex 1
  p.costs = {0.0, 0.0};                                        // no positive cost: no curve
  const std::string svg = lsjit::cli::solve_plot_svg(p);
  const auto doc = parse_svg(svg);
  // before: one chain; after: 0-1 (vertex 3 alone is not a line); no cost curve.
  CHECK(doc.count("polyline") == 2);
  CHECK(doc.count("path") == 2);  // the loop 3 -> 0 is drawable in both panels
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("no positive cost to plot") != std::string::npos);

  p.after = {{0, 0}};
  CHECK_THROWS_AS(lsjit::cli::solve_plot_svg(p), std::invalid_argument);
}

TEST_CASE("bundle_plot_svg: each histogram on its own scale with its RMS and median, outliers in the last bin") {
  lsjit::cli::BundlePlot plot;
  plot.title = "lsjit solve ba.txt";
  for (int k = 0; k < 200; ++k) plot.errors_before.push_back(0.05 * k);  // 0 .. 9.95
  plot.errors_before.push_back(1e9);  // an outlier: counted in the last bin
  plot.errors_before.push_back(std::numeric_limits<double>::quiet_NaN());  // left out
  // After the solve the errors are a hundred times smaller: on the before panel's scale
  // they would all be one bar.
  for (int k = 0; k < 201; ++k) plot.errors_after.push_back(0.0005 * k);  // 0 .. 0.1
  plot.costs = {100, 10, 1};
  const std::string svg = lsjit::cli::bundle_plot_svg(plot);
  const auto doc = parse_svg(svg);
  CHECK(doc.title == "lsjit solve ba.txt");
  CHECK(doc.count("polyline") == 1);
  CHECK(svg.find("nan") == std::string::npos);
  // Before: RMS of 0..9.95 and the outlier; median of the 201 finite ones is 0.05·100 = 5.
  CHECK(svg.find("median 5 (201 errors)") != std::string::npos);
  CHECK(svg.find("RMS 7.053e+07") != std::string::npos);  // the outlier dominates the RMS: 1e9/sqrt(201)
  CHECK(svg.find("median 0.05 (201 errors)") != std::string::npos);
  double before_height = 0, after_height = 0, last_bar_x = 0;
  int after_bars = 0;
  for (const auto* e : doc.all("rect")) {
    if (e->attribute("class") != "bar") continue;
    const double x = std::stod(e->attribute("x")), h = std::stod(e->attribute("height"));
    if (x < 500) {
      before_height += h;
      last_bar_x = std::max(last_bar_x, x);
    } else {
      after_height += h;
      ++after_bars;
    }
  }
  CHECK(after_bars >= 25);                                 // spread over its own range
  CHECK(before_height > 0);
  CHECK(last_bar_x > 24 + 66 + 384 * 29.0 / 30 - 1);       // the outlier's bar in the last bin
}
