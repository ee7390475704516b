// The block-sparse symmetric matrix of the Gauss-Newton normal equations, H = JᵀJ.
//
// Block row/column i belongs to one variable (its tangent dimension is the block size);
// block (i, j) is nonzero when some cost instance involves both variables. The sparsity is
// fixed by the problem's structure, so it is computed once (BlockPattern) and shared by
// every matrix and solver built for that structure; only the values change per iteration.
//
// Storage: the upper block triangle (block row i <= block column j), as block-row CSR.
// Every diagonal block is present, first in its row; the other stored blocks of a row
// follow in increasing column order. Each block is stored row-major and contiguous, and
// all blocks lie back to back in values() in row order, so
//
//   values()[offset(k) + a * block_size(col(k)) + b] = A(scalar_offset(i) + a,
//                                                         scalar_offset(col(k)) + b)
//
// for the k-th stored block, in block row i, row_begin(i) <= k < row_end(i).
// Diagonal blocks are stored in full (ri x ri) so that a kernel's H[v,v] can be added as
// it is, but only their upper triangle is ever read: multiply(), to_dense(), diagonal()
// and every solver treat A(r, c) for r > c in a diagonal block as A(c, r). Blocks below
// the block diagonal are not stored at all.
//
// Thread safety: const member functions may run concurrently; anything that writes
// values() needs exclusive access. BlockPattern is immutable after construction.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "lsjit/ir/stable_hash.h"
#include "lsjit/runtime/evaluate/huge_page_allocator.h"

namespace lsjit::linear {

// The structure of a block-sparse symmetric matrix: block sizes and which upper blocks are
// stored. Immutable; shared through std::shared_ptr<const BlockPattern> by the matrices and
// solvers of one problem structure.
class BlockPattern {
 public:
  // block_sizes[i] >= 1 is the scalar size of block row/column i. pairs lists the blocks
  // that may be nonzero, in any order: (i, j) and (j, i) name the same block, duplicates
  // are allowed, diagonal blocks are implied. Throws std::invalid_argument on a block size
  // < 1 or a block index outside [0, block_sizes.size()). When pair_blocks is not null it
  // receives, for each pair in the order given, its stored block k (what find_index would
  // return): analyze() places every instance's blocks with it instead of a search each.
  BlockPattern(std::vector<int> block_sizes, std::vector<std::pair<int, int>> pairs,
               std::vector<int64_t>* pair_blocks = nullptr);
  // The same, the pairs read in place and each pair's stored block written to
  // pair_blocks[p] unless pair_blocks is empty (else it must have pairs.size() entries):
  // how analyze() passes its own (huge-page) arrays.
  BlockPattern(std::vector<int> block_sizes, std::span<const std::pair<int, int>> pairs,
               std::span<int64_t> pair_blocks);

  int num_blocks() const { return static_cast<int>(block_sizes_.size()); }
  int64_t dim() const { return scalar_offsets_.back(); }  // scalar rows (= columns)
  int block_size(int block) const { return block_sizes_[block]; }
  int64_t scalar_offset(int block) const { return scalar_offsets_[block]; }
  // The size all blocks [begin, end) share, or 0 when they differ or the range is empty:
  // what solvers compile their fixed-size loops for (pose graphs: all 3 or all 6).
  int uniform_block_size(int begin, int end) const;

  // Block-row CSR. Stored blocks k of block row i: row_begin(i) <= k < row_end(i), the
  // first being the diagonal block (col(row_begin(i)) == i), then increasing col(k).
  int64_t num_stored_blocks() const { return static_cast<int64_t>(cols_.size()); }
  int64_t row_begin(int i) const { return row_begins_[i]; }
  int64_t row_end(int i) const { return row_begins_[i + 1]; }
  int col(int64_t k) const { return cols_[k]; }
  int64_t offset(int64_t k) const { return offsets_[k]; }  // into values()
  int64_t num_values() const { return offsets_.back(); }   // values() size

  // Offset in values() of block (i, j). -1 when i > j (the lower triangle is not stored),
  // when the block is not in the pattern, or when an index is out of range. O(log row
  // length): precompute the offsets of the blocks an assembly loop writes.
  int64_t find(int i, int j) const;
  // The same lookup, as the stored-block index k (offset(k) == find(i, j)), or -1.
  int64_t find_index(int i, int j) const;

