#include "lsjit/runtime/linear/supernodal_cholesky.h"

#include <algorithm>
#include <string>
#include <thread>

#include "lsjit/ir/error.h"
#include "lsjit/runtime/linear/supernodal_kernels.h"

namespace lsjit::linear {

namespace {

// Below this predicted speed-up on two threads the elimination tree is not split (one
// chain of supernodes, or one subtree holding nearly all the work).
constexpr double kMinSplitSpeedup = 1.15;

// The block containing scalar row r (only on the error path: a linear scan is fine).
int block_of(const BlockPattern& p, int64_t r) {
  int i = 0;
  while (i + 1 < p.num_blocks() && p.scalar_offset(i + 1) <= r) ++i;
  return i;
}

}  // namespace

SupernodalCholesky::SupernodalCholesky(std::shared_ptr<const BlockPattern> pattern,
                                       SupernodalOrdering ordering)
    : LinearSolver(std::move(pattern)),
      shared_analysis_(std::make_shared<const SupernodalAnalysis>(analyze_supernodal(*pattern_, ordering))),
      analysis_(*shared_analysis_) {
  allocate();
}

namespace {
std::shared_ptr<const SupernodalAnalysis> not_null(std::shared_ptr<const SupernodalAnalysis> analysis) {
  if (!analysis) throw Error("SupernodalCholesky: the analysis given is null");
  return analysis;
}
}  // namespace

SupernodalCholesky::SupernodalCholesky(std::shared_ptr<const BlockPattern> pattern,
                                       std::shared_ptr<const SupernodalAnalysis> analysis)
    : LinearSolver(std::move(pattern)), shared_analysis_(not_null(std::move(analysis))),
      analysis_(*shared_analysis_) {
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
  auto split = std::make_unique<SupernodalSplit>(split_supernodal_tree(analysis_));
  if (split->predicted_speedup >= kMinSplitSpeedup &&
      split->private_size <= static_cast<int64_t>(panels_.size()) / 2) {
    private_top_.assign(split->private_size, 0.0);
    split_ = std::move(split);
  }
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
void SupernodalCholesky::update_ancestors(int s, int64_t below, const double* W,
                                          double* private_top) {
  const SupernodalAnalysis& a = analysis_;
  const int64_t columns = a.column_begin[s + 1] - a.column_begin[s];
  const int64_t* rows = a.row_index.data() + a.row_begin[s] + columns;
  const int64_t ldw = supernodal::product_leading_dimension(below);
  for (int64_t u = a.update_begin[s]; u < a.update_begin[s + 1]; ++u) {
    const SupernodalAnalysis::Update& update = a.updates[u];
    const int t = update.target;
    double* target = private_top != nullptr && split_->private_offset[t] >= 0
                         ? private_top + split_->private_offset[t]
                         : panels_.data() + a.panel_offset[t];
    supernodal::subtract_update(W, ldw, update.first, update.last, rows, a.column_begin[t], target,
                                a.row_begin[t + 1] - a.row_begin[t], a.runs.data() + update.run_begin,
                                update.run_end - update.run_begin);
  }
}

int64_t SupernodalCholesky::factor_supernode(int s, double* W, double* private_top) {
  const SupernodalAnalysis& a = analysis_;
  const int64_t n = a.column_begin[s + 1] - a.column_begin[s];
  const int64_t ld = a.row_begin[s + 1] - a.row_begin[s], below = ld - n;
  double* panel = panels_.data() + a.panel_offset[s];
  if (const int64_t bad = supernodal::factor_diagonal(panel, n, ld); bad >= 0)
    return a.column_begin[s] + bad;
  if (below == 0) return -1;
  supernodal::solve_below(panel, n, below, ld);
  supernodal::below_product(panel, n, below, ld, W, supernodal::product_leading_dimension(below));
  update_ancestors(s, below, W, private_top);
  return -1;
}

int64_t SupernodalCholesky::factor(const BlockSparseSymmetric& A, const double* shift, int threads) {
  scatter(A, shift);
  if (split_) return factor_split(threads);
  for (int s = 0; s < analysis_.num_supernodes(); ++s)
    if (const int64_t bad = factor_supernode(s, workspace_.data(), nullptr); bad >= 0) return bad;
  return -1;
}

// A bin stops at its first bad pivot (a subtree reads only itself, so it is the same
// pivot on any thread); bin 0's is reported before bin 1's, whatever ran first.
int64_t SupernodalCholesky::factor_split(int threads) {
  const SupernodalAnalysis& a = analysis_;
  std::fill(private_top_.begin(), private_top_.end(), 0.0);
  int64_t bad[2] = {-1, -1};
  auto run_bin = [&](size_t bin, double* W) {
    double* private_top = bin == 0 ? nullptr : private_top_.data();
    for (const auto& [first, last] : split_->ranges[bin])
      for (int s = first; s <= last; ++s)
        if ((bad[bin] = factor_supernode(s, W, private_top)) >= 0) return;
  };
  if (threads >= 2) {
    if (!pool_) {
      second_workspace_.assign(workspace_.size(), 0.0);
      pool_ = std::make_unique<detail::ThreadPool>(2);
    }
    pool_->run(2, [&](size_t bin) { run_bin(bin, bin == 0 ? workspace_.data() : second_workspace_.data()); });
  } else {
    run_bin(0, workspace_.data());
    if (bad[0] < 0) run_bin(1, workspace_.data());
  }
  if (bad[0] >= 0) return bad[0];
  if (bad[1] >= 0) return bad[1];
  for (int t : split_->top) {  // bin 1's updates of the top, then the top itself
    double* panel = panels_.data() + a.panel_offset[t];
    const double* update = private_top_.data() + split_->private_offset[t];
    for (int64_t k = 0; k < a.panel_offset[t + 1] - a.panel_offset[t]; ++k) panel[k] += update[k];
  }
  for (int t : split_->top)
    if (const int64_t bad_top = factor_supernode(t, workspace_.data(), nullptr); bad_top >= 0) return bad_top;
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
                                                     double* x, const LinearSolverOptions& options) {
  LinearSolveSummary summary;
  ++factorizations_;
  const int threads = options.num_threads == 0 ? static_cast<int>(std::thread::hardware_concurrency())
                                               : options.num_threads;
  if (const int64_t bad = factor(A, shift, threads); bad >= 0) {
    const int64_t row = analysis_.scalar_perm[bad];  // back to A's numbering
    summary.bad_block = block_of(*pattern_, row);
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
