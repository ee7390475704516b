#include "lsjit/runtime/io/synthetic.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <type_traits>
#include <utility>

#include "lsjit/common/error.h"

namespace lsjit::io {
namespace {

constexpr double kPi = std::numbers::pi;

// Draws from mt19937_64 by fixed formulas, so that every standard library gives the same
// numbers (see the header).
class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }  // [0, 1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Box-Muller; 1 - uniform() is in (0, 1], so the log is finite.
  double normal() {
    const double radius = std::sqrt(-2.0 * std::log(1.0 - uniform()));
    return radius * std::cos(2.0 * kPi * uniform());
  }
  template <int N>
  Eigen::Matrix<double, N, 1> normal(double sigma) {
    Eigen::Matrix<double, N, 1> v;
    for (int k = 0; k < N; ++k) v(k) = sigma * normal();
    return v;
  }
  // Uniform in [0, n), n > 0, by rejection (no modulo bias).
  uint64_t below(uint64_t n) {
    const uint64_t limit =
        std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % n;
    uint64_t x;
    do x = engine_();
    while (x >= limit);
    return x % n;
  }

 private:
  std::mt19937_64 engine_;
};

void check_sigma(double sigma, std::string_view what) {
  if (!(sigma >= 0.0) || !std::isfinite(sigma)) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", sigma);
    throw Error(std::string(what) + " is " + text +
                ": expected a finite, non-negative standard deviation");
  }
}

double weight(double sigma) { return sigma > 0.0 ? 1.0 / (sigma * sigma) : 1.0; }

// ---------------------------------------------------------------------------------------
// The Manhattan walk

using Cell = std::array<int64_t, 3>;
using Frame = Eigen::Matrix3i;  // columns: the body axes in the world; column 0 is the heading

struct Walk {
  int64_t side = 2;  // of the box, in cells
  std::vector<Cell> cells;
  std::vector<Frame> frames;
};

bool inside(const Cell& c, int64_t side) {
  return std::all_of(c.begin(), c.end(), [side](int64_t v) { return v >= 0 && v < side; });
}

Cell step(const Cell& c, const Eigen::Vector3i& d) {
  return {c[0] + d(0), c[1] + d(1), c[2] + d(2)};
}

// The frame turned by 90° so that its heading becomes `heading`: the rotation about
// a = d × d' by 90° is I + K + K², K = hat(a), which maps d to d'.
Frame turned(const Frame& f, const Eigen::Vector3i& heading) {
  const Eigen::Vector3i a = f.col(0).cross(heading);
  Eigen::Matrix3i k;
  k << 0, -a(2), a(1), a(2), 0, -a(0), -a(1), a(0), 0;
  return (Eigen::Matrix3i::Identity() + k + k * k) * f;
}

Walk manhattan_walk(int dimension, int64_t poses, Random& rng) {
  Walk w;
  const double per_axis = std::pow(static_cast<double>(poses) / 4.0, 1.0 / dimension);
  w.side = std::max<int64_t>(2, static_cast<int64_t>(std::ceil(per_axis)));
  w.cells.reserve(static_cast<size_t>(poses));
  w.frames.reserve(static_cast<size_t>(poses));
  w.cells.push_back({0, 0, 0});
  w.frames.push_back(Frame::Identity());
  while (static_cast<int64_t>(w.cells.size()) < poses) {
    const Cell& c = w.cells.back();
    const Frame& f = w.frames.back();
    // Turns: left/right about the body z axis, and in 3D up/down about the body y axis.
    std::vector<Eigen::Vector3i> turns = {f.col(1), -f.col(1)};
    if (dimension == 3) turns.insert(turns.end(), {f.col(2), -f.col(2)});
    const bool straight = rng.uniform() < 0.6;
    const Eigen::Vector3i wanted =
        straight ? Eigen::Vector3i(f.col(0)) : turns[rng.below(turns.size())];
    Eigen::Vector3i heading = wanted;
    if (!inside(step(c, wanted), w.side)) {
      // One of each opposite pair of turns stays inside a box of side >= 2.
      std::vector<Eigen::Vector3i> fitting;
      for (const Eigen::Vector3i& t : turns)
        if (inside(step(c, t), w.side)) fitting.push_back(t);
      heading = fitting[rng.below(fitting.size())];
    }
    const Frame next = heading == f.col(0) ? f : turned(f, heading);
    w.cells.push_back(step(c, heading));
    w.frames.push_back(next);
  }
  return w;
}

