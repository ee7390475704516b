// The layout pass of supernodal_layout.h, top to bottom: each supernode's row blocks, the
// panels they make, where A's blocks go in them, and the updates between them.
//
// It works on blocks, not scalar rows: a panel's rows are whole blocks (its own, then those
// below, increasing), so a block's panel row is found among a few dozen blocks, and a run
// of the update's rows advances by block sizes (by scalar rows it would binary-search
// every block's first row among a panel's rows).
#include "lsjit/runtime/solve/linear/supernodal_layout.h"

#include <algorithm>
#include <string>

#include "lsjit/common/error.h"

namespace lsjit::linear {
namespace {

// Each supernode's row blocks in one list: its own, then those below its columns.
struct RowBlocks {
  std::vector<int64_t> begin;  // num_supernodes + 1, into blocks
  std::vector<int> blocks;     // permuted blocks
  std::vector<int32_t> row;    // blocks[e]'s first row in its panel
};

class Layout {
 public:
  Layout(SupernodalAnalysis& a, const BlockPattern& p, const std::vector<int>& supernode_begin)
      : a_(a), p_(p), supernode_begin_(supernode_begin),
        num_supernodes_(static_cast<int>(supernode_begin.size()) - 1) {}

  void list_rows(const std::vector<int64_t>& below_begin, const std::vector<int>& below);
  void lay_out_panels();
  void place_blocks();
  void list_updates();

 private:
  int64_t size_of(int block) const { return p_.block_size(a_.block_perm[block]); }
  int64_t leading(int t) const { return a_.row_begin[t + 1] - a_.row_begin[t]; }
  int own_blocks(int t) const { return supernode_begin_[t + 1] - supernode_begin_[t]; }
  int32_t panel_row(int t, int block) const;
  void add_runs(int sn, int t, int64_t e, int64_t group_end, int64_t row);

