#include "lsjit/runtime/solve/linear/subgraph_cg.h"

#include <algorithm>

namespace lsjit::linear {
namespace {

std::vector<int> block_sizes(const BlockPattern& p) {
  std::vector<int> sizes(p.num_blocks());
  for (int i = 0; i < p.num_blocks(); ++i) sizes[i] = p.block_size(i);
  return sizes;
}

}  // namespace

SubgraphCg::SubgraphCg(std::shared_ptr<const BlockPattern> pattern, int cluster_blocks)
    : LinearSolver(std::move(pattern)),
      subgraph_(choose_subgraph(*pattern_, cluster_blocks)),
      sparsified_(block_sizes(*pattern_), subgraph_.pairs) {
  const BlockPattern& p = *pattern_;
  const BlockPattern& s = sparsified_.pattern();
  source_offset_.resize(s.num_stored_blocks());
  for (int i = 0; i < s.num_blocks(); ++i)
    for (int64_t k = s.row_begin(i); k < s.row_end(i); ++k) source_offset_[k] = p.find(i, s.col(k));
  factor_ = std::make_unique<SupernodalCholesky>(sparsified_.shared_pattern());
  vectors_.resize(p.dim());
  analyses_ = 1;
}

void SubgraphCg::copy_kept_blocks(const BlockSparseSymmetric& A) {
  const BlockPattern& s = sparsified_.pattern();
  const double* from = A.values().data();
  double* to = sparsified_.values().data();
  for (int i = 0; i < s.num_blocks(); ++i)
    for (int64_t k = s.row_begin(i); k < s.row_end(i); ++k) {
      const int64_t size = int64_t{s.block_size(i)} * s.block_size(s.col(k));
      std::copy(from + source_offset_[k], from + source_offset_[k] + size, to + s.offset(k));
    }
}

LinearSolveSummary SubgraphCg::solve_checked(const BlockSparseSymmetric& A, const double* shift,
                                             const double* b, double* x,
                                             const LinearSolverOptions& options) {
  LinearSolveSummary summary;
  if (summary.message = invalid_cg_options(options, "subgraph_cg"); !summary.message.empty())
    return summary;
  ++factorizations_;
  copy_kept_blocks(A);
  if (std::string failed = factor_->factorize(sparsified_, shift); !failed.empty()) {
    summary.message = "subgraph_cg's preconditioner (A's subgraph + diag(shift)): " + failed;
    return summary;
  }
  const size_t n = static_cast<size_t>(pattern_->dim());
  return preconditioned_cg(
      n, b, x, options,
      [&](const double* p, double* q) { multiply_shifted(A, shift, p, q); },
      [&](const double* r, double* z) { factor_->solve_factored(r, z); }, "subgraph_cg",
      "pᵀ(A + diag(shift))p", vectors_);
}

}  // namespace lsjit::linear
