#include "lsjit/runtime/covariance.h"

#include <Eigen/Eigenvalues>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <string_view>

#include "lsjit/common/error.h"

namespace lsjit {
namespace {

using Algorithm = CovarianceOptions::Algorithm;
using Free = AnalyzedProblem::FreeVariable;

constexpr int64_t kAutoDenseLimit = 1000;  // tangent dims; beyond, n² memory and n³ time hurt
constexpr int64_t kColumnsPerSolve = 64;   // sparse path: n x 64 doubles of right-hand sides

std::string name(const VariableRef& v) { return v.type + " variable " + std::to_string(v.id); }

std::string number(double x) {
  std::ostringstream out;
  out.precision(3);
  out << x;
  return out.str();
}

[[noreturn]] void rank_deficient(const std::string& why) {
  throw Error("Covariance: the Gauss-Newton matrix is rank deficient (" + why +
              "). The covariance is undefined: a gauge freedom (e.g. a pose graph with no "
              "pose held constant) or a variable the residuals do not constrain. Hold a "
              "variable constant (Problem::set_constant) or add a prior.");
}

// A requested block as free-variable indices, and which variable's columns of (JᵀJ)⁻¹
// give it: columns of `col`, rows of the other, transposed when col is the first.
struct Request {
  size_t a, b;
  bool columns_of_a;
};

// Every distinct variable that appears as a diagonal pair is a column variable (its block
// needs its own columns); an off-diagonal pair reuses either side's columns if they are
// already needed, else adds b's. Fewer columns, fewer solves on the sparse path.
std::vector<bool> choose_columns(std::vector<Request>& requests, size_t num_free) {
  std::vector<bool> column(num_free, false);
  for (const Request& r : requests)
    if (r.a == r.b) column[r.a] = true;
  for (Request& r : requests) {
    if (!column[r.a] && !column[r.b]) column[r.b] = true;
    r.columns_of_a = !column[r.b];
  }
  return column;
}

void dense_blocks(const Eigen::MatrixXd& H, const std::vector<Free>& vars,
                  const std::vector<Request>& requests, double min_rcond,
                  std::vector<Eigen::MatrixXd>& out, double& rcond) {
  if (!H.allFinite())
    throw Error("Covariance: the Gauss-Newton matrix has a NaN or infinite entry at these values");
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(H);
  if (eigen.info() != Eigen::Success)
    throw Error("Covariance: the dense eigendecomposition of the Gauss-Newton matrix did not converge");
  const Eigen::VectorXd& lambda = eigen.eigenvalues();  // ascending
  const double lambda_max = lambda.size() ? lambda(lambda.size() - 1) : 0;
  rcond = lambda_max > 0 ? std::max(0.0, lambda(0) / lambda_max) : 0;
  if (!(rcond >= min_rcond)) {
    int64_t unobservable = 0;
    for (Eigen::Index i = 0; i < lambda.size(); ++i) unobservable += lambda(i) <= min_rcond * lambda_max;
    rank_deficient("reciprocal condition number " + number(rcond) + " < " + number(min_rcond) +
                   "; " + std::to_string(unobservable) + " of " + std::to_string(lambda.size()) +
                   " tangent directions are unobservable");
  }
  // (JᵀJ)⁻¹ = V Λ⁻¹ Vᵀ = W Wᵀ with W = V Λ^(-1/2): each block is a product of W's rows.
  const Eigen::MatrixXd W = eigen.eigenvectors() * lambda.cwiseSqrt().cwiseInverse().asDiagonal();
  for (const Request& r : requests) {
    const Free &a = vars[r.a], &b = vars[r.b];
    out.push_back(W.middleRows(a.offset, a.tangent) * W.middleRows(b.offset, b.tangent).transpose());
  }
}

// The free variable owning scalar component `row`, as "SE2 variable 4, tangent component 2".
std::string component_name(const std::vector<Free>& vars, int64_t row) {
  auto it = std::upper_bound(vars.begin(), vars.end(), row,
                             [](int64_t r, const Free& f) { return r < static_cast<int64_t>(f.offset); });
  const Free& f = *(it - 1);
  return name({f.type, f.id}) + ", tangent component " + std::to_string(row - static_cast<int64_t>(f.offset));
}

void sparse_blocks(const linear::BlockSparseSymmetric& H, const std::vector<Free>& vars,
                   const std::vector<Request>& requests, const std::vector<bool>& column,
                   double min_rcond, std::vector<Eigen::MatrixXd>& out, double& rcond) {
  using Matrix = Eigen::SparseMatrix<double, Eigen::ColMajor, int64_t>;
  const int64_t n = H.dim();
  linear::BlockPattern::LowerCsc csc = H.pattern().lower_csc();
  Matrix lower(n, n);
  lower.resizeNonZeros(static_cast<Eigen::Index>(csc.row.size()));
  std::copy(csc.column_begin.begin(), csc.column_begin.end(), lower.outerIndexPtr());
  std::copy(csc.row.begin(), csc.row.end(), lower.innerIndexPtr());
  const double* values = H.values().data();
  for (size_t e = 0; e < csc.row.size(); ++e) {
    const double x = values[csc.value_index[e]];
    if (!std::isfinite(x))
      throw Error("Covariance: the Gauss-Newton matrix has a NaN or infinite entry at these values");
    lower.valuePtr()[e] = x;
  }
  csc = {};

  // LDLᵀ rather than LLᵀ: it factors through a non-positive pivot, so the message can say
  // where the first one is, and its pivots give the condition estimate directly.
  Eigen::SimplicialLDLT<Matrix, Eigen::Lower, Eigen::AMDOrdering<int64_t>> ldlt(lower);
  const Eigen::VectorXd d = ldlt.vectorD();
  for (int64_t k = 0; k < n; ++k)
    if (!(d(k) > 0))
      rank_deficient("the sparse LDLᵀ factorization found the pivot " + number(d(k)) + " <= 0 at " +
                     component_name(vars, ldlt.permutationPinv().indices()(k)) +
                     ": the matrix is not positive definite");
  rcond = d.minCoeff() / d.maxCoeff();
  if (!(rcond >= min_rcond))
    rank_deficient("reciprocal condition number estimate " + number(rcond) +
                   " (smallest / largest sparse LDLᵀ pivot) < " + number(min_rcond));

  out.assign(requests.size(), {});
  std::vector<size_t> chunk;                       // column variables solved together
  std::vector<int64_t> first_col(vars.size(), -1);  // their first column in the chunk
  auto solve_chunk = [&] {
    int64_t cols = 0;
    for (size_t v : chunk) cols += vars[v].tangent;
    Eigen::MatrixXd rhs = Eigen::MatrixXd::Zero(n, cols);
    cols = 0;
    for (size_t v : chunk) {
      first_col[v] = cols;
      for (size_t t = 0; t < vars[v].tangent; ++t) rhs(vars[v].offset + t, cols++) = 1;
    }
    const Eigen::MatrixXd x = ldlt.solve(rhs);
    if (!x.allFinite())
      rank_deficient("the solves with the sparse LDLᵀ factor overflowed: numerically singular");
    for (size_t i = 0; i < requests.size(); ++i) {
      const Request& r = requests[i];
      const Free &c = vars[r.columns_of_a ? r.a : r.b], &row = vars[r.columns_of_a ? r.b : r.a];
      const int64_t first = first_col[r.columns_of_a ? r.a : r.b];
      if (first < 0) continue;
      const Eigen::MatrixXd B = x.block(row.offset, first, row.tangent, c.tangent);
      out[i] = r.columns_of_a ? Eigen::MatrixXd(B.transpose()) : B;
    }
    for (size_t v : chunk) first_col[v] = -1;
    chunk.clear();
  };
  int64_t chunk_cols = 0;
  for (size_t v = 0; v < vars.size(); ++v) {
    if (!column[v]) continue;
    if (chunk_cols + static_cast<int64_t>(vars[v].tangent) > kColumnsPerSolve && !chunk.empty()) {
      solve_chunk();
      chunk_cols = 0;
    }
    chunk.push_back(v);
    chunk_cols += vars[v].tangent;
  }
  if (!chunk.empty()) solve_chunk();
}

}  // namespace

Eigen::MatrixXd Covariance::block(const VariableRef& a, const VariableRef& b) const {
  if (auto it = blocks_.find({a, b}); it != blocks_.end()) return it->second;
  if (auto it = blocks_.find({b, a}); it != blocks_.end()) return it->second.transpose();
  throw Error("Covariance: the block (" + name(a) + ", " + name(b) +
              ") was not computed: request the pair from compute_covariance");
}

bool Covariance::has_block(const VariableRef& a, const VariableRef& b) const {
  return blocks_.count({a, b}) || blocks_.count({b, a});
}

Covariance compute_covariance(const AnalyzedProblem& problem, const Values& values,
                              const std::vector<std::pair<VariableRef, VariableRef>>& blocks,
                              const CovarianceOptions& options) {
  const double min_rcond = options.min_reciprocal_condition_number;
  // Zero would let a singular matrix through to a division by a zero eigenvalue.
  if (!(min_rcond > 0 && min_rcond < 1))
    throw Error("Covariance: min_reciprocal_condition_number must be in (0, 1), not " + number(min_rcond));
  if (options.num_threads < 0)
    throw Error("Covariance: num_threads must be >= 0 (0: one per core)");

  // Requested variables -> free-variable indices, in one pass over the free variables.
  const std::vector<Free> vars = problem.free_variables();
  std::map<VariableRef, size_t> index;
  for (const auto& [a, b] : blocks) index.emplace(a, SIZE_MAX), index.emplace(b, SIZE_MAX);
  for (size_t k = 0; k < vars.size(); ++k)
    if (auto it = index.find({vars[k].type, vars[k].id}); it != index.end()) it->second = k;
  for (const auto& [v, k] : index)
    if (k == SIZE_MAX)
      throw Error("Covariance: " + name(v) +
                  " is not a free variable of the problem: it is held constant (its covariance "
                  "is zero by assumption) or no cost uses it");
  std::vector<Request> requests;
  for (const auto& [a, b] : blocks) requests.push_back({index[a], index[b], false});
  const std::vector<bool> column = choose_columns(requests, vars.size());

  Covariance result;
  if (vars.empty()) {  // then nothing was requested (a request names a free variable)
    result.reciprocal_condition_number_ = 1;
    return result;
  }
  const auto n = static_cast<int64_t>(problem.tangent_dim());
  result.algorithm_ = options.algorithm != Algorithm::Auto ? options.algorithm
                      : n <= kAutoDenseLimit             ? Algorithm::Dense
                                                         : Algorithm::Sparse;
  std::vector<Eigen::MatrixXd> out;
  try {
    const linear::BlockSparseSymmetric H =
        problem.gauss_newton_matrix(values, nullptr, nullptr, options.num_threads, options.apply_loss_function);
    if (result.algorithm_ == Algorithm::Dense)
      dense_blocks(H.to_dense(), vars, requests, min_rcond, out, result.reciprocal_condition_number_);
    else
      sparse_blocks(H, vars, requests, column, min_rcond, out, result.reciprocal_condition_number_);
  } catch (const Error& e) {
    if (std::string_view(e.what()).starts_with("Covariance: ")) throw;
    throw Error(std::string("Covariance: ") + e.what());
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    // Exactly symmetric, as the true diagonal blocks are (the solves are not, by rounding).
    if (requests[i].a == requests[i].b) out[i] = (0.5 * (out[i] + out[i].transpose())).eval();
    result.blocks_.emplace(blocks[i], std::move(out[i]));
  }
  return result;
}

}  // namespace lsjit