// Calls fn(i, j) for every pair j > i + 1 of cells at Chebyshev distance <= r, in a fixed
// order.
template <class Fn>
void for_each_nearby_pair(const Walk& w, int dimension, int64_t r, Fn&& fn) {
  const int64_t side = w.side;
  const auto cell_index = [&](const Cell& c) { return c[0] + side * (c[1] + side * c[2]); };
  std::vector<std::vector<int64_t>> occupants(side * side * (dimension == 3 ? side : 1));
  for (size_t i = 0; i < w.cells.size(); ++i)
    occupants[cell_index(w.cells[i])].push_back(static_cast<int64_t>(i));
  const int64_t rz = dimension == 3 ? r : 0;
  for (size_t i = 0; i < w.cells.size(); ++i) {
    const Cell& c = w.cells[i];
    for (int64_t dz = -rz; dz <= rz; ++dz)
      for (int64_t dy = -r; dy <= r; ++dy)
        for (int64_t dx = -r; dx <= r; ++dx) {
          const Cell n = {c[0] + dx, c[1] + dy, c[2] + dz};
          if (!inside(n, side)) continue;
          for (const int64_t j : occupants[cell_index(n)])
            if (j > static_cast<int64_t>(i) + 1) fn(static_cast<int64_t>(i), j);
        }
  }
}

