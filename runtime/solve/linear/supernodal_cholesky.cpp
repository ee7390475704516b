#include "lsjit/runtime/solve/linear/supernodal_cholesky.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>

#include "lsjit/common/error.h"
#include "lsjit/runtime/solve/linear/pcg.h"
#include "lsjit/runtime/solve/linear/supernodal_kernels.h"

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
      analysis_(*shared_analysis_),
      uniform_block_size_(pattern_->uniform_block_size(0, pattern_->num_blocks())) {
  make_split();
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
      analysis_(*shared_analysis_),
      uniform_block_size_(pattern_->uniform_block_size(0, pattern_->num_blocks())) {
  if (analysis_.scalar_perm.size() != static_cast<size_t>(pattern_->dim()) ||
      analysis_.block_target.size() != static_cast<size_t>(pattern_->num_stored_blocks()))
    throw Error("SupernodalCholesky: the analysis given is not one of this pattern (" +
                std::to_string(analysis_.scalar_perm.size()) + " scalars, " +
                std::to_string(analysis_.block_target.size()) + " stored blocks; the pattern has " +
                std::to_string(pattern_->dim()) + " and " +
                std::to_string(pattern_->num_stored_blocks()) + ")");
  make_split();
}

template <>
SupernodalCholesky::Factor<double>& SupernodalCholesky::factor_of<double>() {
  return double_;
}
template <>
SupernodalCholesky::Factor<float>& SupernodalCholesky::factor_of<float>() {
  return single_;
}

// The split depends on the structure alone, so the constructors make it; each precision's
// memory is made by allocate<T>() on its first factorization.
void SupernodalCholesky::make_split() {
  auto split = std::make_unique<SupernodalSplit>(split_supernodal_tree(analysis_));
  if (split->predicted_speedup >= kMinSplitSpeedup &&
      split->private_size <= (analysis_.panel_offset.back() + supernodal::kProductRowPad) / 2)
    split_ = std::move(split);
  analyses_ = 1;
}

template <class T>
void SupernodalCholesky::allocate() {
  Factor<T>& f = factor_of<T>();
  if (!f.panels.empty()) return;
  f.panels.assign(analysis_.panel_offset.back() + supernodal::kProductRowPad, T{0});
  const int64_t ldw = supernodal::product_leading_dimension(analysis_.max_below_rows);
  f.workspace.assign(ldw * ldw, T{0});
  f.permuted.assign(pattern_->dim(), T{0});
  f.gathered.assign(analysis_.max_rows, T{0});
  if (split_) f.private_top.assign(split_->private_size, T{0});
}

namespace {

// Copies A's blocks (and shift) into the zeroed panels; B is every block's size when it is
// known at compile time (0: each block's own).
template <class T, int B>
void scatter_blocks(const BlockPattern& p, const SupernodalAnalysis& a, const double* values,
                    const double* shift, T* panels) {
  for (int i = 0; i < p.num_blocks(); ++i) {
    const int ri = B > 0 ? B : p.block_size(i);
    for (int64_t k = p.row_begin(i); k < p.row_end(i); ++k) {
      const int cj = B > 0 ? B : p.block_size(p.col(k));
      const double* block = values + p.offset(k);
      const SupernodalAnalysis::BlockTarget& t = a.block_target[k];
      T* dst = panels + t.offset;
      if (t.placement == SupernodalAnalysis::Placement::Diagonal) {  // upper (r <= c) → L's lower (c, r)
        for (int r = 0; r < ri; ++r)
          for (int c = r; c < cj; ++c) dst[r * t.ld + c] = static_cast<T>(block[r * cj + c]);
        if (shift != nullptr)  // added in double, then rounded once
          for (int r = 0; r < ri; ++r)
            dst[r * t.ld + r] = static_cast<T>(block[r * cj + r] + shift[p.scalar_offset(i) + r]);
        continue;
      }
      // Direct: block (r, c) to dst[r * ld + c]; transposed: to dst[c * ld + r].
      const bool direct = t.placement == SupernodalAnalysis::Placement::Direct;
      const int64_t row_step = direct ? t.ld : 1, column_step = direct ? 1 : t.ld;
      for (int r = 0; r < ri; ++r)
        for (int c = 0; c < cj; ++c) dst[r * row_step + c * column_step] = static_cast<T>(block[r * cj + c]);
    }
  }
}

}  // namespace

// Pose graphs' blocks are all 3 x 3 (SE2) or 6 x 6 (SE3): with the size a constant, each
// block's copy is unrolled in full (with a runtime size, the loops' control is most of
// the scatter's time).
template <class T>
void SupernodalCholesky::scatter(const BlockSparseSymmetric& A, const double* shift) {
  const BlockPattern& p = *pattern_;
  const double* values = A.values().data();
  Factor<T>& f = factor_of<T>();
  T* panels = f.panels.data();
  std::fill(f.panels.begin(), f.panels.end(), T{0});
  switch (uniform_block_size_) {
    case 3: return scatter_blocks<T, 3>(p, analysis_, values, shift, panels);
    case 6: return scatter_blocks<T, 6>(p, analysis_, values, shift, panels);
    default: return scatter_blocks<T, 0>(p, analysis_, values, shift, panels);
  }
}

// Subtracts the workspace's L_b L_bᵀ (below x below, lower) from the ancestors' panels.
template <class T>
void SupernodalCholesky::update_ancestors(int s, int64_t below, const T* W, T* private_top) {
  const SupernodalAnalysis& a = analysis_;
  const int64_t columns = a.column_begin[s + 1] - a.column_begin[s];
  const int64_t* rows = a.row_index.data() + a.row_begin[s] + columns;
  const int64_t ldw = supernodal::product_leading_dimension(below);
  T* panels = factor_of<T>().panels.data();
  for (int64_t u = a.update_begin[s]; u < a.update_begin[s + 1]; ++u) {
    const SupernodalAnalysis::Update& update = a.updates[u];
    const int t = update.target;
    T* target = private_top != nullptr && split_->private_offset[t] >= 0
                    ? private_top + split_->private_offset[t]
                    : panels + a.panel_offset[t];
    supernodal::subtract_update(W, ldw, update.first, update.last, rows, a.column_begin[t], target,
                                a.row_begin[t + 1] - a.row_begin[t], a.runs.data() + update.run_begin,
                                update.run_end - update.run_begin);
  }
}

template <class T>
int64_t SupernodalCholesky::factor_supernode(int s, T* W, T* private_top) {
  const SupernodalAnalysis& a = analysis_;
  const int64_t n = a.column_begin[s + 1] - a.column_begin[s];
  const int64_t ld = a.row_begin[s + 1] - a.row_begin[s], below = ld - n;
  T* panel = factor_of<T>().panels.data() + a.panel_offset[s];
  if (const int64_t bad = supernodal::factor_panel(panel, n, ld); bad >= 0)
    return a.column_begin[s] + bad;
  if (below == 0) return -1;
  supernodal::below_product(panel, n, below, ld, W, supernodal::product_leading_dimension(below));
  update_ancestors(s, below, W, private_top);
  return -1;
}

template <class T>
int64_t SupernodalCholesky::factor(const BlockSparseSymmetric& A, const double* shift, int threads) {
  allocate<T>();
  scatter<T>(A, shift);
  if (split_) return factor_split<T>(threads);
  T* W = factor_of<T>().workspace.data();
  for (int s = 0; s < analysis_.num_supernodes(); ++s)
    if (const int64_t bad = factor_supernode<T>(s, W, nullptr); bad >= 0) return bad;
  return -1;
}

// A bin stops at its first bad pivot (a subtree reads only itself, so it is the same
// pivot on any thread); bin 0's is reported before bin 1's, whatever ran first.
template <class T>
int64_t SupernodalCholesky::factor_split(int threads) {
  const SupernodalAnalysis& a = analysis_;
  Factor<T>& f = factor_of<T>();
  std::fill(f.private_top.begin(), f.private_top.end(), T{0});
  int64_t bad[2] = {-1, -1};
  auto run_bin = [&](size_t bin, T* W) {
    T* private_top = bin == 0 ? nullptr : f.private_top.data();
    for (const auto& [first, last] : split_->ranges[bin])
      for (int s = first; s <= last; ++s)
        if ((bad[bin] = factor_supernode<T>(s, W, private_top)) >= 0) return;
  };
  if (threads >= 2) {
    if (!pool_) pool_ = std::make_unique<detail::ThreadPool>(2);
    if (f.second_workspace.empty()) f.second_workspace.assign(f.workspace.size(), T{0});
    pool_->run(2, [&](size_t bin) { run_bin(bin, bin == 0 ? f.workspace.data() : f.second_workspace.data()); });
  } else {
    run_bin(0, f.workspace.data());
    if (bad[0] < 0) run_bin(1, f.workspace.data());
  }
  if (bad[0] >= 0) return bad[0];
  if (bad[1] >= 0) return bad[1];
  for (int t : split_->top) {  // bin 1's updates of the top, then the top itself
    T* panel = f.panels.data() + a.panel_offset[t];
    const T* update = f.private_top.data() + split_->private_offset[t];
    for (int64_t k = 0; k < a.panel_offset[t + 1] - a.panel_offset[t]; ++k) panel[k] += update[k];
  }
  for (int t : split_->top)
    if (const int64_t bad_top = factor_supernode<T>(t, f.workspace.data(), nullptr); bad_top >= 0)
      return bad_top;
  return -1;
}

template <class T>
void SupernodalCholesky::substitute(T* y) {
  const SupernodalAnalysis& a = analysis_;
  Factor<T>& f = factor_of<T>();
  T* g = f.gathered.data();
  // L y' = y: each supernode's own rows, then what they subtract from the rows below.
  for (int s = 0; s < a.num_supernodes(); ++s) {
    const int64_t n = a.column_begin[s + 1] - a.column_begin[s];
    const int64_t ld = a.row_begin[s + 1] - a.row_begin[s], below = ld - n;
    const T* L = f.panels.data() + a.panel_offset[s];
    const int64_t* rows = a.row_index.data() + a.row_begin[s] + n;
    T* ys = y + a.column_begin[s];
    supernodal::diagonal_solve(L, n, ld, ys);
    supernodal::below_multiply(L, n, below, ld, ys, g);
    for (int64_t r = 0; r < below; ++r) y[rows[r]] -= g[r];
  }
  // Lᵀ x = y', in reverse.
  for (int s = a.num_supernodes() - 1; s >= 0; --s) {
    const int64_t n = a.column_begin[s + 1] - a.column_begin[s];
    const int64_t ld = a.row_begin[s + 1] - a.row_begin[s], below = ld - n;
    const T* L = f.panels.data() + a.panel_offset[s];
    const int64_t* rows = a.row_index.data() + a.row_begin[s] + n;
    T* ys = y + a.column_begin[s];
    for (int64_t r = 0; r < below; ++r) g[r] = y[rows[r]];
    supernodal::below_multiply_transposed(L, n, below, ld, g, ys);
    supernodal::diagonal_solve_transposed(L, n, ld, ys);
  }
}

template <class T>
void SupernodalCholesky::solve_with_factor(const double* b, double* x) {
  const int64_t n = pattern_->dim();
  T* permuted = factor_of<T>().permuted.data();
  for (int64_t k = 0; k < n; ++k) permuted[k] = static_cast<T>(b[analysis_.scalar_perm[k]]);
  substitute<T>(permuted);
  for (int64_t k = 0; k < n; ++k) x[analysis_.scalar_perm[k]] = permuted[k];
}

std::string SupernodalCholesky::not_positive_definite(int64_t bad_column, int* block) const {
  const int64_t row = analysis_.scalar_perm[bad_column];  // back to A's numbering
  *block = block_of(*pattern_, row);
  // The wording of CholmodCholesky's message, so that callers' messages stay the same.
  return "the matrix is not positive definite (supernodal Cholesky: non-positive pivot at "
         "scalar row " + std::to_string(row) + ", block " + std::to_string(*block) + ")";
}

bool SupernodalCholesky::solve_mixed(const BlockSparseSymmetric& A, const double* shift,
                                     const double* b, double* x, int threads, int max_refinements,
                                     LinearSolveSummary& summary) {
  // A float pivot that fails may be float's rounding alone: the double factor decides.
  if (factor<float>(A, shift, threads) >= 0) return false;
  const int64_t n = pattern_->dim();
  residual_.resize(n);
  correction_.resize(n);
  double b_norm = 0;
  for (int64_t k = 0; k < n; ++k) b_norm += b[k] * b[k];
  b_norm = std::sqrt(b_norm);
  std::fill(x, x + n, 0.0);
  std::copy(b, b + n, residual_.begin());
  double r_norm = b_norm;
  for (int step = 1; step <= max_refinements; ++step) {
    if (r_norm <= kMixedPrecisionTolerance * b_norm) break;
    solve_with_factor<float>(residual_.data(), correction_.data());
    for (int64_t k = 0; k < n; ++k) x[k] += correction_[k];
    multiply_shifted(A, shift, x, residual_.data());  // r = b − (A + diag(shift)) x
    double next = 0;
    for (int64_t k = 0; k < n; ++k) {
      residual_[k] = b[k] - residual_[k];
      next += residual_[k] * residual_[k];
    }
    next = std::sqrt(next);
    summary.iterations = step;
    if (!(next <= 0.5 * r_norm)) return false;  // stalled (or NaN): double decides
    r_norm = next;
  }
  if (!(r_norm <= kMixedPrecisionTolerance * b_norm)) return false;
  summary.ok = summary.converged = summary.mixed_precision = true;
  summary.relative_residual = b_norm > 0 ? r_norm / b_norm : 0;
  return true;
}

LinearSolveSummary SupernodalCholesky::solve_checked(const BlockSparseSymmetric& A,
                                                     const double* shift, const double* b,
                                                     double* x, const LinearSolverOptions& options) {
  LinearSolveSummary summary;
  if (options.mixed_precision != MixedPrecision::Never && options.max_num_refinement_iterations < 1) {
    summary.message = "max_num_refinement_iterations must be >= 1 for mixed-precision solves (it is " +
                      std::to_string(options.max_num_refinement_iterations) + ")";
    return summary;
  }
  ++factorizations_;
  const int threads = options.num_threads == 0 ? static_cast<int>(std::thread::hardware_concurrency())
                                               : options.num_threads;
  const bool mixed = options.mixed_precision == MixedPrecision::Always ||
                     (options.mixed_precision == MixedPrecision::Automatic && mixed_precision_pays());
  if (mixed && !float_failed_) {
    if (solve_mixed(A, shift, b, x, threads, options.max_num_refinement_iterations, summary)) {
      ++mixed_solves_;
      return summary;
    }
    ++mixed_fallbacks_;
    ++factorizations_;
    float_failed_ = true;
    // The float factor's memory goes back before the double factor is made.
    single_ = Factor<float>{};
    residual_ = {};
    correction_ = {};
    summary = LinearSolveSummary{};
    summary.mixed_precision_fallback = true;
  }
  if (const int64_t bad = factor<double>(A, shift, threads); bad >= 0) {
    summary.message = not_positive_definite(bad, &summary.bad_block);
    return summary;
  }
  solve_with_factor<double>(b, x);
  summary.ok = summary.converged = true;
  summary.iterations = 1;
  return summary;
}

// factorize() and solve_factored() (supernodal_factor_once.cpp) use the double ones.
template int64_t SupernodalCholesky::factor<double>(const BlockSparseSymmetric&, const double*, int);
template void SupernodalCholesky::solve_with_factor<double>(const double*, double*);

}  // namespace lsjit::linear