  SupernodalAnalysis& a_;
  const BlockPattern& p_;
  const std::vector<int>& supernode_begin_;
  const int num_supernodes_;
  RowBlocks rows_;
};

void Layout::list_rows(const std::vector<int64_t>& below_begin, const std::vector<int>& below) {
  rows_.begin.assign(num_supernodes_ + 1, 0);
  rows_.blocks.reserve(static_cast<size_t>(p_.num_blocks()) + below.size());
  for (int sn = 0; sn < num_supernodes_; ++sn) {
    for (int j = supernode_begin_[sn]; j < supernode_begin_[sn + 1]; ++j) rows_.blocks.push_back(j);
    rows_.blocks.insert(rows_.blocks.end(), below.begin() + below_begin[sn], below.begin() + below_begin[sn + 1]);
    rows_.begin[sn + 1] = static_cast<int64_t>(rows_.blocks.size());
  }
}

// Supernode by supernode: its scalar rows (row_index), columns and panel.
void Layout::lay_out_panels() {
  int64_t total_rows = 0;
  for (const int block : rows_.blocks) total_rows += size_of(block);
  a_.supernode_of_block.resize(p_.num_blocks());
  a_.column_begin.assign(1, 0);
  a_.row_begin.assign(1, 0);
  a_.panel_offset.assign(1, 0);
  a_.row_index.reserve(total_rows);
  rows_.row.resize(rows_.blocks.size());
  for (int sn = 0; sn < num_supernodes_; ++sn) {
    const int first = supernode_begin_[sn], last = supernode_begin_[sn + 1];
    for (int j = first; j < last; ++j) a_.supernode_of_block[j] = sn;
    for (int64_t e = rows_.begin[sn]; e < rows_.begin[sn + 1]; ++e) {
      rows_.row[e] = static_cast<int32_t>(static_cast<int64_t>(a_.row_index.size()) - a_.row_begin.back());
      for (int64_t r = a_.permuted_offset[rows_.blocks[e]], end = r + size_of(rows_.blocks[e]); r < end; ++r)
        a_.row_index.push_back(r);
    }
    const int64_t columns = a_.permuted_offset[last] - a_.permuted_offset[first];
    const int64_t rows = static_cast<int64_t>(a_.row_index.size()) - a_.row_begin.back();
    a_.column_begin.push_back(a_.permuted_offset[last]);
    a_.row_begin.push_back(static_cast<int64_t>(a_.row_index.size()));
    a_.panel_offset.push_back(a_.panel_offset.back() + rows * columns);
    a_.stored_entries += columns * (columns + 1) / 2.0 + columns * double(rows - columns);
    a_.max_rows = std::max(a_.max_rows, rows);
    a_.max_below_rows = std::max(a_.max_below_rows, rows - columns);
  }
}

// The panel row of `block` in supernode t's rows, -1 when it is not one of them: its own
// columns by offset, a block below by a search among t's blocks below.
int32_t Layout::panel_row(int t, int block) const {
  if (a_.supernode_of_block[block] == t)
    return static_cast<int32_t>(a_.permuted_offset[block] - a_.column_begin[t]);
  const auto first = rows_.blocks.begin() + rows_.begin[t] + own_blocks(t);
  const auto end = rows_.blocks.begin() + rows_.begin[t + 1];
  const auto found = std::lower_bound(first, end, block);
  return found != end && *found == block ? rows_.row[found - rows_.blocks.begin()] : -1;
}

// A's blocks: (i, j) stored with i <= j; the one eliminated first is L's column.
void Layout::place_blocks() {
  a_.block_target.resize(p_.num_stored_blocks());
  for (int i = 0; i < p_.num_blocks(); ++i)
    for (int64_t k = p_.row_begin(i); k < p_.row_end(i); ++k) {
      const int pi = a_.block_position[i], pj = a_.block_position[p_.col(k)];
      const int column_block = std::min(pi, pj), row_block = std::max(pi, pj);
      const int t = a_.supernode_of_block[column_block];
      const int64_t column = a_.permuted_offset[column_block] - a_.column_begin[t];
      const int32_t row = panel_row(t, row_block);
      if (row < 0)
        throw Error("supernodal analysis: A's block (" + std::to_string(i) + ", " +
                    std::to_string(p_.col(k)) + ") has no row in supernode " + std::to_string(t));
      const auto placement = pi == pj  ? SupernodalAnalysis::Placement::Diagonal
                             : pi < pj ? SupernodalAnalysis::Placement::Direct
                                       : SupernodalAnalysis::Placement::Transposed;
      a_.block_target[k] = {a_.panel_offset[t] + column * leading(t) + row, leading(t), placement};
    }
}

// The runs of update (sn -> t) whose workspace rows start at `row`: sn's blocks below from
// e on (t's own columns up to group_end, then the rest), each on t's panel row for it,
// found by walking t's blocks below alongside (both lists increase).
void Layout::add_runs(int sn, int t, int64_t e, int64_t group_end, int64_t row) {
  const int64_t below_end = rows_.begin[sn + 1];
  const int64_t first_run = static_cast<int64_t>(a_.runs.size());
  int64_t walk = rows_.begin[t] + own_blocks(t);
  for (int64_t f = e; f < below_end; ++f) {
    const int block = rows_.blocks[f];
    const int64_t length = size_of(block);
    int32_t target;
    if (f < group_end) {
      target = static_cast<int32_t>(a_.permuted_offset[block] - a_.column_begin[t]);
    } else {
      while (walk < rows_.begin[t + 1] && rows_.blocks[walk] != block) ++walk;
      if (walk == rows_.begin[t + 1])
        throw Error("supernodal analysis: block " + std::to_string(block) + " below supernode " +
                    std::to_string(sn) + " is not among the rows of its ancestor " + std::to_string(t));
      target = rows_.row[walk];
    }
    if (static_cast<int64_t>(a_.runs.size()) > first_run) {
      auto& run = a_.runs.back();
      if (run.source_row + run.length == row && run.target_row + run.length == target) {
        run.length += static_cast<int32_t>(length);
        row += length;
        continue;
      }
    }
    a_.runs.push_back({static_cast<int32_t>(row), target, static_cast<int32_t>(length)});
    row += length;
  }
}

// The updates: supernode sn's blocks below, grouped by the ancestor t owning them. The
// update of t covers the workspace rows from t's first block down.
void Layout::list_updates() {
  a_.update_begin.assign(1, 0);
  // Every update and every run holds at least one block below a supernode.
  const size_t blocks_below = rows_.blocks.size() - static_cast<size_t>(p_.num_blocks());
  a_.updates.reserve(blocks_below);
  a_.runs.reserve(blocks_below);
  for (int sn = 0; sn < num_supernodes_; ++sn) {
    const int64_t below_end = rows_.begin[sn + 1];
    int64_t source = 0;  // workspace row of block e
    for (int64_t e = rows_.begin[sn] + own_blocks(sn); e < below_end;) {
      const int t = a_.supernode_of_block[rows_.blocks[e]];
      SupernodalAnalysis::Update u{t, static_cast<int32_t>(source), 0, static_cast<int64_t>(a_.runs.size()), 0};
      int64_t group_end = e, last = source;
      while (group_end < below_end && a_.supernode_of_block[rows_.blocks[group_end]] == t)
        last += size_of(rows_.blocks[group_end++]);
      u.last = static_cast<int32_t>(last);
      add_runs(sn, t, e, group_end, source);
      u.run_end = static_cast<int64_t>(a_.runs.size());
      a_.updates.push_back(u);
      source = last;
      e = group_end;
    }
    a_.update_begin.push_back(static_cast<int64_t>(a_.updates.size()));
  }
}

}  // namespace

void lay_out_supernodes(SupernodalAnalysis& a, const BlockPattern& p,
                        const std::vector<int>& supernode_begin,
                        const std::vector<int64_t>& below_begin, const std::vector<int>& below) {
  Layout layout(a, p, supernode_begin);
  layout.list_rows(below_begin, below);
  layout.lay_out_panels();
  layout.place_blocks();
  layout.list_updates();
}

}  // namespace lsjit::linear
