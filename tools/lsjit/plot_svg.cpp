// The SVG of `lsjit solve --plot` (plot_svg.h). Coordinates are written with one decimal
// (a tenth of a pixel), which keeps the files of large graphs small.
#include "plot_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace lsjit::cli {
namespace {

// Canvas layout, in pixels. Three panels of equal width; each plot area is a square so that
// the graph panels keep the aspect ratio of the data.
constexpr double kCanvasWidth = 1500, kCanvasHeight = 600;
constexpr double kPanelLeft = 24, kPanelWidth = 470, kPanelGap = 20;
constexpr double kPlotInsetLeft = 66, kPlotTop = 112, kPlotSize = 384;
constexpr double kPlotBottom = kPlotTop + kPlotSize;
// A further row of graph panels (SolvePlot::more_views): the plot, its tick labels and axis
// name, and the next row's heading.
constexpr double kRowHeight = kPlotSize + 96;

constexpr const char* kOdometryColor = "#1f5fa8";
constexpr const char* kLoopColor = "#d6452b";
constexpr const char* kCostColor = "#2a7f3f";
constexpr const char* kGridColor = "#e4e4e4";
constexpr const char* kTextColor = "#222222";

bool finite(const Point2& p) { return std::isfinite(p.x) && std::isfinite(p.y); }

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}
std::string px(double v) { return fixed(v, 1); }

