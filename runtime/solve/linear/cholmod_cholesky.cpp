#include "lsjit/runtime/solve/linear/cholmod_cholesky.h"

#include "lsjit/common/error.h"

#ifdef LSJIT_HAVE_CHOLMOD

#include <cholmod.h>

#include <algorithm>
#include <vector>

namespace lsjit::linear {

bool cholmod_available() { return true; }

namespace {

std::string status_text(int status) {
  switch (status) {
    case CHOLMOD_OK: return "ok";
    case CHOLMOD_NOT_INSTALLED: return "method not installed";
    case CHOLMOD_OUT_OF_MEMORY: return "out of memory";
    case CHOLMOD_TOO_LARGE: return "integer overflow";
    case CHOLMOD_INVALID: return "invalid input";
    case CHOLMOD_GPU_PROBLEM: return "GPU problem";
    case CHOLMOD_NOT_POSDEF: return "not positive definite";
    case CHOLMOD_DSMALL: return "tiny pivot";
  }
  return "status " + std::to_string(status);
}

// The block containing scalar row r (only on the error path: a linear scan is fine).
int block_of(const BlockPattern& p, int64_t r) {
  int i = 0;
  while (i + 1 < p.num_blocks() && p.scalar_offset(i + 1) <= r) ++i;
  return i;
}

// AMD on the block graph, expanded to a scalar permutation that keeps each block's scalars
// together and in order (CHOLMOD's convention: perm[k] is the row of A that becomes row k).
std::vector<SuiteSparse_long> block_amd_permutation(const BlockPattern& p, cholmod_common* c) {
  const int nb = p.num_blocks();
  cholmod_sparse* blocks = cholmod_l_allocate_sparse(nb, nb, p.num_stored_blocks(), true, true,
                                                     -1, CHOLMOD_PATTERN, c);
  if (blocks == nullptr) throw Error("CHOLMOD: " + status_text(c->status) + " (block pattern)");
  // Block row i of the stored upper triangle is block column i of the lower triangle.
  auto* column_begin = static_cast<SuiteSparse_long*>(blocks->p);
  auto* row = static_cast<SuiteSparse_long*>(blocks->i);
  for (int i = 0; i <= nb; ++i) column_begin[i] = i < nb ? p.row_begin(i) : p.num_stored_blocks();
  for (int64_t k = 0; k < p.num_stored_blocks(); ++k) row[k] = p.col(k);
  std::vector<SuiteSparse_long> block_perm(nb);
  const bool ok = cholmod_l_amd(blocks, nullptr, 0, block_perm.data(), c);
  cholmod_l_free_sparse(&blocks, c);
  if (!ok) throw Error("CHOLMOD: block AMD ordering failed: " + status_text(c->status));
  std::vector<SuiteSparse_long> perm;
  perm.reserve(p.dim());
  for (SuiteSparse_long block : block_perm)
    for (int a = 0; a < p.block_size(static_cast<int>(block)); ++a)
      perm.push_back(p.scalar_offset(static_cast<int>(block)) + a);
  return perm;
}

}  // namespace

struct CholmodCholesky::State {
  cholmod_common common;
  cholmod_sparse* lower = nullptr;     // P A Pᵀ's scalar lower triangle; values refilled per solve
  cholmod_factor* factor = nullptr;    // symbolic after analysis, numeric after factorize
  cholmod_dense* solution = nullptr;   // cholmod_l_solve2's output and workspace, reused
  cholmod_dense* work_y = nullptr;
  cholmod_dense* work_e = nullptr;
  std::vector<int64_t> value_index;    // lower entry -> values() index
  std::vector<int64_t> diagonal_entry; // permuted scalar row -> lower entry of its diagonal
  std::vector<int64_t> perm;           // permuted row k is A's row perm[k]
  std::vector<double> rhs;
  double lnz = 0, flops = 0;

