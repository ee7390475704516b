#include "lsjit/runtime/io/g2o.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include "lsjit/common/error.h"
#include "lsjit/runtime/formats/input_file.h"
#include "lsjit/runtime/formats/text.h"

namespace lsjit::io {
namespace {

using detail::fail;
using Matrix6d = Eigen::Matrix<double, 6, 6>;

constexpr double kUnitTolerance = 8 * std::numeric_limits<double>::epsilon();

enum class Kind { Vertex2, Edge2, Vertex3, Edge3, Fix };

struct Tag {
  std::string_view name;
  Kind kind;
  int dimension;  // 0: either
  size_t values;  // after the tag
  std::string_view layout;
};

constexpr Tag kTags[] = {
    {"VERTEX_SE2", Kind::Vertex2, 2, 4, "id x y theta"},
    {"EDGE_SE2", Kind::Edge2, 2, 11,
     "i j dx dy dtheta and the 6 upper-triangle entries of the information matrix"},
    {"VERTEX_SE3:QUAT", Kind::Vertex3, 3, 8, "id x y z qx qy qz qw"},
    {"EDGE_SE3:QUAT", Kind::Edge3, 3, 30,
     "i j dx dy dz qx qy qz qw and the 21 upper-triangle entries of the information matrix"},
    {"FIX", Kind::Fix, 0, 0, "one or more vertex ids"},
};

const Tag* find_tag(std::string_view name) {
  for (const Tag& t : kTags)
    if (t.name == name) return &t;
  return nullptr;
}

std::string_view vertex_tag(int dimension) {
  return dimension == 3 ? "VERTEX_SE3:QUAT" : "VERTEX_SE2";
}

// The name of value k after the tag, for messages.
std::string value_name(Kind kind, size_t k) {
  static constexpr std::string_view vertex2[] = {"id", "x", "y", "theta"};
  static constexpr std::string_view vertex3[] = {"id", "x", "y", "z", "qx", "qy", "qz", "qw"};
  static constexpr std::string_view edge2[] = {"i", "j", "dx", "dy", "dtheta"};
  static constexpr std::string_view edge3[] = {"i", "j", "dx", "dy", "dz", "qx", "qy", "qz", "qw"};
  const auto information = [](size_t n, size_t index) {
    for (size_t r = 0; r < n; ++r) {
      if (index < n - r)
        return "information(" + std::to_string(r) + "," + std::to_string(r + index) + ")";
      index -= n - r;
    }
    return std::string("?");
  };
  switch (kind) {
    case Kind::Vertex2: return std::string(vertex2[k]);
    case Kind::Vertex3: return std::string(vertex3[k]);
    case Kind::Edge2: return k < 5 ? std::string(edge2[k]) : information(3, k - 5);
    case Kind::Edge3: return k < 9 ? std::string(edge3[k]) : information(6, k - 9);
    case Kind::Fix: return "vertex id";
  }
  return "?";
}

// Ω from its upper triangle, row by row.
template <int N>
Eigen::Matrix<double, N, N> symmetric_from_upper(const double* upper) {
  Eigen::Matrix<double, N, N> m;
  for (int r = 0; r < N; ++r)
    for (int c = r; c < N; ++c) m(r, c) = m(c, r) = *upper++;
  return m;
}

template <int N>
std::optional<Eigen::Matrix<double, N, N>> upper_cholesky_of(
    const Eigen::Matrix<double, N, N>& omega) {
  if (!omega.allFinite() || omega != omega.transpose()) return std::nullopt;
  const Eigen::LLT<Eigen::Matrix<double, N, N>> llt(omega);
  if (llt.info() != Eigen::Success) return std::nullopt;
  Eigen::Matrix<double, N, N> u = llt.matrixU();
  if (!u.allFinite() || (u.diagonal().array() <= 0.0).any()) return std::nullopt;
  return u;
}

template <int N>
using Matrix = Eigen::Matrix<double, N, N>;

// The split of the tangent order into translation and rotation (docs/variables.md):
// (x, y | θ) for SE2, (x, y, z | rx, ry, rz) for SE3.
template <int N>
constexpr int kTranslationDim = N == 3 ? 2 : 3;

template <int N>
Matrix<N> block_diagonal(const Matrix<N>& omega) {
  constexpr int t = kTranslationDim<N>;
  Matrix<N> m = omega;
  m.template topRightCorner<t, N - t>().setZero();
  m.template bottomLeftCorner<N - t, t>().setZero();
  return m;
}

// Eigenvalues ascending and eigenvectors of a symmetric Ω, or nullopt when the solver
// fails (it does not for finite input, but the contract is Eigen's).
template <int N>
std::optional<Eigen::SelfAdjointEigenSolver<Matrix<N>>> eigen_of(const Matrix<N>& omega) {
  Eigen::SelfAdjointEigenSolver<Matrix<N>> solver(omega);
  if (solver.info() != Eigen::Success) return std::nullopt;
  return solver;
}

template <int N>
std::optional<Matrix<N>> nearest_pd(const Matrix<N>& omega) {
  const auto eigen = eigen_of<N>(omega);
  if (!eigen) return std::nullopt;
  const double largest = eigen->eigenvalues()(N - 1);
  if (!(largest > 0.0) || !std::isfinite(largest)) return std::nullopt;
  const Eigen::Matrix<double, N, 1> clamped =
      eigen->eigenvalues().cwiseMax(kNearestPdFloor * largest);
  const Matrix<N>& v = eigen->eigenvectors();
  Matrix<N> m = v * clamped.asDiagonal() * v.transpose();
  // The product is symmetric only up to rounding, and the reader (like the file format,
  // which holds the upper triangle) needs it exactly so: mirror the upper triangle.
  for (int r = 1; r < N; ++r)
    for (int c = 0; c < r; ++c) m(r, c) = m(c, r);
  return m;
}

template <int N>
std::optional<Matrix<N>> repair_information_of(const Matrix<N>& omega, InformationRepair mode) {
  switch (mode) {
    case InformationRepair::None: return omega;
    case InformationRepair::BlockDiagonal: return block_diagonal<N>(omega);
    case InformationRepair::NearestPD: return nearest_pd<N>(omega);
  }
  return std::nullopt;
}

template <int N>
bool repairs(const Matrix<N>& omega, InformationRepair mode) {
  const auto repaired = repair_information_of<N>(omega, mode);
  return repaired && upper_cholesky_of<N>(*repaired);
}

// Why `mode` leaves Ω without a Cholesky factor, for the reader's message.
template <int N>
std::string why_not_repaired(const Matrix<N>& omega, InformationRepair mode) {
  if (mode == InformationRepair::BlockDiagonal)
    return "zeroing the translation-rotation coupling leaves diagonal blocks that are not "
           "positive definite";
  const auto eigen = eigen_of<N>(omega);
  if (!eigen) return "the eigendecomposition failed";
  const double largest = eigen->eigenvalues()(N - 1);
  if (!(largest > 0.0) || !std::isfinite(largest)) {
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", largest);
    return std::string("the largest eigenvalue is ") + text + ": expected a positive, finite one";
  }
  return "the matrix with clamped eigenvalues still has no Cholesky factor";
}

// The way forward for an Ω without a Cholesky factor that `tried` did not repair: the mode
// that does, or why none does. The reader's error message ends with it.
template <int N>
std::string repair_hint(const Matrix<N>& omega, InformationRepair tried) {
  constexpr std::string_view kApi = " (API: G2oReadOptions::repair_information)";
  std::vector<InformationRepair> fixing, failing;
  for (const InformationRepair m : {InformationRepair::BlockDiagonal, InformationRepair::NearestPD})
    if (m != tried) (repairs<N>(omega, m) ? fixing : failing).push_back(m);
  std::string hint;
  if (tried != InformationRepair::None)
    hint = "--repair-information " + std::string(information_repair_name(tried)) +
           " does not repair it: " + why_not_repaired<N>(omega, tried) + "; ";
  if (fixing.empty()) {
    hint += tried == InformationRepair::None ? "no --repair-information mode repairs it:" : "nor does";
    for (size_t k = 0; k < failing.size(); ++k)
      hint += (k ? ", " : " ") + std::string(information_repair_name(failing[k])) + " (" +
              why_not_repaired<N>(omega, failing[k]) + ")";
    return hint;
  }
  hint += "`--repair-information ";
  for (size_t k = 0; k < fixing.size(); ++k)
    hint += (k ? "|" : "") + std::string(information_repair_name(fixing[k]));
  hint += "` repairs it" + std::string(kApi);
  for (const InformationRepair m : failing)
    hint += "; " + std::string(information_repair_name(m)) +
            " does not: " + why_not_repaired<N>(omega, m);
  return hint;
}

class Parser {
 public:
  Parser(std::string_view source, const G2oReadOptions& options)
      : source_(source), options_(options) {
    graph_.information_repair = options.repair_information;
  }

