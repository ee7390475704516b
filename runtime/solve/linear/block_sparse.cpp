#include "lsjit/runtime/solve/linear/block_sparse.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

namespace lsjit::linear {

namespace {

std::span<int64_t> sized(std::vector<int64_t>* pair_blocks, size_t pairs) {
  if (pair_blocks == nullptr) return {};
  pair_blocks->assign(pairs, -1);
  return *pair_blocks;
}

}  // namespace

BlockPattern::BlockPattern(std::vector<int> block_sizes, std::vector<std::pair<int, int>> pairs,
                           std::vector<int64_t>* pair_blocks)
    : BlockPattern(std::move(block_sizes), std::span<const std::pair<int, int>>(pairs),
                   sized(pair_blocks, pairs.size())) {}

BlockPattern::BlockPattern(std::vector<int> block_sizes, std::span<const std::pair<int, int>> pairs,
                           std::span<int64_t> pair_blocks)
    : block_sizes_(std::move(block_sizes)) {
  const int n = num_blocks();
  scalar_offsets_.assign(n + 1, 0);
  for (int i = 0; i < n; ++i) {
    if (block_sizes_[i] < 1)
      throw std::invalid_argument("BlockPattern: block " + std::to_string(i) + " has size " +
                                  std::to_string(block_sizes_[i]));
    scalar_offsets_[i + 1] = scalar_offsets_[i] + block_sizes_[i];
  }
  if (pairs.size() >= std::numeric_limits<uint32_t>::max())
    throw std::invalid_argument("BlockPattern: " + std::to_string(pairs.size()) + " block pairs, more than " +
                                std::to_string(std::numeric_limits<uint32_t>::max() - 1));
  // Bucket the pairs by row (a counting sort: Ladybug-49 has 31,843 pairs in 49 long rows,
  // and 7,776 rows with their diagonal only), the diagonal implied in each; then sort and
  // deduplicate each row's columns, the diagonal coming first. Each entry is its column
  // above the pair's number + 1 (0 for the implied diagonal), so that sorting keeps the
  // pairs' places for pair_blocks.
  if (!pair_blocks.empty() && pair_blocks.size() != pairs.size())
    throw std::invalid_argument("BlockPattern: " + std::to_string(pair_blocks.size()) + " pair_blocks for " +
                                std::to_string(pairs.size()) + " pairs");
  detail::BigVector<int64_t> row_start(n + 1, 0);
  for (const auto& [i, j] : pairs) {
    if (i < 0 || j < 0 || i >= n || j >= n)
      throw std::invalid_argument("BlockPattern: block pair (" + std::to_string(i) + ", " +
                                  std::to_string(j) + ") outside " + std::to_string(n) +
                                  " blocks");
    ++row_start[std::min(i, j) + 1];
  }
  for (int i = 0; i < n; ++i) row_start[i + 1] += row_start[i] + 1;
  detail::BigBuffer<uint64_t> bucketed(static_cast<size_t>(row_start[n]));
  detail::BigVector<int64_t> next(row_start.begin(), row_start.end() - 1);
  for (int i = 0; i < n; ++i) bucketed[next[i]++] = uint64_t(i) << 32;
  for (size_t k = 0; k < pairs.size(); ++k) {
    const auto [i, j] = std::minmax(pairs[k].first, pairs[k].second);
    bucketed[next[i]++] = uint64_t(j) << 32 | (k + 1);
  }

  row_begins_.assign(n + 1, 0);
  cols_.reserve(bucketed.size());
  offsets_.reserve(bucketed.size() + 1);
  int64_t offset = 0;
  for (int i = 0; i < n; ++i) {
    const auto first = bucketed.begin() + row_start[i], last = bucketed.begin() + row_start[i + 1];
    if (!std::is_sorted(first, last)) std::sort(first, last);
    for (auto it = first; it != last; ++it) {
      const int col = static_cast<int>(*it >> 32);
      if (it == first || col != static_cast<int>(*(it - 1) >> 32)) {
        cols_.push_back(col);
        offsets_.push_back(offset);
        offset += int64_t{block_sizes_[i]} * block_sizes_[col];
      }
      const uint64_t pair = *it & 0xffffffffu;
      if (pair != 0 && !pair_blocks.empty()) pair_blocks[pair - 1] = static_cast<int64_t>(cols_.size()) - 1;
    }
    row_begins_[i + 1] = static_cast<int64_t>(cols_.size());
  }
  offsets_.push_back(offset);
}

int BlockPattern::uniform_block_size(int begin, int end) const {
  if (begin == end) return 0;
  for (int i = begin + 1; i < end; ++i)
    if (block_sizes_[i] != block_sizes_[begin]) return 0;
  return block_sizes_[begin];
}

int64_t BlockPattern::find_index(int i, int j) const {
  if (i < 0 || j >= num_blocks() || i > j) return -1;
  const auto first = cols_.begin() + row_begins_[i], last = cols_.begin() + row_begins_[i + 1];
  const auto it = std::lower_bound(first, last, j);
  if (it == last || *it != j) return -1;
  return it - cols_.begin();
}

int64_t BlockPattern::find(int i, int j) const {
  const int64_t k = find_index(i, j);
  return k < 0 ? -1 : offsets_[k];
}

bool BlockPattern::operator==(const BlockPattern& other) const {
  return block_sizes_ == other.block_sizes_ && row_begins_ == other.row_begins_ &&
         cols_ == other.cols_;
}

namespace {

// Four independent multiply-rotate lanes over the words of `bytes` (the last one padded
// with zeros), then StableHasher over the lanes and the length: the lanes run side by
// side, where StableHasher's own byte hashing waits on two dependent mixes per word, and a
// pattern is tens of kilobytes. Not cryptographic; what it keys (ordering_cache.h) is
// checked after the read, so a collision costs speed, never correctness.
void add_words(StableHasher& h, std::string_view bytes) {
  constexpr uint64_t kMul = 0x9e3779b97f4a7c15ull;
  uint64_t lane[4] = {0x243f6a8885a308d3ull, 0x13198a2e03707344ull, 0xa4093822299f31d0ull,
                      0x082efa98ec4e6c89ull};
  auto mix = [&](int i, uint64_t word) { lane[i] = std::rotl((lane[i] ^ word) * kMul, 29); };
  size_t at = 0;
  for (; at + 32 <= bytes.size(); at += 32)
    for (int i = 0; i < 4; ++i) {
      uint64_t w;
      std::memcpy(&w, bytes.data() + at + 8 * i, 8);
      mix(i, w);
    }
  for (int i = 0; at < bytes.size(); at += 8, ++i) {
    uint64_t w = 0;
    std::memcpy(&w, bytes.data() + at, std::min<size_t>(8, bytes.size() - at));
    mix(i, w);
  }
  h.add(bytes.size());
  for (const uint64_t l : lane) h.add(l);
}

}  // namespace

Hash128 BlockPattern::structure_hash() const {
  auto bytes = [](const auto& v) {
    return std::string_view(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(v[0]));
  };
  StableHasher h;
  add_words(h, bytes(block_sizes_));
  add_words(h, bytes(row_begins_));
  add_words(h, bytes(cols_));
  return h.finish();
}

BlockPattern::LowerCsc BlockPattern::lower_csc() const {
  // Scalar row r of the stored upper triangle, read left to right, is column r of the lower
  // triangle top to bottom: the diagonal block from r's diagonal entry on, then the blocks
  // to its right, whose columns (rows of the lower triangle) are all larger.
  LowerCsc csc;
  csc.column_begin.reserve(dim() + 1);
  csc.column_begin.push_back(0);
  for (int i = 0; i < num_blocks(); ++i) {
    const int ri = block_sizes_[i];
    for (int a = 0; a < ri; ++a) {
      for (int64_t k = row_begin(i); k < row_end(i); ++k) {
        const int j = cols_[k], cj = block_sizes_[j];
        for (int b = (j == i ? a : 0); b < cj; ++b) {
          csc.row.push_back(scalar_offsets_[j] + b);
          csc.value_index.push_back(offsets_[k] + int64_t{a} * cj + b);
        }
      }
      csc.column_begin.push_back(static_cast<int64_t>(csc.row.size()));
    }
  }
  return csc;
}

BlockSparseSymmetric::BlockSparseSymmetric(std::vector<int> block_sizes,
                                           std::vector<std::pair<int, int>> pairs)
    : BlockSparseSymmetric(
          std::make_shared<const BlockPattern>(std::move(block_sizes), std::move(pairs))) {}

BlockSparseSymmetric::BlockSparseSymmetric(std::shared_ptr<const BlockPattern> pattern)
    : BlockSparseSymmetric(std::move(pattern), Uninitialized(0)) {
  set_zero();
}

BlockSparseSymmetric::BlockSparseSymmetric(std::shared_ptr<const BlockPattern> pattern, Uninitialized)
    : pattern_(std::move(pattern)) {
  if (!pattern_) throw std::invalid_argument("BlockSparseSymmetric: null pattern");
  values_.resize(pattern_->num_values());
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  std::fill(values_.begin(), values_.end(), std::numeric_limits<double>::quiet_NaN());
#endif
}

BlockSparseSymmetric BlockSparseSymmetric::uninitialized(std::shared_ptr<const BlockPattern> pattern) {
  return BlockSparseSymmetric(std::move(pattern), Uninitialized(0));
}

void BlockSparseSymmetric::set_zero() { std::fill(values_.begin(), values_.end(), 0.0); }

void BlockSparseSymmetric::add_to_block(int i, int j, const double* B) {
  const bool transposed = i > j;
  const int64_t offset = transposed ? find(j, i) : find(i, j);
  if (offset < 0)
    throw std::out_of_range("BlockSparseSymmetric::add_to_block: block (" + std::to_string(i) +
                            ", " + std::to_string(j) + ") is not in the pattern");
  const int ri = block_size(i), cj = block_size(j);
  double* stored = values_.data() + offset;
  for (int a = 0; a < ri; ++a)
    for (int b = 0; b < cj; ++b) {
      // Stored block is (min, max): row-major cj x ri when transposed.
      if (transposed)
        stored[int64_t{b} * ri + a] += B[int64_t{a} * cj + b];
      else
        stored[int64_t{a} * cj + b] += B[int64_t{a} * cj + b];
    }
}

namespace {
constexpr int kLocalColumns = 16;  // blocks this wide or narrower sum Bᵀx locally
constexpr int64_t kPrefetchBlocks = 8;
}  // namespace

void BlockSparseSymmetric::multiply(const double* x, double* y) const {
  const BlockPattern& p = *pattern_;
  std::fill(y, y + p.dim(), 0.0);
  for (int i = 0; i < p.num_blocks(); ++i) {
    const int ri = p.block_size(i);
    const double* xi = x + p.scalar_offset(i);
    double* yi = y + p.scalar_offset(i);
    int64_t k = p.row_begin(i);
    // Diagonal block: its upper triangle only, each off-diagonal entry used twice.
    const double* D = values_.data() + p.offset(k);
    for (int a = 0; a < ri; ++a) {
      double sum = D[int64_t{a} * ri + a] * xi[a];
      for (int b = a + 1; b < ri; ++b) {
        const double v = D[int64_t{a} * ri + b];
        sum += v * xi[b];
        yi[b] += v * xi[a];
      }
      yi[a] += sum;
    }
    for (++k; k < p.row_end(i); ++k) {
      const int j = p.col(k), cj = p.block_size(j);
      const double* B = values_.data() + p.offset(k);
      const double* xj = x + p.scalar_offset(j);
      double* yj = y + p.scalar_offset(j);
      if (k + kPrefetchBlocks < p.row_end(i)) {
        // xj and yj are where the column's variable is, which is nowhere predictable (a
        // camera's points), so their loads missed the caches: ask for them ahead.
        const int64_t ahead = p.scalar_offset(p.col(k + kPrefetchBlocks));
        __builtin_prefetch(x + ahead);
        __builtin_prefetch(y + ahead, 1);
      }
      // Bᵀxi summed in a local array and added to yj once (blocks up to kLocalColumns wide;
      // wider ones into yj directly): adding to yj entry by entry made each block wait on
      // loads and stores of yj, a random place in y (a bundle adjustment's points).
      double local[kLocalColumns];
      const bool summed_locally = cj <= kLocalColumns;
      double* t = summed_locally ? local : yj;
      if (summed_locally) std::fill(local, local + cj, 0.0);
      for (int a = 0; a < ri; ++a) {
        const double* Ba = B + int64_t{a} * cj;
        const double xa = xi[a];
        double sum = 0;
        for (int b = 0; b < cj; ++b) {
          sum += Ba[b] * xj[b];
          t[b] += Ba[b] * xa;
        }
        yi[a] += sum;
      }
      if (summed_locally)
        for (int b = 0; b < cj; ++b) yj[b] += t[b];
    }
  }
}

void BlockSparseSymmetric::diagonal(double* d) const {
  const BlockPattern& p = *pattern_;
  for (int i = 0; i < p.num_blocks(); ++i) {
    const int ri = p.block_size(i);
    const double* D = values_.data() + p.offset(p.row_begin(i));
    for (int a = 0; a < ri; ++a) d[p.scalar_offset(i) + a] = D[int64_t{a} * ri + a];
  }
}

Eigen::MatrixXd BlockSparseSymmetric::to_dense() const {
  const BlockPattern& p = *pattern_;
  Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(p.dim(), p.dim());
  for (int i = 0; i < p.num_blocks(); ++i) {
    const int ri = p.block_size(i);
    for (int64_t k = p.row_begin(i); k < p.row_end(i); ++k) {
      const int j = p.col(k), cj = p.block_size(j);
      const double* B = values_.data() + p.offset(k);
      for (int a = 0; a < ri; ++a)
        for (int b = (j == i ? a : 0); b < cj; ++b) {
          const int64_t r = p.scalar_offset(i) + a, c = p.scalar_offset(j) + b;
          dense(r, c) = dense(c, r) = B[int64_t{a} * cj + b];
        }
    }
  }
  return dense;
}

}  // namespace lsjit::linear