  // Same block sizes and stored blocks (so value layouts are interchangeable).
  bool operator==(const BlockPattern& other) const;
  // A hash of the block sizes and the stored blocks: equal patterns hash equal in every
  // process on this host (the arrays are hashed as bytes, in the host's byte order). What
  // keys data derived from the structure alone (runtime/analyze/ordering_cache.h).
  Hash128 structure_hash() const;

  // The scalar lower triangle of A in compressed sparse columns (equivalently: the upper
  // triangle in compressed rows, which is what the block storage is row by row). Column c
  // holds rows r >= c in increasing order, the diagonal first. For the e-th entry,
  // value_index[e] is where its value lives in values(). What sparse Cholesky libraries
  // (CHOLMOD stype -1, Eigen's Lower view) take, built once per structure by a solver.
  struct LowerCsc {
    std::vector<int64_t> column_begin;  // dim() + 1
    std::vector<int64_t> row;           // num entries
    std::vector<int64_t> value_index;   // num entries
  };
  LowerCsc lower_csc() const;

 private:
  std::vector<int> block_sizes_;
  detail::BigVector<int64_t> scalar_offsets_;  // num_blocks + 1
  detail::BigVector<int64_t> row_begins_;      // num_blocks + 1
  detail::BigVector<int> cols_;                // per stored block
  detail::BigVector<int64_t> offsets_;         // per stored block, plus the total at the end
};

// A symmetric matrix with a BlockPattern and its values. Copies share the pattern and copy
// the values.
class BlockSparseSymmetric {
 public:
  // Builds the pattern (see BlockPattern's constructor, which may throw) with zero values.
  BlockSparseSymmetric(std::vector<int> block_sizes, std::vector<std::pair<int, int>> pairs);
  // Zero values on an existing pattern, which must not be null (std::invalid_argument).
  explicit BlockSparseSymmetric(std::shared_ptr<const BlockPattern> pattern);
  // Values not initialized, for a caller that writes every stored value before reading
  // any (the Evaluator's normal_equations does): no pass zeroing fresh memory first. In
  // sanitizer builds they are NaN, so that a block read before it is written fails the
  // tests that read it.
  static BlockSparseSymmetric uninitialized(std::shared_ptr<const BlockPattern> pattern);

  const BlockPattern& pattern() const { return *pattern_; }
  const std::shared_ptr<const BlockPattern>& shared_pattern() const { return pattern_; }

  int num_blocks() const { return pattern_->num_blocks(); }
  int64_t dim() const { return pattern_->dim(); }
  int block_size(int block) const { return pattern_->block_size(block); }
  int64_t scalar_offset(int block) const { return pattern_->scalar_offset(block); }
  int64_t find(int i, int j) const { return pattern_->find(i, j); }

  std::span<double> values() { return values_; }
  std::span<const double> values() const { return values_; }
  void set_zero();

  // Adds the row-major block_size(i) x block_size(j) matrix B to block (i, j) of A and so,
  // by symmetry, Bᵀ to (j, i): for i > j it is added transposed to the stored block (j, i).
  // For i == j, B is added as it is and only its upper triangle will be read; a pair of
  // cost slots (v, w) that name the same variable must add H[v,w] + H[v,w]ᵀ there. Throws
  // std::out_of_range when the block is not in the pattern. Does a find(): assembly loops
  // that run every iteration should precompute offsets instead.
  void add_to_block(int i, int j, const double* B);

  // y = A x for dim()-vectors x, y (y is overwritten; x and y must not overlap). One pass
  // over the stored blocks, each used for both its block and its transpose.
  void multiply(const double* x, double* y) const;

  // d[r] = A(r, r), dim() doubles: what Levenberg-Marquardt scales its damping by.
  void diagonal(double* d) const;

  // The full symmetric dense matrix (for tests and small problems).
  Eigen::MatrixXd to_dense() const;

 private:
  struct Uninitialized {  // not constructible from {}: keeps ({}, {}) the public constructor's
    explicit Uninitialized(int) {}
  };
  BlockSparseSymmetric(std::shared_ptr<const BlockPattern> pattern, Uninitialized);

  std::shared_ptr<const BlockPattern> pattern_;
  detail::BigBuffer<double> values_;  // huge pages when large: see huge_page_allocator.h
};

}  // namespace lsjit::linear