// `count` pairs drawn uniformly without replacement (Knuth's selection sampling) from the
// nearby pairs at the smallest radius that has enough, sorted.
std::vector<std::pair<int64_t, int64_t>> loop_closures(const Walk& w, int dimension, int64_t count,
                                                       Random& rng) {
  std::vector<std::pair<int64_t, int64_t>> chosen;
  if (count == 0) return chosen;
  chosen.reserve(static_cast<size_t>(count));
  int64_t r = 1;
  uint64_t total = 0;
  while (true) {
    total = 0;
    for_each_nearby_pair(w, dimension, r, [&](int64_t, int64_t) { ++total; });
    // At r = side - 1 every pair is nearby, and the spec allows at most that many.
    if (total >= static_cast<uint64_t>(count) || r >= w.side - 1) break;
    ++r;
  }
  uint64_t seen = 0;
  for_each_nearby_pair(w, dimension, r, [&](int64_t i, int64_t j) {
    const uint64_t needed = static_cast<uint64_t>(count) - chosen.size();
    if (static_cast<double>(total - seen) * rng.uniform() < static_cast<double>(needed))
      chosen.emplace_back(i, j);
    ++seen;
  });
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

void check(const PoseGraphSpec& s) {
  if (s.dimension != 2 && s.dimension != 3)
    throw Error("pose graph dimension is " + std::to_string(s.dimension) + ": expected 2 or 3");
  if (s.poses < 1)
    throw Error("pose graph with " + std::to_string(s.poses) + " poses: expected at least 1");
  // (poses - 1)(poses - 2)/2 pairs of non-consecutive poses; computed so as not to overflow.
  const double max_pairs =
      (static_cast<double>(s.poses) - 1) * (static_cast<double>(s.poses) - 2) / 2;
  if (s.loop_closures < 0 || static_cast<double>(s.loop_closures) > max_pairs)
    throw Error(std::to_string(s.loop_closures) + " loop closures requested: expected 0 to " +
                std::to_string(static_cast<int64_t>(max_pairs)) + " for " +
                std::to_string(s.poses) + " poses (at most one per pair of non-consecutive poses)");
  check_sigma(s.translation_sigma, "translation noise sigma");
  check_sigma(s.rotation_sigma, "rotation noise sigma");
  check_sigma(s.drift_sigma, "drift sigma");
  const int64_t edges = s.poses - 1 + s.loop_closures;
  if (s.indefinite_edges < 0 || s.indefinite_edges > edges)
    throw Error(std::to_string(s.indefinite_edges) + " indefinite edges requested: expected 0 to " +
                std::to_string(edges) + " (the graph's " + std::to_string(edges) + " edges)");
}

// ---------------------------------------------------------------------------------------
// The two pose types

PoseGraph::Edge2 edge(int64_t i, int64_t j, const SE2d& z, const PoseGraphSpec& s) {
  PoseGraph::Edge2 e;
  e.from = i;
  e.to = j;
  e.measurement = z;
  const double wt = weight(s.translation_sigma);
  e.information = Eigen::Vector3d(wt, wt, weight(s.rotation_sigma)).asDiagonal();
  e.sqrt_information = *upper_cholesky(e.information);
  return e;
}

PoseGraph::Edge3 edge(int64_t i, int64_t j, const SE3d& z, const PoseGraphSpec& s) {
  PoseGraph::Edge3 e;
  e.from = i;
  e.to = j;
  e.measurement = z;
  const double wt = weight(s.translation_sigma), wr = weight(s.rotation_sigma);
  e.information = (Eigen::Matrix<double, 6, 1>() << wt, wt, wt, wr, wr, wr).finished().asDiagonal();
  e.sqrt_information = *upper_cholesky(e.information);
  return e;
}

SE2d measure(const SE2d& relative, const PoseGraphSpec& s, Random& rng) {
  const Eigen::Vector2d t = relative.translation() + rng.normal<2>(s.translation_sigma);
  const double theta = relative.rotation().angle() + s.rotation_sigma * rng.normal();
  return SE2d::from_xy_theta(t(0), t(1), wrap_angle(theta));
}

SE3d measure(const SE3d& relative, const PoseGraphSpec& s, Random& rng) {
  const Eigen::Vector3d t = relative.translation() + rng.normal<3>(s.translation_sigma);
  const SO3d q = SO3d::exp(rng.normal<3>(s.rotation_sigma)) * relative.rotation();
  return SE3d(q.normalized(), t);
}

// A composed pose in the form the g2o round trip preserves exactly (see the header).
SE2d canonical(const SE2d& p) {
  return SE2d::from_xy_theta(p.translation()(0), p.translation()(1), p.rotation().angle());
}
SE3d canonical(const SE3d& p) { return p.normalized(); }

template <class Pose>
Pose truth_pose(const Cell& c, const Frame& f) {
  if constexpr (std::is_same_v<Pose, SE2d>) {
    const double theta = std::atan2(f(1, 0), f(0, 0));  // a multiple of π/2, exactly
    return SE2d::from_xy_theta(static_cast<double>(c[0]), static_cast<double>(c[1]), theta);
  } else {
    const Eigen::Vector3d t(static_cast<double>(c[0]), static_cast<double>(c[1]),
                            static_cast<double>(c[2]));
    return SE3d(SO3d::from_rotation_matrix(f.cast<double>()).normalized(), t);
  }
}

template <class Pose, class Edge>
void fill(const PoseGraphSpec& s, const Walk& walk,
          const std::vector<std::pair<int64_t, int64_t>>& closures, Random& rng,
          std::vector<Pose>* truth, std::vector<Pose>* poses, std::vector<Edge>* edges) {
  // Reserved exactly: grown by doubling, each array would briefly hold up to three times
  // its size, and `lsjit generate` sizes its memory check by what is held.
  truth->reserve(walk.cells.size());
  poses->reserve(walk.cells.size());
  edges->reserve(static_cast<size_t>(s.poses - 1) + closures.size());
  for (size_t k = 0; k < walk.cells.size(); ++k)
    truth->push_back(truth_pose<Pose>(walk.cells[k], walk.frames[k]));
  const auto add = [&](int64_t i, int64_t j) {
    const Pose z = measure((*truth)[i].inverse() * (*truth)[j], s, rng);
    edges->push_back(edge(i, j, z, s));
  };
  for (int64_t i = 0; i + 1 < s.poses; ++i) add(i, i + 1);
  for (const auto& [i, j] : closures) add(i, j);
  poses->push_back((*truth)[0]);
  for (int64_t i = 0; i + 1 < s.poses; ++i)
    poses->push_back(canonical(poses->back() * (*edges)[i].measurement));
}

template <class Pose>
Pose rotation_error(double sigma, Random& rng) {
  if constexpr (std::is_same_v<Pose, SE2d>) return SE2d::from_xy_theta(0, 0, sigma * rng.normal());
  else return SE3d(SO3d::exp(rng.normal<3>(sigma)).normalized(), Eigen::Vector3d::Zero());
}

// The initial estimate again, from the odometry edges (the first poses - 1) each with a
// rotation error (see the header).
template <class Pose, class Edge>
void drift(double sigma, Random& rng, std::vector<Pose>& poses, const std::vector<Edge>& edges) {
  for (size_t i = 0; i + 1 < poses.size(); ++i)
    poses[i + 1] = canonical(poses[i] * edges[i].measurement * rotation_error<Pose>(sigma, rng));
}

// A uniform unit vector: a normal sample, normalized (redrawn in the measure-zero case
// of an exactly zero sample).
template <int N>
Eigen::Matrix<double, N, 1> unit_vector(Random& rng) {
  Eigen::Matrix<double, N, 1> v;
  do v = rng.normal<N>(1.0);
  while (v.squaredNorm() == 0.0);
  return v.normalized();
}

// The coupling block C of an indefinite edge (see the header): translation rows, rotation
// columns.
template <int T, int R>
Eigen::Matrix<double, T, R> coupling(double wt, double wr, Random& rng) {
  const double s = rng.uniform(2.0, 4.0);
  const Eigen::Matrix<double, T, 1> u = unit_vector<T>(rng);
  Eigen::Matrix<double, R, 1> v = Eigen::Matrix<double, R, 1>::Ones();
  if constexpr (R > 1) v = unit_vector<R>(rng);
  return s * std::sqrt(wt * wr) * u * v.transpose();
}

// Gives `count` of the edges (chosen uniformly, Knuth's selection sampling) an indefinite
// Ω; returns their positions.
template <class Edge>
std::vector<size_t> make_indefinite(std::vector<Edge>& edges, int64_t count, Random& rng) {
  constexpr int n = decltype(Edge::information)::RowsAtCompileTime;
  constexpr int t = n == 3 ? 2 : 3;
  std::vector<size_t> chosen;
  for (size_t k = 0; k < edges.size(); ++k) {
    const uint64_t needed = static_cast<uint64_t>(count) - chosen.size();
    if (static_cast<double>(edges.size() - k) * rng.uniform() < static_cast<double>(needed))
      chosen.push_back(k);
  }
  for (const size_t k : chosen) {
    auto& omega = edges[k].information;
    const auto c = coupling<t, n - t>(omega(0, 0), omega(n - 1, n - 1), rng);
    omega.template topRightCorner<t, n - t>() = c;
    omega.template bottomLeftCorner<n - t, t>() = c.transpose();
    edges[k].sqrt_information.setConstant(std::numeric_limits<double>::quiet_NaN());
  }
  return chosen;
}

void check(const BalSpec& s) {
  if (s.cameras < 1)
    throw Error("BAL problem with " + std::to_string(s.cameras) + " cameras: expected at least 1");
  if (s.points < 0)
    throw Error("BAL problem with " + std::to_string(s.points) + " points: expected at least 0");
  if (s.observations_per_point < 1 || s.observations_per_point > s.cameras)
    throw Error(std::to_string(s.observations_per_point) +
                " observations per point: expected 1 to " + std::to_string(s.cameras) +
                " (each point is seen by that many distinct cameras)");
  check_sigma(s.pixel_sigma, "pixel noise sigma");
  check_sigma(s.camera_rotation_sigma, "camera rotation perturbation sigma");
  check_sigma(s.camera_translation_sigma, "camera translation perturbation sigma");
  check_sigma(s.point_sigma, "point perturbation sigma");
}

// A camera on the ring, looking at the origin: rows of R are the camera axes in the world,
// z pointing away from the scene (BAL cameras look down -z).
BalCamera ring_camera(int32_t k, int32_t count, Random& rng) {
  const double spacing = 2.0 * kPi / count;
  const double angle = k * spacing + rng.uniform(-0.25, 0.25) * spacing;
  const Eigen::Vector3d center(10.0 * std::cos(angle), rng.uniform(-1.0, 1.0),
                               10.0 * std::sin(angle));
  const Eigen::Vector3d z = center.normalized();
  const Eigen::Vector3d x = Eigen::Vector3d::UnitY().cross(z).normalized();
  const Eigen::Vector3d y = z.cross(x);
  Eigen::Matrix3d r;
  r << x.transpose(), y.transpose(), z.transpose();
  const Eigen::AngleAxisd aa(r);
  BalCamera c;
  c << aa.angle() * aa.axis(), -r * center, rng.uniform(450.0, 550.0), rng.uniform(-0.05, 0.05),
      rng.uniform(-0.01, 0.01);
  return c;
}

}  // namespace