  void line(const std::vector<std::string_view>& tokens, size_t line) {
    const Tag* tag = find_tag(tokens[0]);
    if (!tag)
      fail(source_, line,
           "unknown tag '" + detail::printable(tokens[0]) +
               "': expected VERTEX_SE2, EDGE_SE2, VERTEX_SE3:QUAT, EDGE_SE3:QUAT or FIX");
    tokens_ = &tokens;
    line_ = line;
    tag_ = tag;
    if (tag->kind == Kind::Fix) return fix();
    if (tokens.size() - 1 != tag->values)
      fail(source_, line,
           std::string(tag->name) + " expects " + std::to_string(tag->values) +
               " numbers after the tag (" + std::string(tag->layout) + "), found " +
               std::to_string(tokens.size() - 1));
    check_dimension();
    switch (tag->kind) {
      case Kind::Vertex2: return vertex2();
      case Kind::Edge2: return edge2();
      case Kind::Vertex3: return vertex3();
      case Kind::Edge3: return edge3();
      case Kind::Fix: return;
    }
  }

  PoseGraph finish(size_t last_line) {
    if (graph_.vertex_ids.empty() && graph_.num_edges() > 0) return vertices_from_edges();
    if (graph_.vertex_ids.empty())
      fail(source_, last_line, "no vertices: expected VERTEX_SE2 or VERTEX_SE3:QUAT lines");
    // Checked at the end because a vertex may be defined after an edge that uses it.
    for (const Reference& r : references_)
      if (!vertex_lines_.contains(r.id))
        fail(source_, r.line,
             r.element + ": vertex " + std::to_string(r.id) + " is not defined (no " +
                 std::string(vertex_tag(graph_.dimension)) + " " + std::to_string(r.id) +
                 " in the file)");
    return std::move(graph_);
  }

