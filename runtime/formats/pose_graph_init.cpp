#include "lsjit/runtime/pose_graph_init.h"

#include <Eigen/Cholesky>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lsjit/common/error.h"
#include "lsjit/runtime/solve/linear/linear_solver.h"
#include "lsjit/runtime/solve/linear/supernodal_cholesky.h"

namespace lsjit {
namespace {

template <int R, int C>
using Mat = Eigen::Matrix<double, R, C>;
// BlockSparseSymmetric::add_to_block takes row-major blocks.
template <int D>
using RowMajorBlock = Eigen::Matrix<double, D, D, Eigen::RowMajor>;

[[noreturn]] void fail(const std::string& what) { throw Error("chordal initialization: " + what); }

// The graph by vertex positions (indices into vertex_ids): each edge's endpoints, and the
// held_constant() vertices.
struct IndexedGraph {
  struct Edge {
    size_t from = 0, to = 0;
  };
  std::vector<Edge> edges;
  std::vector<size_t> held;
};

std::string edge_name(size_t k, int64_t from, int64_t to) {
  return "edge " + std::to_string(k) + " (" + std::to_string(from) + " -> " + std::to_string(to) + ")";
}

// Checks what read_g2o guarantees and a hand-built graph may break.
template <class Edge>
IndexedGraph index_graph(const io::PoseGraph& graph, const std::vector<Edge>& edges, size_t num_poses) {
  if (graph.num_vertices() == 0) fail("the pose graph has no vertices");
  if (num_poses != graph.num_vertices())
    fail("the graph has " + std::to_string(graph.num_vertices()) + " vertex ids but " +
         std::to_string(num_poses) + " poses");
  const std::unordered_map<int64_t, size_t> index = graph.vertex_index();
  if (index.size() != graph.num_vertices()) fail("the graph has a duplicate vertex id");
  IndexedGraph out;
  for (int64_t id : graph.held_constant()) {
    const auto v = index.find(id);
    if (v == index.end()) fail("FIX names vertex " + std::to_string(id) + ", which is not in the graph");
    out.held.push_back(v->second);
  }
  out.edges.reserve(edges.size());
  for (size_t k = 0; k < edges.size(); ++k) {
    const auto from = index.find(edges[k].from), to = index.find(edges[k].to);
    if (from == index.end() || to == index.end())
      fail(edge_name(k, edges[k].from, edges[k].to) + " names a vertex that is not in the graph");
    out.edges.push_back({from->second, to->second});
  }
  return out;
}

// Which vertices keep their pose (anchors), and the block of the linear systems that each
// other vertex's unknown is: block[v] = -1 for an anchor.
struct Anchoring {
  std::vector<int> block;
  int num_blocks = 0;
};

size_t find_root(std::vector<size_t>& parent, size_t v) {
  while (parent[v] != v) v = parent[v] = parent[parent[v]];  // path halving
  return v;
}

// The held_constant() vertices, plus the lowest-id vertex of each connected component
// that has none of them (see the header).
Anchoring anchor_components(const io::PoseGraph& graph, const IndexedGraph& indexed) {
  const size_t n = graph.num_vertices();
  std::vector<size_t> parent(n);
  std::iota(parent.begin(), parent.end(), size_t{0});
  for (const IndexedGraph::Edge& e : indexed.edges) parent[find_root(parent, e.from)] = find_root(parent, e.to);
  std::vector<bool> anchor(n, false), component_anchored(n, false);
  for (size_t v : indexed.held) {
    anchor[v] = true;
    component_anchored[find_root(parent, v)] = true;
  }
  std::vector<std::ptrdiff_t> lowest(n, -1);  // per root: the vertex with the lowest id
  for (size_t v = 0; v < n; ++v) {
    std::ptrdiff_t& low = lowest[find_root(parent, v)];
    if (low < 0 || graph.vertex_ids[v] < graph.vertex_ids[static_cast<size_t>(low)])
      low = static_cast<std::ptrdiff_t>(v);
  }
  for (size_t root = 0; root < n; ++root)
    if (lowest[root] >= 0 && !component_anchored[root]) anchor[static_cast<size_t>(lowest[root])] = true;
  Anchoring a;
  a.block.assign(n, -1);
  for (size_t v = 0; v < n; ++v)
    if (!anchor[v]) a.block[v] = a.num_blocks++;
  return a;
}

// Both linear systems of a graph (rotations, translations) have one D x D block per
// non-anchor vertex, coupled by the edges between two of them: one pattern, one solver,
// one symbolic analysis. The solver is null when every vertex is an anchor.
struct LinearSystem {
  Anchoring anchoring;
  std::shared_ptr<const linear::BlockPattern> pattern;
  std::unique_ptr<linear::SupernodalCholesky> solver;
};

// The systems of the chordal initialization, factored once each (every right-hand side
// column of one system shares its matrix). Their ordering is
// Automatic, as LM's SparseCholesky's: AMD, with METIS tried only where AMD's factor is
// large enough for nested dissection's fewer flops to repay its analysis.
template <int D>
LinearSystem make_linear_system(Anchoring anchoring, const std::vector<IndexedGraph::Edge>& edges) {
  std::vector<std::pair<int, int>> pairs;
  for (const IndexedGraph::Edge& e : edges) {
    const int i = anchoring.block[e.from], j = anchoring.block[e.to];
    if (i >= 0 && j >= 0 && i != j) pairs.emplace_back(i, j);
  }
  LinearSystem system{std::move(anchoring), nullptr, nullptr};
  if (system.anchoring.num_blocks == 0) return system;
  system.pattern = std::make_shared<const linear::BlockPattern>(std::vector<int>(system.anchoring.num_blocks, D),
                                                                std::move(pairs));
  // Automatic: AMD, and METIS nested dissection too where AMD's factor is a GFlop or more
  // (on graphs of 10^5 poses nested dissection cuts the factor's flops several times over).
  system.solver = std::make_unique<linear::SupernodalCholesky>(system.pattern, linear::SupernodalOrdering::Automatic);
  return system;
}

// One edge's linear relation between the unknowns (D x M matrices) of its two vertices:
// X_to ≈ A X_from + c, weighted by the symmetric positive definite W.
template <int D, int M>
struct LinearRelation {
  Mat<D, D> A, W;
  Mat<D, M> c;
};

// The normal equations of Σ ‖X_to − A X_from − c‖²_W over the non-anchor X, the anchors'
// X moved to the right-hand side: H, and one right-hand side column per column of X.
template <int D, int M>
struct NormalEquations {
  linear::BlockSparseSymmetric H;
  Eigen::Matrix<double, Eigen::Dynamic, M> rhs;
};

// relation_of(k) gives edge k's relation. It is called while assembling, for the edges
// that touch a non-anchor vertex, so that no relation is stored: on these sizes the page
// faults of fresh memory cost as much as the arithmetic.
template <int D, int M, class RelationOf>
NormalEquations<D, M> assemble(const LinearSystem& system, const std::vector<IndexedGraph::Edge>& edges,
                               const RelationOf& relation_of, const std::vector<Mat<D, M>>& X) {
  NormalEquations<D, M> eq{linear::BlockSparseSymmetric(system.pattern),
                           Eigen::Matrix<double, Eigen::Dynamic, M>::Zero(system.pattern->dim(), M)};
  for (size_t k = 0; k < edges.size(); ++k) {
    const IndexedGraph::Edge& e = edges[k];
    if (e.from == e.to) continue;  // a self-loop relates a pose to itself: nothing to learn
    const int i = system.anchoring.block[e.from], j = system.anchoring.block[e.to];
    if (i < 0 && j < 0) continue;
    const LinearRelation<D, M> r = relation_of(k);
    // The residual X_to − A X_from − c, each anchor's known X folded into c.
    Mat<D, M> c = r.c;
    if (i < 0) c += r.A * X[e.from];
    if (j < 0) c -= X[e.to];
    const Mat<D, D> AtW = r.A.transpose() * r.W;
    if (i >= 0) {
      const RowMajorBlock<D> Hii = AtW * r.A;
      eq.H.add_to_block(i, i, Hii.data());
      eq.rhs.template middleRows<D>(int64_t{D} * i) -= AtW * c;
    }
    if (j >= 0) {
      const RowMajorBlock<D> Hjj = r.W;
      eq.H.add_to_block(j, j, Hjj.data());
      eq.rhs.template middleRows<D>(int64_t{D} * j) += r.W * c;
    }
    if (i >= 0 && j >= 0) {
      const RowMajorBlock<D> Hij = -AtW;
      eq.H.add_to_block(i, j, Hij.data());
    }
  }
  return eq;
}

// Minimizes Σ ‖X_to − A X_from − c‖²_W over the non-anchor vertices' X, one sparse
// Cholesky solve per column. X holds every vertex's value on entry (the anchors' are
// used) and the solution on return. `what` names the system in errors.
template <int D, int M, class RelationOf>
void solve_relations(LinearSystem& system, const std::vector<IndexedGraph::Edge>& edges, const RelationOf& relation_of,
                     std::vector<Mat<D, M>>& X, const std::string& what) {
  if (!system.solver) return;
  const NormalEquations<D, M> eq = assemble<D, M>(system, edges, relation_of, X);
  if (!linear::all_finite(eq.H.values().data(), static_cast<int64_t>(eq.H.values().size())) || !eq.rhs.allFinite())
    fail("the " + what + " system cannot be solved: it has entries that are not finite");
  if (const std::string refused = system.solver->factorize(eq.H, nullptr); !refused.empty())
    fail("the " + what + " system cannot be solved: " + refused);
  Eigen::Matrix<double, Eigen::Dynamic, M> solution(eq.rhs.rows(), M);
  Eigen::VectorXd x(eq.rhs.rows());
  for (int m = 0; m < M; ++m) {
    x = eq.rhs.col(m);
    system.solver->solve_factored(x.data(), x.data());
    solution.col(m) = x;
  }
  if (!solution.allFinite()) fail("the " + what + " system cannot be solved: its solution is not finite");
  for (size_t v = 0; v < X.size(); ++v)
    if (system.anchoring.block[v] >= 0) X[v] = solution.template middleRows<D>(int64_t{D} * system.anchoring.block[v]);
}

// The rotation nearest to M in the Frobenius norm: U diag(1, .., det(U Vᵀ)) Vᵀ.
template <int D>
Mat<D, D> nearest_rotation(const Mat<D, D>& M) {
  const Eigen::JacobiSVD<Mat<D, D>> svd(M, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Mat<D, 1> signs = Mat<D, 1>::Ones();
  signs(D - 1) = (svd.matrixU() * svd.matrixV().transpose()).determinant() < 0 ? -1.0 : 1.0;
  return svd.matrixU() * signs.asDiagonal() * svd.matrixV().transpose();
}

// Pose types: what differs between SE2 and SE3.
template <class Pose>
struct PoseTraits;
template <>
struct PoseTraits<SE2d> {
  static std::vector<SE2d>& poses(io::PoseGraph& g) { return g.poses2; }
  static const std::vector<io::PoseGraph::Edge2>& edges(const io::PoseGraph& g) { return g.edges2; }
  static SE2d make(const Mat<2, 2>& R, const Mat<2, 1>& t) {
    return SE2d(SO2d::from_params(SO2d::Params(R(0, 0), R(1, 0))).normalized(), t);
  }
};
template <>
struct PoseTraits<SE3d> {
  static std::vector<SE3d>& poses(io::PoseGraph& g) { return g.poses3; }
  static const std::vector<io::PoseGraph::Edge3>& edges(const io::PoseGraph& g) { return g.edges3; }
  static SE3d make(const Mat<3, 3>& R, const Mat<3, 1>& t) {
    return SE3d(SO3d::from_rotation_matrix(R).normalized(), t);
  }
};

// An edge's information split into the scalar rotation weight and the translation block
// (see the header), both checked to be positive definite.
template <int D, class Edge>
std::pair<double, Mat<D, D>> edge_weights(const Edge& e, size_t k) {
  constexpr int kRot = D == 2 ? 1 : 3;
  const Mat<kRot, kRot> rotation_info = e.information.template bottomRightCorner<kRot, kRot>();
  const Mat<D, D> translation_info = e.information.template topLeftCorner<D, D>();
  const Eigen::LLT<Mat<kRot, kRot>> rotation_llt(rotation_info);
  const double weight = kRot / rotation_llt.solve(Mat<kRot, kRot>::Identity()).trace();
  if (rotation_llt.info() != Eigen::Success || !std::isfinite(weight) || !(weight > 0))
    fail(edge_name(k, e.from, e.to) + ": the rotation block of its information is not positive definite");
  if (Eigen::LLT<Mat<D, D>>(translation_info).info() != Eigen::Success || !translation_info.allFinite())
    fail(edge_name(k, e.from, e.to) + ": the translation block of its information is not positive definite");
  return {weight, translation_info};
}

template <class Pose>
void initialize(io::PoseGraph& graph) {
  constexpr int D = Pose::kDim;
  using Traits = PoseTraits<Pose>;
  const auto& edges = Traits::edges(graph);
  const std::vector<Pose>& poses = Traits::poses(graph);
  const IndexedGraph indexed = index_graph(graph, edges, poses.size());
  for (size_t k = 0; k < edges.size(); ++k) edge_weights<D>(edges[k], k);  // errors before any work
  LinearSystem system = make_linear_system<D>(anchor_components(graph, indexed), indexed.edges);
  const Anchoring& anchoring = system.anchoring;

  // Rotations: X_v = R_vᵀ, so that R_j = R_i R_ij reads X_j = R_ijᵀ X_i, column by column.
  std::vector<Mat<D, D>> X(poses.size());
  for (size_t v = 0; v < poses.size(); ++v) X[v] = poses[v].rotation().matrix().transpose();
  const auto rotation_relation = [&](size_t k) {
    return LinearRelation<D, D>{edges[k].measurement.rotation().matrix().transpose(),
                                edge_weights<D>(edges[k], k).first * Mat<D, D>::Identity(), Mat<D, D>::Zero()};
  };
  solve_relations<D, D>(system, indexed.edges, rotation_relation, X, "rotation");
  std::vector<Mat<D, D>> R(poses.size());
  for (size_t v = 0; v < poses.size(); ++v)
    R[v] = anchoring.block[v] < 0 ? poses[v].rotation().matrix() : nearest_rotation<D>(X[v].transpose());

  // Translations, the rotations fixed: t_j ≈ t_i + R_i t_ij.
  std::vector<Mat<D, 1>> t(poses.size());
  for (size_t v = 0; v < poses.size(); ++v) t[v] = poses[v].translation();
  const auto translation_relation = [&](size_t k) {
    const Mat<D, D>& Ri = R[indexed.edges[k].from];
    return LinearRelation<D, 1>{Mat<D, D>::Identity(), Ri * edge_weights<D>(edges[k], k).second * Ri.transpose(),
                                Ri * edges[k].measurement.translation()};
  };
  solve_relations<D, 1>(system, indexed.edges, translation_relation, t, "translation");

  std::vector<Pose> result = poses;
  for (size_t v = 0; v < poses.size(); ++v)
    if (anchoring.block[v] >= 0) result[v] = Traits::make(R[v], t[v]);
  Traits::poses(graph) = std::move(result);
}

}  // namespace

void initialize_chordal(io::PoseGraph& graph) {
  if (graph.dimension == 2) initialize<SE2d>(graph);
  else if (graph.dimension == 3) initialize<SE3d>(graph);
  else fail("the graph's dimension is " + std::to_string(graph.dimension) + ": expected 2 or 3");
  graph.vertices_from_edges = false;  // the poses are an estimate now
}

}  // namespace lsjit