std::string general(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// A tick label: as many decimals as the tick step needs, no "-0".
std::string tick_label(double v, double step) {
  const int decimals = std::max(0, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
  if (std::abs(v) < step * 1e-9) v = 0;
  return fixed(v, decimals);
}

class Svg {
 public:
  Svg& raw(const std::string& s) {
    out_ << s;
    return *this;
  }
  void text(double x, double y, const std::string& content, double size, const std::string& extra = "") {
    out_ << "<text x=\"" << px(x) << "\" y=\"" << px(y) << "\" font-size=\"" << size << "\"" << extra << ">"
         << xml_escape(content) << "</text>\n";
  }
  void line(double x1, double y1, double x2, double y2, const std::string& stroke, double width) {
    out_ << "<line x1=\"" << px(x1) << "\" y1=\"" << px(y1) << "\" x2=\"" << px(x2) << "\" y2=\"" << px(y2)
         << "\" stroke=\"" << stroke << "\" stroke-width=\"" << width << "\"/>\n";
  }
  void frame(double x, double y, double w, double h) {
    out_ << "<rect x=\"" << px(x) << "\" y=\"" << px(y) << "\" width=\"" << px(w) << "\" height=\"" << px(h)
         << "\" fill=\"none\" stroke=\"#888888\" stroke-width=\"1\"/>\n";
  }
  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

// A square plot area and the linear map from data to pixels (y up).
struct Area {
  double left, top, size;
  double x0, x1, y0, y1;  // data range shown
  double sx(double x) const { return left + (x - x0) / (x1 - x0) * size; }
  double sy(double y) const { return top + size - (y - y0) / (y1 - y0) * size; }
};

double panel_x(int i) { return kPanelLeft + i * (kPanelWidth + kPanelGap); }

void panel_heading(Svg& svg, int i, const std::string& heading, double plot_top = kPlotTop) {
  svg.text(panel_x(i) + kPlotInsetLeft, plot_top - 12, heading, 15, " font-weight=\"bold\"");
}

// Grid lines, tick marks and tick labels of a linear axis pair, then the frame.
void linear_axes(Svg& svg, const Area& a, const std::vector<double>& xticks, const std::vector<double>& yticks,
                 double xstep, double ystep) {
  for (double t : xticks) svg.line(a.sx(t), a.top, a.sx(t), a.top + a.size, kGridColor, 1);
  for (double t : yticks) svg.line(a.left, a.sy(t), a.left + a.size, a.sy(t), kGridColor, 1);
  for (double t : xticks) {
    svg.line(a.sx(t), a.top + a.size, a.sx(t), a.top + a.size + 5, "#888888", 1);
    svg.text(a.sx(t), a.top + a.size + 19, tick_label(t, xstep), 11, " text-anchor=\"middle\"");
  }
  for (double t : yticks) {
    svg.line(a.left - 5, a.sy(t), a.left, a.sy(t), "#888888", 1);
    svg.text(a.left - 8, a.sy(t) + 4, tick_label(t, ystep), 11, " text-anchor=\"end\"");
  }
  svg.frame(a.left, a.top, a.size, a.size);
}

void axis_names(Svg& svg, const Area& a, const std::string& x_name, const std::string& y_name) {
  svg.text(a.left + a.size / 2, a.top + a.size + 38, x_name, 12, " text-anchor=\"middle\"");
  const double x = a.left - 52, y = a.top + a.size / 2;
  svg.text(x, y, y_name, 12, " text-anchor=\"middle\" transform=\"rotate(-90 " + px(x) + " " + px(y) + ")\"");
}

double tick_step(const std::vector<double>& ticks, double fallback) {
  return ticks.size() >= 2 ? ticks[1] - ticks[0] : fallback;
}

// One graph panel: the odometry chains as polylines, the loop closures as one path.
void graph_panel(Svg& svg, int i, const std::string& heading, const std::vector<Point2>& pos,
                 const GraphTopology& topology, const Area& a, const std::string& x_name, const std::string& y_name) {
  panel_heading(svg, i, heading, a.top);
  const std::vector<double> xt = nice_ticks(a.x0, a.x1, 5), yt = nice_ticks(a.y0, a.y1, 5);
  linear_axes(svg, a, xt, yt, tick_step(xt, a.x1 - a.x0), tick_step(yt, a.y1 - a.y0));
  axis_names(svg, a, x_name, y_name);

  std::string loops;
  for (const auto& [u, v] : topology.loop_closures) {
    if (u >= pos.size() || v >= pos.size() || !finite(pos[u]) || !finite(pos[v])) continue;
    loops += "M" + px(a.sx(pos[u].x)) + " " + px(a.sy(pos[u].y)) + "L" + px(a.sx(pos[v].x)) + " " +
             px(a.sy(pos[v].y));
  }
  if (!loops.empty())
    svg.raw("<path d=\"" + loops + "\" fill=\"none\" stroke=\"" + kLoopColor +
            "\" stroke-width=\"0.6\" stroke-opacity=\"0.55\"/>\n");

  // A chain is cut at vertices that cannot be drawn; each drawable run of two or more
  // vertices is one polyline.
  auto flush = [&](std::string& points, int& n) {
    if (n >= 2)
      svg.raw("<polyline points=\"" + points + "\" fill=\"none\" stroke=\"" + kOdometryColor +
              "\" stroke-width=\"1.4\" stroke-linejoin=\"round\"/>\n");
    points.clear();
    n = 0;
  };
  for (const auto& chain : topology.odometry_chains) {
    std::string points;
    int n = 0;
    for (size_t k : chain) {
      if (k >= pos.size() || !finite(pos[k])) {
        flush(points, n);
        continue;
      }
      if (n > 0) points += ' ';
      points += px(a.sx(pos[k].x)) + "," + px(a.sy(pos[k].y));
      ++n;
    }
    flush(points, n);
  }
}

// The cost panel: log10 of the positive finite costs against the iteration.
void cost_panel(Svg& svg, int i, const std::vector<double>& costs) {
  panel_heading(svg, i, "cost per iteration (log scale)");
  const double left = panel_x(i) + kPlotInsetLeft;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double c : costs)
    if (std::isfinite(c) && c > 0) {
      lo = std::min(lo, std::log10(c));
      hi = std::max(hi, std::log10(c));
    }
  if (!(lo <= hi)) {
    svg.frame(left, kPlotTop, kPlotSize, kPlotSize);
    svg.text(left + kPlotSize / 2, kPlotTop + kPlotSize / 2, "no positive cost to plot", 13,
             " text-anchor=\"middle\"");
    return;
  }
  // Whole decades, at least one.
  const double d0 = std::floor(lo), d1 = std::max(std::ceil(hi), d0 + 1);
  const double last = std::max<double>(1, static_cast<double>(costs.size()) - 1);
  const Area a{left, kPlotTop, kPlotSize, 0, last, d0, d1};

  std::vector<double> xticks;
  for (double t : nice_ticks(0, last, 6))
    if (t == std::floor(t)) xticks.push_back(t);
  const int decades = static_cast<int>(d1 - d0);
  const int every = (decades + 7) / 8;  // at most about 8 labelled decades
  // Minor grid at 2..9 x 10^k when there is room for it.
  if (decades <= 4)
    for (int k = static_cast<int>(d0); k < static_cast<int>(d1); ++k)
      for (int m = 2; m <= 9; ++m) {
        const double y = a.sy(k + std::log10(m));
        svg.line(a.left, y, a.left + a.size, y, "#f2f2f2", 1);
      }
  for (double t : xticks) svg.line(a.sx(t), a.top, a.sx(t), a.top + a.size, kGridColor, 1);
  for (int k = static_cast<int>(d0); k <= static_cast<int>(d1); ++k) {
    if ((k - static_cast<int>(d0)) % every != 0) continue;
    const double y = a.sy(k);
    svg.line(a.left, y, a.left + a.size, y, kGridColor, 1);
    svg.line(a.left - 5, y, a.left, y, "#888888", 1);
    svg.raw("<text x=\"" + px(a.left - 8) + "\" y=\"" + px(y + 4) +
            "\" font-size=\"11\" text-anchor=\"end\">10<tspan dy=\"-5\" font-size=\"8\">" + std::to_string(k) +
            "</tspan></text>\n");
  }
  for (double t : xticks) {
    svg.line(a.sx(t), a.top + a.size, a.sx(t), a.top + a.size + 5, "#888888", 1);
    svg.text(a.sx(t), a.top + a.size + 19, tick_label(t, 1), 11, " text-anchor=\"middle\"");
  }
  svg.frame(a.left, a.top, a.size, a.size);
  axis_names(svg, a, "iteration", "cost = \u00bd \u03a3 |r|\u00b2");

  std::string points, markers;
  for (size_t k = 0; k < costs.size(); ++k) {
    if (!std::isfinite(costs[k]) || costs[k] <= 0) continue;
    const double x = a.sx(static_cast<double>(k)), y = a.sy(std::log10(costs[k]));
    points += (points.empty() ? "" : " ") + px(x) + "," + px(y);
    markers += "<circle cx=\"" + px(x) + "\" cy=\"" + px(y) + "\" r=\"2.6\" fill=\"" + kCostColor + "\"/>\n";
  }
  svg.raw("<polyline points=\"" + points + "\" fill=\"none\" stroke=\"" + kCostColor +
          "\" stroke-width=\"1.6\" stroke-linejoin=\"round\"/>\n");
  svg.raw(markers);
  const double tx = a.left + a.size - 8;
  svg.text(tx, a.top + 18, "initial " + general(costs.front()), 12, " text-anchor=\"end\"");
  svg.text(tx, a.top + 34, "final " + general(costs.back()), 12, " text-anchor=\"end\"");
}

// A histogram panel: `values` (the finite ones) counted in kHistogramBins equal bins over
// [0, top), the last bin also holding every value >= top; bars are <rect class="bar">, the
// y axis (count) runs to y_max, shared by the panels that are compared.
constexpr int kHistogramBins = 30;
std::vector<size_t> histogram(const std::vector<double>& values, double top) {
  std::vector<size_t> counts(kHistogramBins, 0);
  for (double v : values)
    if (std::isfinite(v) && v >= 0)
      ++counts[std::min<size_t>(kHistogramBins - 1, static_cast<size_t>(v / top * kHistogramBins))];
  return counts;
}

void histogram_panel(Svg& svg, int i, const std::string& heading, const std::vector<size_t>& counts,
                     double top, double y_max, const std::string& x_name) {
  panel_heading(svg, i, heading);
  const Area a{panel_x(i) + kPlotInsetLeft, kPlotTop, kPlotSize, 0, top, 0, y_max};
  const std::vector<double> xt = nice_ticks(0, top, 5), yt = nice_ticks(0, y_max, 5);
  linear_axes(svg, a, xt, yt, tick_step(xt, top), tick_step(yt, y_max));
  axis_names(svg, a, x_name, "count");
  const double width = a.size / kHistogramBins;
  for (size_t b = 0; b < counts.size(); ++b) {
    if (counts[b] == 0) continue;
    const double y = a.sy(static_cast<double>(counts[b]));
    svg.raw("<rect class=\"bar\" x=\"" + px(a.left + b * width) + "\" y=\"" + px(y) + "\" width=\"" +
            px(width - 1) + "\" height=\"" + px(a.top + a.size - y) + "\" fill=\"" + kOdometryColor + "\"/>\n");
  }
}

// What a histogram panel says of its errors (the finite, non-negative ones): its x range,
// a little past the 99th percentile (so that a few huge outliers, counted in the last bin,
// do not squeeze the rest into one bar, and a constant error is not all in the last bin),
// and the RMS and median printed under it.
struct ErrorStatistics {
  double top = 1, rms = 0, median = 0;
  size_t count = 0;
};

ErrorStatistics error_statistics(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x) || x < 0; }), v.end());
  ErrorStatistics s;
  s.count = v.size();
  if (v.empty()) return s;
  double sum = 0;
  for (double x : v) sum += x * x;
  s.rms = std::sqrt(sum / static_cast<double>(v.size()));
  std::sort(v.begin(), v.end());
  s.median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  const double p99 = v[(v.size() - 1) * 99 / 100];
  s.top = p99 > 0 ? 1.1 * p99 : 1;
  return s;
}