 private:
  struct Reference {
    int64_t id;
    size_t line;
    std::string element;  // "EDGE_SE2 3 -> 4", "FIX 7"
  };

  std::string what(size_t k) const {
    return std::string(tag_->name) + " " + value_name(tag_->kind, k);
  }
  // what(k) is built only for an error message.
  double number(size_t k) const {
    if (const std::optional<double> v = detail::try_parse_number((*tokens_)[k + 1])) return *v;
    return detail::parse_number((*tokens_)[k + 1], source_, line_, what(k));  // throws
  }
  int64_t integer(size_t k) const {
    if (const std::optional<int64_t> v = detail::try_parse_integer((*tokens_)[k + 1])) return *v;
    return detail::parse_integer((*tokens_)[k + 1], source_, line_, what(k));  // throws
  }

  void check_dimension() {
    if (graph_.dimension == 0) {
      graph_.dimension = tag_->dimension;
      first_tag_ = tag_;
      first_line_ = line_;
    } else if (graph_.dimension != tag_->dimension) {
      fail(source_, line_,
           std::string(tag_->name) + " in a file of SE" + std::to_string(graph_.dimension) +
               " elements (line " + std::to_string(first_line_) + " is " +
               std::string(first_tag_->name) +
               "): expected either SE2 or SE3:QUAT vertices and edges, not both");
    }
  }

  void add_vertex(int64_t id) {
    const auto [it, inserted] = vertex_lines_.emplace(id, line_);
    if (!inserted)
      fail(source_, line_,
           std::string(tag_->name) + " " + std::to_string(id) +
               ": the vertex id is already defined at line " + std::to_string(it->second) +
               ": expected unique ids");
    graph_.vertex_ids.push_back(id);
  }