GeneratedPoseGraph generate_pose_graph(const PoseGraphSpec& spec) {
  check(spec);
  Random rng(spec.seed);
  const Walk walk = manhattan_walk(spec.dimension, spec.poses, rng);
  const auto closures = loop_closures(walk, spec.dimension, spec.loop_closures, rng);
  GeneratedPoseGraph out;
  PoseGraph& g = out.graph;
  g.dimension = spec.dimension;
  g.vertex_ids.reserve(static_cast<size_t>(spec.poses));
  for (int64_t i = 0; i < spec.poses; ++i) g.vertex_ids.push_back(i);
  if (spec.dimension == 2)
    fill(spec, walk, closures, rng, &out.truth2, &g.poses2, &g.edges2);
  else
    fill(spec, walk, closures, rng, &out.truth3, &g.poses3, &g.edges3);
  // Drawn last, and only when asked for: a spec without them gives the graph it always did.
  if (spec.indefinite_edges > 0)
    out.indefinite_edges = spec.dimension == 2
                               ? make_indefinite(g.edges2, spec.indefinite_edges, rng)
                               : make_indefinite(g.edges3, spec.indefinite_edges, rng);
  if (spec.drift_sigma > 0) {
    if (spec.dimension == 2) drift(spec.drift_sigma, rng, g.poses2, g.edges2);
    else drift(spec.drift_sigma, rng, g.poses3, g.edges3);
  }
  return out;
}