// One panel of errors: the histogram on its own scales, and its statistics below it.
void error_panel(Svg& svg, int i, const std::string& heading, const std::vector<double>& errors,
                 const ErrorStatistics& stats, const std::string& x_name) {
  const std::vector<size_t> counts = histogram(errors, stats.top);
  const double y_max = static_cast<double>(std::max<size_t>(1, *std::max_element(counts.begin(), counts.end()))) * 1.05;
  histogram_panel(svg, i, heading, counts, stats.top, y_max, x_name);
  svg.text(panel_x(i) + kPlotInsetLeft, kPlotBottom + 48,
           "RMS " + general(stats.rms) + ", median " + general(stats.median) + " (" + std::to_string(stats.count) +
               " errors)",
           12);
}

void legend(Svg& svg, double y) {
  const double x = panel_x(0) + kPlotInsetLeft;
  svg.line(x, y, x + 28, y, kOdometryColor, 1.4);
  svg.text(x + 34, y + 4, "odometry (i \u2192 i+1)", 12);
  svg.line(x + 190, y, x + 218, y, kLoopColor, 0.9);
  svg.text(x + 224, y + 4, "loop closure", 12);
}

}  // namespace

GraphTopology classify_edges(const std::vector<int64_t>& ids,
                             const std::vector<std::pair<int64_t, int64_t>>& edges) {
  std::map<int64_t, size_t> index;
  for (size_t k = 0; k < ids.size(); ++k) index.emplace(ids[k], k);
  auto consecutive = [](int64_t a, int64_t b) {
    return (a != std::numeric_limits<int64_t>::max() && a + 1 == b) ||
           (b != std::numeric_limits<int64_t>::max() && b + 1 == a);
  };
  GraphTopology t;
  std::set<int64_t> odometry_from;  // i such that an edge joins i and i + 1
  for (const auto& [from, to] : edges) {
    const auto f = index.find(from), g = index.find(to);
    if (f == index.end() || g == index.end())
      throw std::invalid_argument("classify_edges: an edge names a vertex that is not in the graph");
    if (consecutive(from, to)) odometry_from.insert(std::min(from, to));
    else t.loop_closures.emplace_back(f->second, g->second);
  }
  std::vector<size_t> chain;
  for (auto it = index.begin(); it != index.end(); ++it) {
    const auto next = std::next(it);
    if (chain.empty()) chain.push_back(it->second);
    if (next != index.end() && consecutive(it->first, next->first) && odometry_from.count(it->first)) {
      chain.push_back(next->second);
    } else {
      if (chain.size() >= 2) t.odometry_chains.push_back(chain);
      chain.clear();
    }
  }
  return t;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  std::vector<double> ticks;
  if (!(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi) || target < 1) return ticks;
  const double raw = (hi - lo) / target;
  const int exponent = static_cast<int>(std::floor(std::log10(raw)));
  const double n = raw / std::pow(10.0, exponent);
  const double multiple = n < 1.5 ? 1 : n < 3.5 ? 2 : n < 7.5 ? 5 : 10;
  // k · multiple is an exact integer and 10^|exponent| an exact power of ten (for the
  // exponents of plots), so each tick is the double nearest its decimal value: 1.2, not
  // 6 · 0.2 = 1.2000000000000002.
  const double power = std::pow(10.0, std::abs(exponent));
  auto tick = [&](double k) { return exponent < 0 ? k * multiple / power : k * multiple * power; };
  const double step = tick(1);
  for (double k = std::floor(lo / step) - 1;; ++k) {
    const double v = tick(k);
    if (v > hi) break;
    if (v >= lo) ticks.push_back(v);
  }
  return ticks;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {
// The document's start: canvas, <title>, background, title and subtitle lines.
void document_start(Svg& svg, const std::string& title, const std::string& subtitle,
                    double height = kCanvasHeight) {
  svg.raw("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + px(kCanvasWidth) + "\" height=\"" +
          px(height) + "\" viewBox=\"0 0 " + px(kCanvasWidth) + " " + px(height) +
          "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\" fill=\"" + kTextColor + "\">\n");
  svg.raw("<title>" + xml_escape(title) + "</title>\n");
  svg.raw("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
  svg.text(kPanelLeft, 36, title, 20, " font-weight=\"bold\"");
  if (!subtitle.empty()) svg.text(kPanelLeft, 60, subtitle, 13, " fill=\"#555555\"");
}
}  // namespace

namespace {
// One row of graph panels: before and after of one projection, on one scale (the square
// around every drawable vertex of both, 4% margin; x and y at the same scale).
void projection_row(Svg& svg, const GraphView& view, const std::string& after_label, const GraphTopology& topology,
                    double plot_top) {
  if (view.before.size() != view.after.size())
    throw std::invalid_argument("solve_plot_svg: before and after have different numbers of vertices");
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  for (const auto* positions : {&view.before, &view.after})
    for (const Point2& p : *positions)
      if (finite(p)) {
        x0 = std::min(x0, p.x), x1 = std::max(x1, p.x);
        y0 = std::min(y0, p.y), y1 = std::max(y1, p.y);
      }
  if (!(x0 <= x1)) x0 = y0 = -1, x1 = y1 = 1;  // nothing drawable
  const double span = std::max({x1 - x0, y1 - y0, 1e-9 * std::max({std::abs(x0), std::abs(y0), 1.0})}) * 1.08;
  const double cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
  for (int i = 0; i < 2; ++i) {
    const Area a{panel_x(i) + kPlotInsetLeft, plot_top, kPlotSize, cx - span / 2, cx + span / 2,
                 cy - span / 2, cy + span / 2};
    const std::string heading = (i == 0 ? std::string("before: initial estimate") : after_label) +
                                (view.name.empty() ? "" : " (" + view.name + ")");
    graph_panel(svg, i, heading, i == 0 ? view.before : view.after, topology, a, view.x_name, view.y_name);
  }
}
}  // namespace

std::string solve_plot_svg(const SolvePlot& plot) {
  Svg svg;
  const double extra = static_cast<double>(plot.more_views.size()) * kRowHeight;
  document_start(svg, plot.title, plot.subtitle, kCanvasHeight + extra);
  projection_row(svg, {plot.more_views.empty() ? "" : "x-y", "x", "y", plot.before, plot.after}, plot.after_label,
                 plot.topology, kPlotTop);
  for (size_t r = 0; r < plot.more_views.size(); ++r)
    projection_row(svg, plot.more_views[r], plot.after_label, plot.topology,
                   kPlotTop + static_cast<double>(r + 1) * kRowHeight);
  cost_panel(svg, 2, plot.costs);
  legend(svg, kPlotBottom + 70 + extra);
  svg.raw("</svg>\n");
  return svg.str();
}

std::string bundle_plot_svg(const BundlePlot& plot) {
  Svg svg;
  document_start(svg, plot.title, plot.subtitle);
  const ErrorStatistics before = error_statistics(plot.errors_before), after = error_statistics(plot.errors_after);
  error_panel(svg, 0, "before: initial estimate", plot.errors_before, before, plot.error_name);
  error_panel(svg, 1, plot.after_label, plot.errors_after, after, plot.error_name);
  cost_panel(svg, 2, plot.costs);
  svg.text(panel_x(0) + kPlotInsetLeft, kPlotBottom + 70,
           "each panel has its own scale, to a little past its 99th percentile; its last bin also counts every "
           "error beyond",
           12);
  svg.raw("</svg>\n");
  return svg.str();
}

}  // namespace lsjit::cli