  // A file of edges alone: its vertices are the ids the edges and FIX lines name,
  // ascending, at identity poses (PoseGraph::vertices_from_edges).
  PoseGraph vertices_from_edges() {
    std::vector<int64_t> ids;
    ids.reserve(references_.size());
    for (const Reference& r : references_) ids.push_back(r.id);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    graph_.vertex_ids = std::move(ids);
    if (graph_.dimension == 3) graph_.poses3.assign(graph_.vertex_ids.size(), SE3d::identity());
    else graph_.poses2.assign(graph_.vertex_ids.size(), SE2d::identity());
    graph_.vertices_from_edges = true;
    return std::move(graph_);
  }

  std::string edge_name(int64_t from, int64_t to) const {
    return std::string(tag_->name) + " " + std::to_string(from) + " -> " + std::to_string(to);
  }
  void reference(int64_t id, const std::string& element) {
    references_.push_back({id, line_, element});
  }

  template <int Count>
  Eigen::Matrix<double, Count, 1> numbers(size_t first) const {
    Eigen::Matrix<double, Count, 1> v;
    for (int k = 0; k < Count; ++k) v(k) = number(first + k);
    return v;
  }

  // Sets the edge's Ω and its factor: the file's when it has one, else its repair by the
  // options' mode when that has one (g2o.h), else an error that says what would.
  template <int N, class Edge>
  void set_information(Edge& e, const Matrix<N>& omega, const std::string& element) const {
    e.information = omega;
    if (const auto u = upper_cholesky_of<N>(omega)) {
      e.sqrt_information = *u;
      return;
    }
    const InformationRepair mode = options_.repair_information;
    if (mode != InformationRepair::None)
      if (const auto repaired = repair_information_of<N>(omega, mode))
        if (const auto u = upper_cholesky_of<N>(*repaired)) {
          e.information = *repaired;
          e.sqrt_information = *u;
          e.information_repaired = true;
          return;
        }
    fail(source_, line_,
         element +
             ": the information matrix is not positive definite (it has no Cholesky "
             "factor), so the edge's residual is undefined; " +
             repair_hint<N>(omega, mode));
  }

  Eigen::Vector4d unit_quaternion(const Eigen::Vector4d& q, const std::string& element) const {
    if (std::abs(q.squaredNorm() - 1.0) <= kUnitTolerance) return q;
    const double largest = q.cwiseAbs().maxCoeff();
    if (!(largest > 0.0))
      fail(source_, line_,
           element +
               ": the quaternion (qx qy qz qw) is zero: expected a rotation (it is "
               "normalized after reading)");
    // At the ends of the double range the norm is wrong: near DBL_MAX it overflows to inf
    // (and q / inf is zero), of subnormal components it has lost most of its bits. Scaling
    // by a power of two is exact and brings the largest component into [1, 2).
    if (largest > 0x1p500 || largest < 0x1p-500) {
      const int exponent = std::ilogb(largest);
      const Eigen::Vector4d scaled =
          q.unaryExpr([exponent](double x) { return std::scalbn(x, -exponent); });
      return scaled / scaled.stableNorm();
    }
    return q / q.stableNorm();
  }

  void fix() {
    if (tokens_->size() == 1)
      fail(source_, line_, "FIX expects one or more vertex ids after the tag, found none");
    for (size_t k = 0; k + 1 < tokens_->size(); ++k) {
      const int64_t id = integer(k);
      graph_.fixed.push_back(id);
      reference(id, "FIX " + std::to_string(id));
    }
  }

  void vertex2() {
    const int64_t id = integer(0);
    const Eigen::Vector3d v = numbers<3>(1);
    add_vertex(id);
    graph_.poses2.push_back(SE2d::from_xy_theta(v(0), v(1), wrap_angle(v(2))));
  }

