// The pictures `lsjit solve FILE --plot FILE.svg` draws, as plain C++: pure functions from
// numbers to SVG text, no dependencies beyond the standard library. Pose graphs get
// solve_plot_svg; bundle adjustment gets bundle_plot_svg (below).
//
// solve_plot_svg draws three panels side by side on one canvas (and, for each of
// SolvePlot::more_views, a row of before/after panels of another projection below):
//   before  the initial estimate           odometry chains as polylines, loop closures as
//   after   the solution                   thin straight lines; both panels share one
//                                          scale (so sizes compare), x and y at the same
//                                          scale (aspect preserved), with ticked axes
//   cost    cost per iteration, log scale  iteration 0 is the initial point; decades on
//                                          the y axis, the initial and final cost written
// SVG elements, so that a reader (or a test) can count them: per graph panel one
// <polyline> per odometry chain with at least two drawable vertices and, if there are loop
// closures, one <path> holding them all; one <polyline> for the cost curve when there are
// positive finite costs; frames, grid and ticks are <rect> and <line>; markers <circle>.
// The document starts with "<svg", has a viewBox, a <title> equal to `title`, and ends
// with "</svg>\n". Vertices with a non-finite coordinate are left out (a chain is cut
// there); non-positive or non-finite costs are left out of the log-scale curve.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lsjit::cli {

struct Point2 {
  double x = 0, y = 0;
};

// Which edges of a pose graph are odometry and which loop closures.
struct GraphTopology {
  std::vector<std::vector<size_t>> odometry_chains;      // vertex indices, drawn as polylines
  std::vector<std::pair<size_t, size_t>> loop_closures;  // vertex indices, drawn as lines
};

// Odometry edges join vertices with consecutive ids (i -> i+1, either direction); a chain
// is a maximal run of vertices, in id order, each joined to the next by an odometry edge.
// Every other edge is a loop closure. `ids[k]` is vertex k's id; edges are (from id, to
// id) and must name vertices in `ids`. A vertex without odometry edges is in no chain.
GraphTopology classify_edges(const std::vector<int64_t>& ids,
                             const std::vector<std::pair<int64_t, int64_t>>& edges);

// The vertices of a graph projected on a plane, before and after, with the axes' names.
struct GraphView {
  std::string name;  // "x-z", shown in the panel headings ("" for none)
  std::string x_name, y_name;
  std::vector<Point2> before, after;  // one per vertex, same length
};

struct SolvePlot {
  std::string title;     // heading and <title>, e.g. "lsjit solve sphere.g2o"
  std::string subtitle;  // a second line, e.g. "SE3, 2,500 poses, projected on the x-y plane"
  std::vector<Point2> before, after;  // vertex positions (x, y), one per vertex, same length
  // Further projections, one row of before/after panels each below the first, each row on
  // its own scale: a 3D graph's x-z and y-z views. The canvas grows by a row for each.
  std::vector<GraphView> more_views;
  GraphTopology topology;             // indices into before/after and every view's
  std::vector<double> costs;          // per iteration, [0] the initial cost
  std::string after_label = "after";  // the after panel's heading, e.g. "after (12 iterations)"
};

std::string solve_plot_svg(const SolvePlot& plot);

// The picture for a problem that is not a pose graph (bundle adjustment): histograms of a
// per-residual error before and after, each on its own x range (to 1.1 times its 99th
// percentile; the last bin also counts everything beyond) and its own count scale, since a
// solve moves the errors by orders of magnitude and a shared scale put the result in one
// bar; under each, the RMS and median of its errors. Bars are <rect class="bar">; the
// cost panel is as above.
struct BundlePlot {
  std::string title, subtitle;
  std::vector<double> errors_before, errors_after;  // one per observation, >= 0
  std::string error_name = "reprojection error (pixels)";
  std::vector<double> costs;  // per iteration, [0] the initial cost
  std::string after_label = "after";
};
std::string bundle_plot_svg(const BundlePlot& plot);

// Tick positions at 1, 2 or 5 times a power of ten covering [lo, hi] with about `target`
// ticks, all within [lo, hi]. lo < hi, both finite.
std::vector<double> nice_ticks(double lo, double hi, int target);

// `text` with & < > " ' replaced by entities.
std::string xml_escape(std::string_view text);

}  // namespace lsjit::cli