namespace {

// What TextOut holds while a writer streams (a chunk of about a MiB, and its growth) and
// what small vectors and the allocator round up to: slack, generously.
constexpr double kWriterBytes = 4 << 20;

template <class Pose, class Edge>
double pose_graph_bytes(const PoseGraphSpec& s) {
  const double poses = static_cast<double>(s.poses);
  const double edges = std::max(0.0, poses - 1) + static_cast<double>(s.loop_closures);
  // Per pose: the walk's cell and frame, the truth, the initial pose, the vertex id, and
  // the loop-closure search's cell lists (about a quarter as many lists as poses, each a
  // small vector: 64 bytes a pose covers their headers, heap blocks and doubling).
  const double per_pose = sizeof(Cell) + sizeof(Frame) + 2 * sizeof(Pose) + sizeof(int64_t) + 64;
  // Per edge: the edge, its entry in the chosen loop closures, an indefinite-edge index.
  const double per_edge = sizeof(Edge) + sizeof(std::pair<int64_t, int64_t>) + sizeof(size_t);
  return per_pose * poses + per_edge * edges + kWriterBytes;
}

}  // namespace

double generated_pose_graph_bytes(const PoseGraphSpec& spec) {
  return spec.dimension == 2 ? pose_graph_bytes<SE2d, PoseGraph::Edge2>(spec)
                             : pose_graph_bytes<SE3d, PoseGraph::Edge3>(spec);
}

double generated_bal_bytes(const BalSpec& spec) {
  const double cameras = spec.cameras, points = spec.points;
  const double observations = points * spec.observations_per_point;
  // The truth and the initial problem (a copy), the camera order and a point's cameras.
  return 2 * (observations * sizeof(BalProblem::Observation) + points * sizeof(Eigen::Vector3d) +
              cameras * sizeof(BalCamera)) +
         2 * cameras * sizeof(int32_t) + kWriterBytes;
}

GeneratedBal generate_bal(const BalSpec& spec) {
  check(spec);
  Random rng(spec.seed);
  GeneratedBal out;
  BalProblem& truth = out.truth;
  // Reserved exactly, as in fill(): `lsjit generate` sizes its memory check by what is held.
  truth.cameras.reserve(static_cast<size_t>(spec.cameras));
  truth.points.reserve(static_cast<size_t>(spec.points));
  truth.observations.reserve(static_cast<size_t>(spec.points) * static_cast<size_t>(spec.observations_per_point));
  for (int32_t k = 0; k < spec.cameras; ++k)
    truth.cameras.push_back(ring_camera(k, spec.cameras, rng));
  for (int32_t k = 0; k < spec.points; ++k)
    truth.points.emplace_back(rng.uniform(-2.0, 2.0), rng.uniform(-2.0, 2.0),
                              rng.uniform(-2.0, 2.0));
  std::vector<int32_t> order(spec.cameras);
  for (int32_t k = 0; k < spec.cameras; ++k) order[k] = k;
  const int32_t per_point = spec.observations_per_point;
  for (int32_t p = 0; p < spec.points; ++p) {
    // A partial Fisher-Yates shuffle: the first per_point entries are a uniform choice.
    for (int32_t s = 0; s < per_point; ++s)
      std::swap(order[s], order[s + rng.below(spec.cameras - s)]);
    std::vector<int32_t> seen(order.begin(), order.begin() + per_point);
    std::sort(seen.begin(), seen.end());
    for (const int32_t c : seen) {
      const Eigen::Vector2d xy =
          bal_project(truth.cameras[c], truth.points[p]) + rng.normal<2>(spec.pixel_sigma);
      truth.observations.push_back({c, p, xy});
    }
  }
  out.initial = truth;
  for (BalCamera& c : out.initial.cameras) {
    c.head<3>() += rng.normal<3>(spec.camera_rotation_sigma);
    c.segment<3>(3) += rng.normal<3>(spec.camera_translation_sigma);
  }
  for (Eigen::Vector3d& x : out.initial.points) x += rng.normal<3>(spec.point_sigma);
  return out;
}

}  // namespace lsjit::io