  void vertex3() {
    const int64_t id = integer(0);
    const Eigen::Matrix<double, 7, 1> v = numbers<7>(1);
    const Eigen::Vector4d q =
        unit_quaternion(v.tail<4>(), std::string(tag_->name) + " " + std::to_string(id));
    add_vertex(id);
    graph_.poses3.emplace_back(SO3d::from_params(q), v.head<3>());
  }

  void edge2() {
    PoseGraph::Edge2 e;
    e.from = integer(0);
    e.to = integer(1);
    const Eigen::Vector3d d = numbers<3>(2);
    const Eigen::Matrix<double, 6, 1> upper = numbers<6>(5);
    const std::string element = edge_name(e.from, e.to);
    e.measurement = SE2d::from_xy_theta(d(0), d(1), wrap_angle(d(2)));
    set_information<3>(e, symmetric_from_upper<3>(upper.data()), element);
    e.line = line_;
    reference(e.from, element);
    reference(e.to, element);
    graph_.edges2.push_back(e);
  }

  void edge3() {
    PoseGraph::Edge3 e;
    e.from = integer(0);
    e.to = integer(1);
    const Eigen::Matrix<double, 7, 1> d = numbers<7>(2);
    const Eigen::Matrix<double, 21, 1> upper = numbers<21>(9);
    const std::string element = edge_name(e.from, e.to);
    e.measurement = SE3d(SO3d::from_params(unit_quaternion(d.tail<4>(), element)), d.head<3>());
    set_information<6>(e, symmetric_from_upper<6>(upper.data()), element);
    e.line = line_;
    reference(e.from, element);
    reference(e.to, element);
    graph_.edges3.push_back(e);
  }

