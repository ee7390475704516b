#include "lsjit/runtime/linear/supernodal_cholesky.h"

#include <algorithm>
#include <string>

#include "lsjit/ir/error.h"
#include "lsjit/runtime/linear/supernodal_kernels.h"

namespace lsjit::linear {

namespace {

// The block containing scalar row r (only on the error path: a linear scan is fine).
int block_of(const BlockPattern& p, int64_t r) {
  int i = 0;
  while (i + 1 < p.num_blocks() && p.scalar_offset(i + 1) <= r) ++i;
  return i;
}

}  // namespace

SupernodalCholesky::SupernodalCholesky(std::shared_ptr<const BlockPattern> pattern,
                                       SupernodalOrdering ordering)
    : LinearSolver(std::move(pattern)), analysis_(analyze_supernodal(*pattern_, ordering)) {
  allocate();
}

SupernodalCholesky::SupernodalCholesky(std::shared_ptr<const BlockPattern> pattern,
                                       SupernodalAnalysis analysis)
    : LinearSolver(std::move(pattern)), analysis_(std::move(analysis)) {
  if (analysis_.scalar_perm.size() != static_cast<size_t>(pattern_->dim()) ||
      analysis_.block_target.size() != static_cast<size_t>(pattern_->num_stored_blocks()))
    throw Error("SupernodalCholesky: the analysis given is not one of this pattern (" +
                std::to_string(analysis_.scalar_perm.size()) + " scalars, " +
                std::to_string(analysis_.block_target.size()) + " stored blocks; the pattern has " +
                std::to_string(pattern_->dim()) + " and " +
                std::to_string(pattern_->num_stored_blocks()) + ")");
  allocate();
}

void SupernodalCholesky::allocate() {
  supernodal::init_blas();
  // The padding: below_product's loops read up to kProductRowPad - 1 doubles past a column.
  panels_.assign(analysis_.panel_offset.back() + supernodal::kProductRowPad, 0.0);
  const int64_t ldw = supernodal::product_leading_dimension(analysis_.max_below_rows);
  workspace_.assign(ldw * ldw, 0.0);
  permuted_.assign(pattern_->dim(), 0.0);
  gathered_.assign(analysis_.max_rows, 0.0);
  analyses_ = 1;
}

void SupernodalCholesky::scatter(const BlockSparseSymmetric& A, const double* shift) {
  const BlockPattern& p = *pattern_;
  const double* values = A.values().data();
  double* panels = panels_.data();
  std::fill(panels_.begin(), panels_.end(), 0.0);
  for (int i = 0; i < p.num_blocks(); ++i) {
    const int ri = p.block_size(i);
    for (int64_t k = p.row_begin(i); k < p.row_end(i); ++k) {
      const int cj = p.block_size(p.col(k));
      const double* block = values + p.offset(k);
      const SupernodalAnalysis::BlockTarget& t = analysis_.block_target[k];
      double* dst = panels + t.offset;
      switch (t.placement) {
        case SupernodalAnalysis::Placement::Diagonal:  // upper (a <= b) → L's lower (b, a)
          for (int a = 0; a < ri; ++a)
            for (int b = a; b < cj; ++b) dst[a * t.ld + b] = block[a * cj + b];
          if (shift != nullptr)
            for (int a = 0; a < ri; ++a) dst[a * t.ld + a] += shift[p.scalar_offset(i) + a];
          break;
        case SupernodalAnalysis::Placement::Direct:
          for (int a = 0; a < ri; ++a)
            for (int b = 0; b < cj; ++b) dst[a * t.ld + b] = block[a * cj + b];
          break;
        case SupernodalAnalysis::Placement::Transposed:
          for (int a = 0; a < ri; ++a)
            for (int b = 0; b < cj; ++b) dst[b * t.ld + a] = block[a * cj + b];
          break;
      }
    }
  }
}

// Subtracts the workspace's L_b L_bᵀ (below x below, lower) from the ancestors' panels.
void SupernodalCholesky::update_ancestors(int s, int64_t below) {
  const SupernodalAnalysis& a = analysis_;
  const int64_t columns = a.column_begin[s + 1] - a.column_begin[s];
  const int64_t* rows = a.row_index.data() + a.row_begin[s] + columns;
  const double* W = workspace_.data();
  const int64_t ldw = supernodal::product_leading_dimension(below);
  for (int64_t u = a.update_begin[s]; u < a.update_begin[s + 1]; ++u) {
    const SupernodalAnalysis::Update& update = a.updates[u];
    const int t = update.target;
    supernodal::subtract_update(W, ldw, update.first, update.last, rows, a.column_begin[t],
                                panels_.data() + a.panel_offset[t],
                                a.row_begin[t + 1] - a.row_begin[t], a.runs.data() + update.run_begin,
                                update.run_end - update.run_begin);
  }
}

int64_t SupernodalCholesky::factor(const BlockSparseSymmetric& A, const double* shift) {
  scatter(A, shift);
  const SupernodalAnalysis& a = analysis_;
  for (int s = 0; s < a.num_supernodes(); ++s) {
    const int64_t n = a.column_begin[s + 1] - a.column_begin[s];
    const int64_t ld = a.row_begin[s + 1] - a.row_begin[s], below = ld - n;
    double* panel = panels_.data() + a.panel_offset[s];
    if (const int64_t bad = supernodal::factor_diagonal(panel, n, ld); bad >= 0)
      return a.column_begin[s] + bad;
    if (below == 0) continue;
    supernodal::solve_below(panel, n, below, ld);
    supernodal::below_product(panel, n, below, ld, workspace_.data(),
                              supernodal::product_leading_dimension(below));
    update_ancestors(s, below);
  }
  return -1;
}

void SupernodalCholesky::substitute(double* y) {
  const SupernodalAnalysis& a = analysis_;
  double* g = gathered_.data();
  // L y' = y: each supernode's own rows, then what they subtract from the rows below.
  for (int s = 0; s < a.num_supernodes(); ++s) {
    const int64_t n = a.column_begin[s + 1] - a.column_begin[s];
    const int64_t ld = a.row_begin[s + 1] - a.row_begin[s], below = ld - n;
    const double* L = panels_.data() + a.panel_offset[s];
    const int64_t* rows = a.row_index.data() + a.row_begin[s] + n;
    double* ys = y + a.column_begin[s];
    for (int64_t c = 0; c < n; ++c) {
      ys[c] /= L[c * ld + c];
      for (int64_t r = c + 1; r < n; ++r) ys[r] -= L[c * ld + r] * ys[c];
    }
    supernodal::below_multiply(L, n, below, ld, ys, g);
    for (int64_t r = 0; r < below; ++r) y[rows[r]] -= g[r];
  }
  // Lᵀ x = y', in reverse.
  for (int s = a.num_supernodes() - 1; s >= 0; --s) {
    const int64_t n = a.column_begin[s + 1] - a.column_begin[s];
    const int64_t ld = a.row_begin[s + 1] - a.row_begin[s], below = ld - n;
    const double* L = panels_.data() + a.panel_offset[s];
    const int64_t* rows = a.row_index.data() + a.row_begin[s] + n;
    double* ys = y + a.column_begin[s];
    for (int64_t r = 0; r < below; ++r) g[r] = y[rows[r]];
    supernodal::below_multiply_transposed(L, n, below, ld, g, ys);
    for (int64_t c = n - 1; c >= 0; --c) {
      double sum = ys[c];
      for (int64_t r = c + 1; r < n; ++r) sum -= L[c * ld + r] * ys[r];
      ys[c] = sum / L[c * ld + c];
    }
  }
}

LinearSolveSummary SupernodalCholesky::solve_checked(const BlockSparseSymmetric& A,
                                                     const double* shift, const double* b,
                                                     double* x, const LinearSolverOptions&) {
  LinearSolveSummary summary;
  ++factorizations_;
  if (const int64_t bad = factor(A, shift); bad >= 0) {
    const int64_t row = analysis_.scalar_perm[bad];  // back to A's numbering
    // The wording of CholmodCholesky's message, so that callers' messages stay the same.
    summary.message = "the matrix is not positive definite (supernodal Cholesky: non-positive "
                      "pivot at scalar row " + std::to_string(row) + ", block " +
                      std::to_string(block_of(*pattern_, row)) + ")";
    return summary;
  }
  const int64_t n = pattern_->dim();
  for (int64_t k = 0; k < n; ++k) permuted_[k] = b[analysis_.scalar_perm[k]];
  substitute(permuted_.data());
  for (int64_t k = 0; k < n; ++k) x[analysis_.scalar_perm[k]] = permuted_[k];
  summary.ok = summary.converged = true;
  summary.iterations = 1;
  return summary;
}

}  // namespace lsjit::linear