  State() {
    cholmod_l_start(&common);
    common.print = 0;  // failures are reported through LinearSolveSummary
    // A simplicial factor is LDLᵀ by default, which succeeds on indefinite matrices;
    // asking for LLᵀ makes every non-positive pivot a failure, as the supernodal one is.
    common.final_ll = true;
  }
  ~State() {
    cholmod_l_free_dense(&solution, &common);
    cholmod_l_free_dense(&work_y, &common);
    cholmod_l_free_dense(&work_e, &common);
    cholmod_l_free_factor(&factor, &common);
    cholmod_l_free_sparse(&lower, &common);
    cholmod_l_finish(&common);
  }
  State(const State&) = delete;
  State& operator=(const State&) = delete;
};

namespace {

// A lower-triangular CSC matrix with the given pattern (values zero).
cholmod_sparse* allocate_lower(int64_t n, const std::vector<int64_t>& column_begin,
                               const std::vector<int64_t>& row, cholmod_common* c) {
  cholmod_sparse* m = cholmod_l_allocate_sparse(n, n, row.size(), true, true, -1, CHOLMOD_REAL, c);
  if (m == nullptr) throw Error("CHOLMOD: " + status_text(c->status) + " (matrix)");
  std::copy(column_begin.begin(), column_begin.end(), static_cast<SuiteSparse_long*>(m->p));
  std::copy(row.begin(), row.end(), static_cast<SuiteSparse_long*>(m->i));
  std::fill_n(static_cast<double*>(m->x), row.size(), 0.0);
  return m;
}

}  // namespace

// The fill-reducing permutation P is chosen once (block AMD, or CHOLMOD's AMD, then
// CHOLMOD's postordering), and the matrix CHOLMOD sees is P A Pᵀ itself, analyzed in its
// natural order: a factorization then works on the stored matrix as it is, where CHOLMOD
// would otherwise permute A into a new matrix at every call (a sizeable share of a
// pose-graph solve, docs/benchmarks-history.md). CHOLMOD chooses supernodal or simplicial from the
// analysis (its default rule, flops / nnz(L) >= 40): simplicial is several times faster on
// the thin fill of 2D
// pose graphs, supernodal wins on the dense fronts of 3D graphs and bundle adjustment.
CholmodCholesky::CholmodCholesky(std::shared_ptr<const BlockPattern> pattern, Ordering ordering)
    : LinearSolver(std::move(pattern)), state_(std::make_unique<State>()) {
  State& s = *state_;
  const BlockPattern& p = *pattern_;
  const int64_t n = p.dim();
  s.rhs.resize(n);
  if (n == 0) {
    analyses_ = 1;
    return;
  }
  BlockPattern::LowerCsc csc = p.lower_csc();

  // 1. The permutation, from an analysis of A itself.
  {
    cholmod_sparse* a = allocate_lower(n, csc.column_begin, csc.row, &s.common);
    s.common.nmethods = 1;
    cholmod_factor* f = nullptr;
    if (ordering == Ordering::BlockAmd) {
      std::vector<SuiteSparse_long> block_perm = block_amd_permutation(p, &s.common);
      s.common.method[0].ordering = CHOLMOD_GIVEN;
      f = cholmod_l_analyze_p(a, block_perm.data(), nullptr, 0, &s.common);
    } else {
      s.common.method[0].ordering = CHOLMOD_AMD;
      f = cholmod_l_analyze(a, &s.common);
    }
    cholmod_l_free_sparse(&a, &s.common);
    if (f == nullptr || s.common.status < CHOLMOD_OK)
      throw Error("CHOLMOD: analysis failed: " + status_text(s.common.status));
    const auto* fp = static_cast<const SuiteSparse_long*>(f->Perm);
    s.perm.assign(fp, fp + n);
    cholmod_l_free_factor(&f, &s.common);
  }

  // 2. P A Pᵀ's lower triangle: A's entry (r, c) moves to (inverse[r], inverse[c]).
  std::vector<int64_t> inverse(n);
  for (int64_t k = 0; k < n; ++k) inverse[s.perm[k]] = k;
  std::vector<int64_t> count(n + 1, 0);
  for (int64_t c = 0; c < n; ++c)
    for (int64_t e = csc.column_begin[c]; e < csc.column_begin[c + 1]; ++e)
      ++count[std::min(inverse[csc.row[e]], inverse[c]) + 1];
  for (int64_t c = 0; c < n; ++c) count[c + 1] += count[c];
  std::vector<std::pair<int64_t, int64_t>> entries(csc.row.size());  // (new row, value index)
  std::vector<int64_t> next(count.begin(), count.end() - 1);
  for (int64_t c = 0; c < n; ++c)
    for (int64_t e = csc.column_begin[c]; e < csc.column_begin[c + 1]; ++e) {
      const int64_t i = inverse[csc.row[e]], j = inverse[c];
      entries[next[std::min(i, j)]++] = {std::max(i, j), csc.value_index[e]};
    }
  std::vector<int64_t> rows(entries.size());
  s.value_index.resize(entries.size());
  s.diagonal_entry.resize(n);
  for (int64_t c = 0; c < n; ++c) {
    std::sort(entries.begin() + count[c], entries.begin() + count[c + 1]);
    for (int64_t e = count[c]; e < count[c + 1]; ++e) {
      rows[e] = entries[e].first;
      s.value_index[e] = entries[e].second;
    }
    s.diagonal_entry[c] = count[c];  // sorted: the diagonal (row c) comes first
  }
  s.lower = allocate_lower(n, count, rows, &s.common);

  // 3. The symbolic factorization of P A Pᵀ in its own order.
  s.common.method[0].ordering = CHOLMOD_NATURAL;
  s.common.postorder = false;
  s.factor = cholmod_l_analyze(s.lower, &s.common);
  if (s.factor == nullptr || s.common.status < CHOLMOD_OK)
    throw Error("CHOLMOD: analysis failed: " + status_text(s.common.status));
  s.lnz = s.common.lnz;
  s.flops = s.common.fl;
  analyses_ = 1;
}

CholmodCholesky::~CholmodCholesky() = default;

double CholmodCholesky::factor_nonzeros() const { return state_->lnz; }
double CholmodCholesky::factorization_flops() const { return state_->flops; }

LinearSolveSummary CholmodCholesky::solve_checked(const BlockSparseSymmetric& A,
                                                  const double* shift, const double* b,
                                                  double* x, const LinearSolverOptions&) {
  State& s = *state_;
  const int64_t n = pattern_->dim();
  const double* values = A.values().data();
  auto* entries = static_cast<double*>(s.lower->x);
  for (size_t e = 0; e < s.value_index.size(); ++e) entries[e] = values[s.value_index[e]];
  if (shift != nullptr)
    for (int64_t k = 0; k < n; ++k) entries[s.diagonal_entry[k]] += shift[s.perm[k]];
  LinearSolveSummary summary;
  ++factorizations_;
  cholmod_l_factorize(s.lower, s.factor, &s.common);
  if (s.common.status == CHOLMOD_NOT_POSDEF || s.factor->minor < static_cast<size_t>(n)) {
    summary.message = "the matrix is not positive definite (CHOLMOD: non-positive pivot";
    if (s.factor->minor < static_cast<size_t>(n)) {
      const int64_t row = s.perm[s.factor->minor];  // back to A's numbering
      summary.message += " at scalar row " + std::to_string(row) + ", block " +
                         std::to_string(block_of(*pattern_, row));
    }
    summary.message += ")";
    return summary;
  }
  if (s.common.status < CHOLMOD_OK) {
    summary.message = "CHOLMOD factorization failed: " + status_text(s.common.status);
    return summary;
  }
  for (int64_t k = 0; k < n; ++k) s.rhs[k] = b[s.perm[k]];
  cholmod_dense rhs{};
  rhs.nrow = static_cast<size_t>(n);
  rhs.ncol = 1;
  rhs.nzmax = rhs.d = static_cast<size_t>(n);
  rhs.x = s.rhs.data();
  rhs.xtype = CHOLMOD_REAL;
  rhs.dtype = CHOLMOD_DOUBLE;
  if (!cholmod_l_solve2(CHOLMOD_A, s.factor, &rhs, nullptr, &s.solution, nullptr, &s.work_y,
                        &s.work_e, &s.common)) {
    summary.message = "CHOLMOD solve failed: " + status_text(s.common.status);
    return summary;
  }
  const auto* solution = static_cast<const double*>(s.solution->x);
  for (int64_t k = 0; k < n; ++k) x[s.perm[k]] = solution[k];
  summary.ok = summary.converged = true;
  summary.iterations = 1;
  return summary;
}

}  // namespace lsjit::linear

#else  // !LSJIT_HAVE_CHOLMOD

namespace lsjit::linear {

bool cholmod_available() { return false; }

struct CholmodCholesky::State {};

CholmodCholesky::CholmodCholesky(std::shared_ptr<const BlockPattern> pattern, Ordering)
    : LinearSolver(std::move(pattern)) {
  throw Error("lsjit was built without CHOLMOD (install libsuitesparse-dev and reconfigure); "
              "use eigen_sparse_cholesky");
}

CholmodCholesky::~CholmodCholesky() = default;
double CholmodCholesky::factor_nonzeros() const { return 0; }
double CholmodCholesky::factorization_flops() const { return 0; }

// Unreachable: the constructor throws.
LinearSolveSummary CholmodCholesky::solve_checked(const BlockSparseSymmetric&, const double*,
                                                  const double*, double*,
                                                  const LinearSolverOptions&) {
  return {.ok = false, .message = "lsjit was built without CHOLMOD"};
}

}  // namespace lsjit::linear

#endif