  std::string_view source_;
  G2oReadOptions options_;
  PoseGraph graph_;
  std::unordered_map<int64_t, size_t> vertex_lines_;
  std::vector<Reference> references_;
  const Tag* first_tag_ = nullptr;  // the first vertex or edge, which set the dimension
  size_t first_line_ = 0;
  // The line being parsed.
  const std::vector<std::string_view>* tokens_ = nullptr;
  size_t line_ = 0;
  const Tag* tag_ = nullptr;
};

// ---------------------------------------------------------------------------------------
// Writing

[[noreturn]] void cannot_write(const std::string& what) {
  throw Error("cannot write pose graph: " + what);
}

// See the header: the angle whose cos and sin reproduce the rotation, when there is one.
double angle_to_write(const SO2d& r) {
  const double c = r.params()(0), s = r.params()(1);
  const double theta = std::atan2(s, c);
  double below = theta, above = theta;
  for (int k = 0; k <= 2; ++k) {
    for (const double t : {below, above})
      if (t > -std::numbers::pi && t <= std::numbers::pi && std::cos(t) == c && std::sin(t) == s)
        return t;
    below = std::nextafter(below, -4.0);
    above = std::nextafter(above, 4.0);
  }
  return wrap_angle(theta);
}

template <class Edge>
void check_edges(const std::vector<Edge>& edges, const std::unordered_map<int64_t, size_t>& index,
                 const G2oWriteOptions& options) {
  for (size_t k = 0; k < edges.size(); ++k) {
    const Edge& e = edges[k];
    const std::string name = "edge " + std::to_string(k) + " (" + std::to_string(e.from) + " -> " +
                             std::to_string(e.to) + ")";
    for (const int64_t id : {e.from, e.to})
      if (!index.contains(id))
        cannot_write(name + " names vertex " + std::to_string(id) + ", which is not in vertex_ids");
    if (!e.measurement.params().allFinite()) cannot_write(name + " has a non-finite measurement");
    if (options.allow_indefinite_information) {
      // Only the upper triangle is written: an asymmetric Ω would not read back as itself.
      if (!e.information.allFinite() || e.information != e.information.transpose())
        cannot_write(name + " has an information matrix that is not symmetric and finite");
    } else if (!upper_cholesky(e.information)) {
      cannot_write(name + " has an information matrix that is not symmetric positive definite");
    }
  }
}

template <class Pose>
void check_poses(const std::vector<Pose>& poses, const PoseGraph& g) {
  if (poses.size() != g.vertex_ids.size())
    cannot_write(std::to_string(g.vertex_ids.size()) + " vertex ids but " +
                 std::to_string(poses.size()) + " poses of dimension " +
                 std::to_string(g.dimension) + ": expected one pose per id");
  for (size_t k = 0; k < poses.size(); ++k)
    if (!poses[k].params().allFinite())
      cannot_write("vertex " + std::to_string(g.vertex_ids[k]) + " has a non-finite pose");
}

void check_writable(const PoseGraph& g, const G2oWriteOptions& options) {
  if (g.dimension != 2 && g.dimension != 3)
    cannot_write("dimension is " + std::to_string(g.dimension) + ": expected 2 or 3");
  const bool two = g.dimension == 2;
  if (!(two ? g.poses3.empty() && g.edges3.empty() : g.poses2.empty() && g.edges2.empty()))
    cannot_write("a graph of dimension " + std::to_string(g.dimension) + " has SE" +
                 (two ? "3" : "2") + " poses or edges");
  const auto index = g.vertex_index();
  if (index.size() != g.vertex_ids.size()) cannot_write("vertex ids are not unique");
  for (const int64_t id : g.fixed)
    if (!index.contains(id))
      cannot_write("fixed vertex " + std::to_string(id) + " is not in vertex_ids");
  if (two) {
    check_poses(g.poses2, g);
    check_edges(g.edges2, index, options);
  } else {
    check_poses(g.poses3, g);
    check_edges(g.edges3, index, options);
    for (const SE3d& p : g.poses3)
      if (p.rotation().params().squaredNorm() == 0.0) cannot_write("a pose has a zero quaternion");
    for (const PoseGraph::Edge3& e : g.edges3)
      if (e.measurement.rotation().params().squaredNorm() == 0.0)
        cannot_write("an edge measurement has a zero quaternion");
  }
}

void append_numbers(std::string& out, const double* v, size_t n) {
  for (size_t k = 0; k < n; ++k) {
    out += ' ';
    detail::append_double(out, v[k]);
  }
}

template <int N>
void append_upper(std::string& out, const Eigen::Matrix<double, N, N>& m) {
  for (int r = 0; r < N; ++r)
    for (int c = r; c < N; ++c) {
      out += ' ';
      detail::append_double(out, m(r, c));
    }
}

void append_ids(std::string& out, std::string_view tag, int64_t a, int64_t b) {
  out += tag;
  out += ' ' + std::to_string(a) + ' ' + std::to_string(b);
}

}  // namespace

double wrap_angle(double theta) {
  constexpr double pi = std::numbers::pi;
  if (theta > -pi && theta <= pi) return theta;
  double r = std::remainder(theta, 2 * pi);  // in [-pi, pi]
  if (r <= -pi) r += 2 * pi;
  return r;
}

std::optional<Eigen::Matrix3d> upper_cholesky(const Eigen::Matrix3d& information) {
  return upper_cholesky_of<3>(information);
}
std::optional<Matrix6d> upper_cholesky(const Matrix6d& information) {
  return upper_cholesky_of<6>(information);
}

std::string_view information_repair_name(InformationRepair mode) {
  switch (mode) {
    case InformationRepair::None: return "none";
    case InformationRepair::BlockDiagonal: return "block-diagonal";
    case InformationRepair::NearestPD: return "nearest-pd";
  }
  return "?";
}

std::optional<InformationRepair> information_repair_from_name(std::string_view name) {
  for (const InformationRepair m :
       {InformationRepair::None, InformationRepair::BlockDiagonal, InformationRepair::NearestPD})
    if (information_repair_name(m) == name) return m;
  return std::nullopt;
}

std::optional<Eigen::Matrix3d> repair_information(const Eigen::Matrix3d& information,
                                                  InformationRepair mode) {
  return repair_information_of<3>(information, mode);
}
std::optional<Matrix6d> repair_information(const Matrix6d& information, InformationRepair mode) {
  return repair_information_of<6>(information, mode);
}

size_t PoseGraph::num_repaired_edges() const {
  const auto count = [](const auto& edges) {
    return static_cast<size_t>(std::count_if(edges.begin(), edges.end(), [](const auto& e) {
      return e.information_repaired;
    }));
  };
  return count(edges2) + count(edges3);
}

std::unordered_map<int64_t, size_t> PoseGraph::vertex_index() const {
  std::unordered_map<int64_t, size_t> index;
  index.reserve(vertex_ids.size());
  for (size_t k = 0; k < vertex_ids.size(); ++k) index.emplace(vertex_ids[k], k);
  return index;
}

std::ptrdiff_t PoseGraph::index_of(int64_t id) const {
  for (size_t k = 0; k < vertex_ids.size(); ++k)
    if (vertex_ids[k] == id) return static_cast<std::ptrdiff_t>(k);
  return -1;
}

std::vector<int64_t> PoseGraph::held_constant() const {
  if (!fixed.empty()) return fixed;
  if (vertex_ids.empty()) return {};
  return {*std::min_element(vertex_ids.begin(), vertex_ids.end())};
}

namespace {

constexpr std::string_view kExpectedLine = "a g2o line";

PoseGraph read_lines(detail::LineReader& lines, const G2oReadOptions& options) {
  Parser parser(lines.source(), options);
  std::vector<std::string_view> tokens;
  while (const std::optional<std::string_view> text = lines.next()) {
    detail::split_line(*text, tokens);
    if (!tokens.empty()) parser.line(tokens, lines.line());
  }
  return parser.finish(std::max<size_t>(lines.line(), 1));
}

}  // namespace

PoseGraph parse_g2o(std::string_view text, std::string_view source_name,
                    const G2oReadOptions& options) {
  detail::LineReader lines(text, source_name, kExpectedLine);
  return read_lines(lines, options);
}

PoseGraph read_g2o(const std::filesystem::path& path, const G2oReadOptions& options) {
  detail::LineReader lines(path, kExpectedLine);
  return read_lines(lines, options);
}

PoseGraph read_g2o(InputFile&& input, const G2oReadOptions& options) {
  detail::LineReader lines(std::move(input), kExpectedLine);
  return read_lines(lines, options);
}

namespace {

// The g2o text of `g` (already checked by check_writable), line by line into `out`.
void format_lines(const PoseGraph& g, detail::TextOut& out) {
  std::string& text = out.text();  // the same string across flushes
  for (size_t k = 0; k < g.vertex_ids.size(); ++k) {
    if (g.dimension == 2) {
      const SE2d& p = g.poses2[k];
      const double v[3] = {p.translation()(0), p.translation()(1), angle_to_write(p.rotation())};
      text += "VERTEX_SE2 " + std::to_string(g.vertex_ids[k]);
      append_numbers(text, v, 3);
    } else {
      text += "VERTEX_SE3:QUAT " + std::to_string(g.vertex_ids[k]);
      append_numbers(text, g.poses3[k].params().data(), 7);
    }
    out.end_line();
  }
  for (const PoseGraph::Edge2& e : g.edges2) {
    const SE2d& z = e.measurement;
    const double v[3] = {z.translation()(0), z.translation()(1), angle_to_write(z.rotation())};
    append_ids(text, "EDGE_SE2", e.from, e.to);
    append_numbers(text, v, 3);
    append_upper<3>(text, e.information);
    out.end_line();
  }
  for (const PoseGraph::Edge3& e : g.edges3) {
    append_ids(text, "EDGE_SE3:QUAT", e.from, e.to);
    append_numbers(text, e.measurement.params().data(), 7);
    append_upper<6>(text, e.information);
    out.end_line();
  }
  for (const int64_t id : g.fixed) {
    text += "FIX " + std::to_string(id);
    out.end_line();
  }
}

}  // namespace

std::string format_g2o(const PoseGraph& g, const G2oWriteOptions& options) {
  check_writable(g, options);
  detail::TextOut out;
  format_lines(g, out);
  return std::move(out.text());
}

void write_g2o(const std::filesystem::path& path, const PoseGraph& graph,
               const G2oWriteOptions& options) {
  check_writable(graph, options);  // before the file is touched
  detail::AtomicFileWriter file(path);
  detail::TextOut out(&file);
  format_lines(graph, out);
  out.flush();
  file.commit();
}

}  // namespace lsjit::io
